/**
 * Evaluating approval rules against what a tool call is about. A shell line is split into its
 * commands and redirection targets and every part must be allowed for the line to be allowed;
 * deny wins over ask, ask over allow; a line that does not parse is never allowed.
 *
 * Also derives the rules a "for this session" / "always" answer grants: the command prefix
 * (`Shell(git status *)`), the edited file's folder (`Edit(src/*)`), the MCP tool.
 *
 * @module
 */
import { dirname, isAbsolute, join, normalize, relative, resolve } from "node:path";
import { lazyPackage } from "../lazy_import.ts";
import type { ApprovalSubject } from "../tooling/tool.ts";
import { canonicalPath } from "../tooling/workspace.ts";
import { formatRulePattern, type PermissionRule } from "./rules.ts";
import { parseShellLine, type ShellCommand } from "./shell_parse.ts";

type Matcher = (path: string) => boolean;
type Picomatch = (glob: string, opts?: { dot?: boolean }) => Matcher;

/**
 * picomatch, loaded by the first evaluation that has rules to match (it is CommonJS, whose
 * loader Deno sets up on first use: a run without rules never pays for it).
 */
let picomatch: Picomatch | null = null;

async function loadPicomatch(): Promise<Picomatch> {
  if (!picomatch) {
    const mod = await lazyPackage<{ default: Picomatch }>("picomatch");
    picomatch = mod.default;
  }
  return picomatch;
}

function matcher(glob: string): Matcher {
  if (!picomatch) throw new Error("picomatch is not loaded: evaluateRules loads it first");
  return picomatch(glob, { dot: true });
}

/** Tool name covering every file change (WriteFile, StrReplaceFile, shell redirections). */
export const EDIT_RULE_TOOL = "Edit";
/** Tool name covering every file read (ReadFile, ReadMediaFile). */
export const READ_RULE_TOOL = "Read";

/** Where paths in rules are relative to. */
export interface RuleContext {
  /** Absolute work dir. */
  workDir: string;
  /** Home dir for `~/` patterns, when known. */
  home: string | null;
  /**
   * Files no rule or grant may allow writing (the rule files themselves: an agent must not
   * grant itself permissions); changing them always asks.
   */
  protectedPaths?: readonly string[];
}

/** One part of a call that rules are checked against. */
type Part =
  & (
    | { kind: "command"; command: ShellCommand }
    | {
      kind: "write";
      path: string | null;
      source: string;
      tools: readonly string[];
      /** A read of the file (file rules apply the same way; nothing is granted). */
      read?: boolean;
    }
    | { kind: "tool"; name: string }
  )
  & {
    /** Run inside a wrapper (`sudo`, `bash -c`): only deny and ask rules apply to it. */
    narrowOnly?: boolean;
  };

/** The outcome of evaluating rules. */
export type RuleVerdict =
  | { kind: "deny"; rule: PermissionRule; what: string }
  | { kind: "allow"; rules: PermissionRule[] }
  | {
    kind: "ask";
    /** The ask rule that forces the question, if any. */
    rule: PermissionRule | null;
    /** Why rules could not decide (unparsable line), if so. */
    unparsable: string | null;
    /** Patterns a "for this session" / "always" answer would allow (may be empty). */
    grant: string[];
  };

const commandRegexCache = new Map<string, RegExp>();

/** Whether a command's text matches a `Shell(...)` argument pattern. */
export function commandMatches(pattern: string, text: string): boolean {
  let re = commandRegexCache.get(pattern);
  if (!re) {
    const p = pattern.trim().replace(/\s+/g, " ");
    const optionalTail = p.endsWith(" *") && p.length > 2;
    const body = optionalTail ? p.slice(0, -2) : p;
    const src = body.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
    re = new RegExp(`^${src}${optionalTail ? "(?: .*)?" : ""}$`, "s");
    commandRegexCache.set(pattern, re);
  }
  return re.test(text.trim().replace(/[ \t]+/g, " "));
}

const globCache = new Map<string, Matcher>();

/** Whether an absolute path matches a path glob of a rule (picomatch loaded). */
function pathMatches(glob: string, path: string, ctx: RuleContext): boolean {
  let g = glob.trim();
  if ((g === "~" || g.startsWith("~/")) && ctx.home) g = join(ctx.home, g.slice(1));
  let subject: string;
  if (isAbsolute(g)) {
    subject = path;
  } else {
    const rel = relative(ctx.workDir, path);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return false;
    subject = rel;
  }
  let m = globCache.get(g);
  if (!m) {
    m = matcher(g);
    globCache.set(g, m);
  }
  return m(subject);
}

function toolMatches(ruleTool: string, name: string): boolean {
  if (ruleTool === name || ruleTool === "*") return true;
  if (!/[*?[{]/.test(ruleTool)) return false;
  return matcher(ruleTool)(name);
}

function partMatches(rule: PermissionRule, part: Part, ctx: RuleContext): boolean {
  switch (part.kind) {
    case "command":
      if (!toolMatches(rule.tool, "Shell")) return false;
      return rule.arg === null || commandMatches(rule.arg, part.command.text);
    case "write": {
      // A bare tool name covers every write of that tool (a bare `Shell`: redirections too).
      if (rule.arg === null) return part.tools.some((t) => toolMatches(rule.tool, t));
      if (!part.tools.some((t) => t !== "Shell" && toolMatches(rule.tool, t))) return false;
      // A target only known when the line runs matches no path rule (the line then asks).
      return part.path !== null && pathMatches(rule.arg, part.path, ctx);
    }
    case "tool":
      return toolMatches(rule.tool, part.name) && rule.arg === null;
  }
}

function describePart(part: Part): string {
  switch (part.kind) {
    case "command":
      return `\`${part.command.text}\``;
    case "write":
      return `${part.read ? "reading" : "writing"} \`${part.path ?? part.source}\``;
    case "tool":
      return `\`${part.name}\``;
  }
}

/**
 * Resolve a redirection target against the work dir, following symlinks as they are now (a
 * planted `notes.txt -> ~/.bashrc` is checked as `~/.bashrc`).
 */
function resolveWrite(path: string, ctx: RuleContext): string {
  if ((path === "~" || path.startsWith("~/")) && ctx.home) {
    return canonicalPath(join(ctx.home, path.slice(1)), ctx.workDir);
  }
  return canonicalPath(normalize(resolve(ctx.workDir, path)), ctx.workDir);
}

/** Programs that run other commands: a grant for them is the exact command, never a prefix. */
const WRAPPERS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "fish",
  "eval",
  "exec",
  "sudo",
  "doas",
  "su",
  "env",
  "xargs",
  "nohup",
  "timeout",
  "nice",
  "time",
  "command",
  "builtin",
  "source",
  ".",
  "ssh",
  "watch",
  "parallel",
]);

/** Programs whose second word names a subcommand (`git status`, `npm test`). */
const SUBCOMMAND_PROGRAMS = new Set([
  "git",
  "gh",
  "hg",
  "svn",
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "deno",
  "node",
  "cargo",
  "rustup",
  "go",
  "pip",
  "pip3",
  "uv",
  "poetry",
  "pipenv",
  "conda",
  "docker",
  "podman",
  "kubectl",
  "helm",
  "terraform",
  "make",
  "just",
  "task",
  "brew",
  "apt",
  "apt-get",
  "dnf",
  "yum",
  "pacman",
  "systemctl",
  "journalctl",
  "dotnet",
  "mvn",
  "gradle",
  "./gradlew",
  "sbt",
  "mix",
  "bundle",
  "rake",
  "rails",
  "composer",
  "swift",
  "flutter",
  "dart",
  "gcloud",
  "aws",
  "az",
  "nix",
  "stack",
  "cabal",
  "zig",
  "kimi",
]);

/**
 * The command prefix a session grant for this command covers: the program plus its
 * subcommand for tools that have them (`git status`, `npm test`), else just the program
 * (`ls`, `echo`), or null when only the exact command can be granted (wrappers like
 * `bash -c`, leading assignments, expansions).
 */
export function commandPrefix(cmd: ShellCommand): string | null {
  const [program, second] = cmd.words;
  if (!program || cmd.dynamicName || program.includes("=")) return null;
  if (WRAPPERS.has(program) || /[$`]/.test(program)) return null;
  if (
    SUBCOMMAND_PROGRAMS.has(program) && second !== undefined &&
    /^[A-Za-z][A-Za-z0-9_:.-]*$/.test(second)
  ) {
    return `${program} ${second}`;
  }
  return program;
}

/** The `Shell(...)` pattern a session grant of this command adds. */
export function commandGrant(cmd: ShellCommand): string {
  const prefix = commandPrefix(cmd);
  return formatRulePattern("Shell", prefix === null ? cmd.text : `${prefix} *`);
}

/** A path relative to the work dir when inside it, else absolute. */
function rulePath(path: string, ctx: RuleContext): string {
  const rel = relative(ctx.workDir, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}

/**
 * The `Edit(...)` pattern a session grant of a change to `path` adds: the files of its folder
 * (`Edit(src/lib/*)`, `Edit(*)` at the top of the work dir), not the folders below.
 */
export function fileGrant(path: string, ctx: RuleContext): string {
  const dir = dirname(path);
  if (dir === ctx.workDir) return formatRulePattern(EDIT_RULE_TOOL, "*");
  return formatRulePattern(EDIT_RULE_TOOL, `${rulePath(dir, ctx)}/*`);
}

/** Options of {@link evaluateRules}. */
export interface EvaluateOptions {
  /** Tool making the call. */
  sender: string;
  /** What the call is about. */
  subject: ApprovalSubject;
  /** Every rule in force (user, project, session). */
  rules: readonly PermissionRule[];
  /** Path context. */
  ctx: RuleContext;
}

/** Evaluate the rules for one call. */
export async function evaluateRules(opts: EvaluateOptions): Promise<RuleVerdict> {
  const { subject, rules, ctx } = opts;
  if (rules.length > 0) await loadPicomatch();
  const parts: Part[] = [];
  const grant: string[] = [];
  let unparsable: string | null = null;
  switch (subject.kind) {
    case "shell": {
      const parsed = await parseShellLine(subject.command);
      if (!parsed.ok) {
        unparsable = parsed.reason;
        // Still refuse what a deny rule names, matched against the whole line.
        parts.push({
          kind: "command",
          command: { text: subject.command, words: [], dynamic: true, dynamicName: true },
        });
        break;
      }
      for (const command of parsed.commands) parts.push({ kind: "command", command });
      for (const command of parsed.inner) {
        parts.push({ kind: "command", command, narrowOnly: true });
      }
      const writes = [
        ...parsed.writes.map((w) => ({ w, narrowOnly: false })),
        ...parsed.innerWrites.map((w) => ({ w, narrowOnly: true })),
      ];
      for (const { w, narrowOnly } of writes) {
        parts.push({
          kind: "write",
          path: w.path === null ? null : resolveWrite(w.path, ctx),
          source: w.source,
          tools: [EDIT_RULE_TOOL, "WriteFile", "Shell"],
          narrowOnly,
        });
      }
      break;
    }
    case "file":
      parts.push({
        kind: "write",
        path: subject.path,
        source: subject.path,
        tools: subject.access === "read" ? [READ_RULE_TOOL, opts.sender] : [
          EDIT_RULE_TOOL,
          opts.sender,
        ],
        read: subject.access === "read",
      });
      break;
    case "mcp":
      parts.push({ kind: "tool", name: `mcp:${subject.server}:${subject.tool}` });
      break;
    case "plugin":
      parts.push({ kind: "tool", name: `plugin:${subject.tool}` });
      break;
    case "tool":
      parts.push({ kind: "tool", name: opts.sender });
  }

  const deny = rules.filter((r) => r.decision === "deny");
  for (const part of parts) {
    const rule = deny.find((r) => partMatches(r, part, ctx));
    if (rule) return { kind: "deny", rule, what: describePart(part) };
  }
  const unknownWrite = parts.find((p) => p.kind === "write" && p.path === null && !p.narrowOnly);
  if (unknownWrite?.kind === "write") {
    unparsable = `the target of the redirection to \`${unknownWrite.source}\` is only known ` +
      "when the command runs";
  }
  if (unparsable !== null) return { kind: "ask", rule: null, unparsable, grant: [] };
  const ask = rules.filter((r) => r.decision === "ask");
  const allow = rules.filter((r) => r.decision === "allow");
  let askRule: PermissionRule | null = null;
  const allowedBy: PermissionRule[] = [];
  let needed = 0;
  for (const part of parts) {
    const partAsk = ask.find((r) => partMatches(r, part, ctx)) ?? null;
    askRule ??= partAsk;
    if (part.narrowOnly) continue;
    needed++;
    if (part.kind === "write" && part.path !== null && ctx.protectedPaths?.includes(part.path)) {
      continue; // never allowed by a rule, never granted
    }
    const allowRule = allow.find((r) => partMatches(r, part, ctx));
    if (allowRule) {
      allowedBy.push(allowRule);
      continue;
    }
    // A grant of a part an ask rule covers would not spare the question: offer none for it.
    const g = partAsk ? null : grantFor(part, ctx);
    if (g !== null && !grant.includes(g)) grant.push(g);
  }
  if (askRule === null && allowedBy.length === needed) {
    return { kind: "allow", rules: allowedBy };
  }
  return { kind: "ask", rule: askRule, unparsable: null, grant };
}

function grantFor(part: Part, ctx: RuleContext): string | null {
  switch (part.kind) {
    case "command":
      return commandGrant(part.command);
    case "write":
      if (part.path === null || part.read) return null;
      if (part.tools.includes("Shell")) {
        return formatRulePattern(EDIT_RULE_TOOL, rulePath(part.path, ctx));
      }
      return fileGrant(part.path, ctx);
    case "tool":
      return part.name;
  }
}
