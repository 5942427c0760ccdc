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
import type { ApprovalSubject } from "../tooling/tool.ts";
import { canonicalPath } from "../tooling/workspace.ts";
import { formatRulePattern, type PermissionRule } from "./rules.ts";
import { parseShellLine, type ShellCommand } from "./shell_parse.ts";
import { programName, SHELLS } from "./shell_wrappers.ts";

type Matcher = (path: string) => boolean;
type Picomatch = (glob: string, opts?: { dot?: boolean }) => Matcher;

/**
 * picomatch, loaded by the first evaluation that has rules to match (it is CommonJS, whose
 * loader Deno sets up on first use: a run without rules never pays for it).
 */
let picomatch: Picomatch | null = null;

async function loadPicomatch(): Promise<Picomatch> {
  if (!picomatch) {
    const mod = await import("picomatch") as unknown as { default: Picomatch };
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
    /**
     * Why the call may change a file that configures kimi's rules, hooks or MCP servers: no
     * rule or grant allows it.
     */
    control?: string;
  };

const commandRegexCache = new Map<string, RegExp>();

/** One element of a command pattern or a command text: a character or a wildcard. */
type Token = string | typeof ANY;
/** The wildcard token. */
const ANY: unique symbol = Symbol("any");

/**
 * The tokens of a `Shell(...)` argument pattern: `*` matches anything, `\*` is a literal star and
 * `\\` a literal backslash (how exact grants keep the stars of the approved command).
 */
function patternTokens(pattern: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\" && (pattern[i + 1] === "*" || pattern[i + 1] === "\\")) out.push(pattern[++i]);
    else out.push(c === "*" ? ANY : c);
  }
  return out;
}

function normalizePattern(pattern: string): { body: string; optionalTail: boolean } {
  const p = pattern.trim().replace(/\s+/g, " ");
  const optionalTail = p.endsWith(" *") && !p.endsWith("\\ *") && p.length > 2;
  return { body: optionalTail ? p.slice(0, -2) : p, optionalTail };
}

/** Whether a command's text matches a `Shell(...)` argument pattern. */
export function commandMatches(pattern: string, text: string): boolean {
  let re = commandRegexCache.get(pattern);
  if (!re) {
    const { body, optionalTail } = normalizePattern(pattern);
    const src = patternTokens(body).map((t) =>
      t === ANY ? ".*" : t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    ).join("");
    re = new RegExp(`^${src}${optionalTail ? "(?: .*)?" : ""}$`, "s");
    commandRegexCache.set(pattern, re);
  }
  return re.test(text.trim().replace(/[ \t]+/g, " "));
}

/** Escape a command text so that a pattern matches exactly it (`*` stays a star). */
export function exactPattern(text: string): string {
  return text.trim().replace(/[ \t]+/g, " ").replace(/[\\*]/g, "\\$&");
}

/** Whether some string matches both token sequences. */
function tokensIntersect(a: readonly Token[], b: readonly Token[]): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let r: boolean;
    if (i === a.length && j === b.length) r = true;
    else if (i < a.length && a[i] === ANY) r = go(i + 1, j) || (j < b.length && go(i, j + 1));
    else if (j < b.length && b[j] === ANY) r = go(i, j + 1) || (i < a.length && go(i + 1, j));
    else r = i < a.length && j < b.length && a[i] === b[j] && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

/** The tokens of a command's words: a word only known at run time is a wildcard. */
function commandTokens(words: readonly string[], dynamic: readonly boolean[], tail: boolean) {
  const out: Token[] = [];
  words.forEach((w, i) => {
    if (i > 0) out.push(" ");
    if (dynamic[i]) out.push(ANY);
    else for (const c of w.replace(/[ \t]+/g, " ")) out.push(c);
  });
  if (tail) out.push(ANY);
  return out;
}

/**
 * Whether a deny or ask pattern could match what the command runs: its words as written, and
 * with leading assignments dropped and the program's path reduced to its name
 * (`LC_ALL=C /usr/bin/touch x` runs `touch x`); a word only known at run time may be anything.
 */
export function commandMayMatch(pattern: string, cmd: ShellCommand): boolean {
  if (commandMatches(pattern, cmd.text)) return true;
  const { body, optionalTail } = normalizePattern(pattern);
  const alternatives = [patternTokens(body)];
  if (optionalTail) alternatives.push([...patternTokens(body), " ", ANY]);
  // An assignment word runs nothing: it is matched as written.
  const dynamic = cmd.wordDynamic.map((d, i) => d && i >= cmd.assignments);
  const forms: Token[][] = [commandTokens(cmd.words, dynamic, cmd.dynamicTail)];
  const words = cmd.words.slice(cmd.assignments);
  if (words.length > 0) {
    const named = [programName(words[0]), ...words.slice(1)];
    forms.push(commandTokens(named, cmd.wordDynamic.slice(cmd.assignments), cmd.dynamicTail));
  }
  return alternatives.some((p) => forms.some((f) => tokensIntersect(p, f)));
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

/**
 * Whether a rule covers a part. Allow rules match a command exactly as the shell reads it;
 * deny and ask rules (`narrow`) match whatever the command could run.
 */
function partMatches(
  rule: PermissionRule,
  part: Part,
  ctx: RuleContext,
  mode: "allow" | "narrow",
): boolean {
  switch (part.kind) {
    case "command":
      if (!toolMatches(rule.tool, "Shell")) return false;
      if (rule.arg === null) return true;
      return mode === "allow"
        ? commandMatches(rule.arg, part.command.exact)
        : commandMayMatch(rule.arg, part.command);
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

function expandTilde(path: string, ctx: RuleContext): string {
  if ((path === "~" || path.startsWith("~/")) && ctx.home) return join(ctx.home, path.slice(1));
  return path;
}

/**
 * Resolve a path of the line against a directory it may run in, following symlinks as they
 * are now (a planted `notes.txt -> ~/.bashrc` is checked as `~/.bashrc`).
 */
function resolveWrite(path: string, ctx: RuleContext, cwd: string = ctx.workDir): string {
  return canonicalPath(normalize(resolve(cwd, expandTilde(path, ctx))), ctx.workDir);
}

/** The directories the commands of a line may run in (`cd` moves them), or unknown. */
function workingDirs(cd: readonly (string | null)[], ctx: RuleContext) {
  let dirs = [ctx.workDir];
  let unknown = false;
  for (const target of cd) {
    if (target === null) {
      unknown = true;
      continue;
    }
    const next = dirs.map((d) => resolve(d, expandTilde(target, ctx)));
    dirs = [...new Set([...dirs, ...next])].slice(0, 32);
  }
  return { dirs, unknown };
}

/** Programs that write files named by their arguments (or run code that may). */
const WRITERS = new Set([
  "cp",
  "mv",
  "tee",
  "sed",
  "ln",
  "link",
  "truncate",
  "dd",
  "install",
  "rsync",
  "rm",
  "rmdir",
  "unlink",
  "touch",
  "shred",
  "tar",
  "unzip",
  "gunzip",
  "bunzip2",
  "unxz",
  "xz",
  "zip",
  "7z",
  "cpio",
  "patch",
  "perl",
  "awk",
  "gawk",
  "python",
  "python3",
  "node",
  "ruby",
  "curl",
  "wget",
  "sort",
  "split",
  "csplit",
  "mkdir",
  "chmod",
  "chown",
  "git",
  "ed",
  "ex",
  "vi",
  "vim",
  "nvim",
  "nano",
  "emacs",
  "find",
  "mktemp",
  "mkfifo",
  "mknod",
  "scp",
]);

/**
 * Why the line may change a protected file (the rules files, kimi's configuration): a word of
 * a command names it or a folder above it (or matches it as a glob), a file-writing program
 * takes a path only known when it runs, or a redirection writes it. Null when it cannot.
 */
async function protectedReason(
  parsed: Extract<Awaited<ReturnType<typeof parseShellLine>>, { ok: true }>,
  ctx: RuleContext,
  cwd: { dirs: string[]; unknown: boolean },
): Promise<string | null> {
  const list = ctx.protectedPaths ?? [];
  if (list.length === 0) return null;
  const stops = new Set(["/", ctx.workDir, ...(ctx.home ? [ctx.home] : [])]);
  const targets = list.flatMap((p) => {
    const out = [p];
    for (let d = dirname(p); !stops.has(d) && d !== dirname(d); d = dirname(d)) out.push(d);
    return out;
  });
  // A hard link to a protected file is that file under another name: compared by inode.
  const inodes = new Map<string, string>();
  for (const p of list) {
    const id = fileIdentity(p);
    if (id !== null) inodes.set(id, p);
  }
  const hits = (abs: string) =>
    list.find((p) => abs === p || abs.startsWith(p.endsWith("/") ? p : p + "/")) ??
      targets.find((t) => t === abs) ??
      (inodes.size > 0 ? inodes.get(fileIdentity(abs) ?? "") : undefined);
  const named = (what: string, path: string) =>
    `${what} \`${path}\`, which configures kimi's approval rules, hooks or MCP servers`;
  for (const cmd of [...parsed.commands, ...parsed.inner]) {
    const at = cmd.assignments;
    const program = programName(cmd.words[at] ?? "");
    const writer = WRITERS.has(program) || SHELLS.has(program);
    for (let i = at + 1; i < cmd.words.length; i++) {
      const word = cmd.words[i];
      if (cmd.wordDynamic[i]) {
        if (writer) {
          return `\`${program}\` gets a path only known when the line runs; it could be a ` +
            "file that configures kimi's approval rules, hooks or MCP servers";
        }
        continue;
      }
      const candidates = [word];
      const eq = /^[^=/]*=(.+)$/s.exec(word);
      if (eq) candidates.push(eq[1]);
      if (/^-[A-Za-z]./.test(word)) candidates.push(word.slice(2));
      for (const c of candidates) {
        const relativePath = !c.startsWith("/") && !c.startsWith("~");
        if (relativePath && cwd.unknown && writer) {
          return `\`${program}\` runs in a folder only known when the line runs; \`${c}\` ` +
            "could be a file that configures kimi's approval rules, hooks or MCP servers";
        }
        for (const dir of cwd.dirs) {
          if (cmd.wordGlob[i]) {
            const glob = normalize(resolve(dir, expandTilde(c, ctx)));
            await loadPicomatch(); // only a line with a glob pays for it
            const m = matcher(glob);
            const hit = targets.find((t) => m(t));
            if (hit) return named(`\`${cmd.text}\` may name`, hit);
            continue;
          }
          const hit = hits(resolveWrite(c, ctx, dir));
          if (hit) return named(`\`${cmd.text}\` names`, hit);
        }
      }
    }
  }
  for (const w of [...parsed.writes, ...parsed.innerWrites]) {
    if (w.path === null) continue;
    for (const dir of cwd.dirs) {
      const hit = hits(resolveWrite(w.path, ctx, dir));
      if (hit) return named("the line writes", hit);
    }
  }
  return null;
}

/** `dev:ino` of an existing regular file (symlinks followed), or null. */
function fileIdentity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    return info.isFile && info.ino !== null ? `${info.dev}:${info.ino}` : null;
  } catch {
    return null;
  }
}

/** Programs that run other commands: a grant for them is the exact command, never a prefix. */
const WRAPPERS = new Set([
  "eval",
  "exec",
  "sudo",
  "doas",
  "su",
  "runuser",
  "pkexec",
  "env",
  "xargs",
  "find",
  "nohup",
  "timeout",
  "nice",
  "ionice",
  "time",
  "command",
  "builtin",
  "source",
  ".",
  "ssh",
  "watch",
  "parallel",
  "trap",
  "alias",
  "hash",
  "enable",
  "flock",
  "script",
  "setsid",
  "stdbuf",
  "chroot",
  "unshare",
  "nsenter",
  "busybox",
  "strace",
  "ltrace",
  "taskset",
  "chrt",
  "fakeroot",
  "unbuffer",
  "coproc",
  // interpreters and editors of code given on the command line
  "node",
  "nodejs",
  "perl",
  "ruby",
  "php",
  "lua",
  "luajit",
  "Rscript",
  "awk",
  "gawk",
  "mawk",
  "nawk",
  "sed",
  "osascript",
  // builtins that change the shell itself
  "cd",
  "pushd",
  "popd",
  "declare",
  "typeset",
  "local",
  "export",
  "readonly",
  "unset",
  "set",
  "shopt",
  "read",
  "mapfile",
  "readarray",
  "getopts",
  "let",
  "printf",
]);

/** Programs whose second word names a subcommand (`git status`, `npm test`). */
const SUBCOMMAND_PROGRAMS = new Set([
  "gh",
  "hg",
  "svn",
  "npm",
  "pnpm",
  "yarn",
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

/** Deno subcommands a prefix grant may cover (`deno run`/`eval` run any code: exact only). */
const DENO_PREFIX_SUBCOMMANDS = new Set([
  "fmt",
  "lint",
  "check",
  "test",
  "task",
  "info",
  "doc",
  "bench",
  "outdated",
]);

/** Git subcommands a prefix grant may cover: none of their options runs another program. */
const GIT_PREFIX_SUBCOMMANDS = new Set([
  "status",
  "log",
  "diff",
  "show",
  "blame",
  "ls-files",
  "ls-tree",
  "rev-parse",
  "describe",
  "shortlog",
  "reflog",
  "cat-file",
  "whatchanged",
  "version",
  "add",
  "commit",
]);

/** Git options before the subcommand that a prefix grant may keep (`git -C dir status`). */
const GIT_SAFE_GLOBALS_WITH_VALUE = new Set(["-C"]);
const GIT_SAFE_GLOBALS = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--no-replace-objects",
]);

/** Whether a word is a plain subcommand name. */
const SUBCOMMAND = /^[A-Za-z][A-Za-z0-9_:.-]*$/;

/**
 * The command prefix a session grant for this command covers, as the shell reads it: the
 * program plus its subcommand for tools that have them (`git status`, `git -C sub status`,
 * `npm test`), else just the program (`ls`, `echo`); null when only the exact command can be
 * granted (wrappers, shells, interpreters, shell builtins, leading assignments, expansions,
 * git options that change what git runs).
 */
export function commandPrefix(cmd: ShellCommand): string | null {
  // Dynamic arguments are fine after a fixed prefix, but not in it.
  if (cmd.dynamicName || cmd.opaque !== null || cmd.assignments > 0) return null;
  const exact = cmd.exact.split(" ");
  const [program, second] = cmd.words;
  if (!program || cmd.wordDynamic[0] || cmd.wordGlob[0]) return null;
  const name = programName(program);
  if (WRAPPERS.has(name) || SHELLS.has(name) || /^(python|pypy)[\d.]*$/.test(name)) return null;
  const exactWord = (i: number) =>
    cmd.wordDynamic[i] || cmd.wordGlob[i] || exact.length !== cmd.words.length ? null : exact[i];
  if (name === "git") {
    let i = 1;
    while (i < cmd.words.length && cmd.words[i].startsWith("-")) {
      if (GIT_SAFE_GLOBALS_WITH_VALUE.has(cmd.words[i])) i += 2;
      else if (GIT_SAFE_GLOBALS.has(cmd.words[i])) i += 1;
      else return null;
    }
    const sub = cmd.words[i];
    if (sub === undefined) return null;
    if (!GIT_PREFIX_SUBCOMMANDS.has(sub)) return null;
    const parts: string[] = [];
    for (let j = 0; j <= i; j++) {
      const w = exactWord(j);
      if (w === null) return null;
      parts.push(w);
    }
    return parts.join(" ");
  }
  if (name === "deno") {
    return second !== undefined && DENO_PREFIX_SUBCOMMANDS.has(second) && !cmd.wordDynamic[1]
      ? `${program} ${second}`
      : null;
  }
  if (
    SUBCOMMAND_PROGRAMS.has(program) && second !== undefined && !cmd.wordDynamic[1] &&
    SUBCOMMAND.test(second)
  ) {
    return `${program} ${second}`;
  }
  return exactWord(0);
}

/** The `Shell(...)` pattern a session grant of this command adds, or null when none may. */
export function commandGrant(cmd: ShellCommand): string | null {
  if (cmd.dynamicName || cmd.opaque !== null) return null;
  const prefix = commandPrefix(cmd);
  return formatRulePattern(
    "Shell",
    prefix === null ? exactPattern(cmd.exact) : `${exactPattern(prefix)} *`,
  );
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

/**
 * A command standing for a whole line that could not be parsed: deny rules are matched against
 * its text; the line is then asked (and refused when approvals are automatic).
 */
function wholeLine(text: string): ShellCommand {
  return {
    text,
    exact: text,
    words: [text],
    wordDynamic: [false],
    wordGlob: [false],
    assignments: 0,
    dynamic: true,
    dynamicName: false,
    dynamicTail: false,
    opaque: null,
  };
}

/** Evaluate the rules for one call. */
export async function evaluateRules(opts: EvaluateOptions): Promise<RuleVerdict> {
  const { subject, rules, ctx } = opts;
  if (rules.length > 0) await loadPicomatch();
  const parts: Part[] = [];
  const grant: string[] = [];
  let unparsable: string | null = null;
  /** Why what the line runs is unknown: every Shell deny rule refuses it. */
  let unknownRun: string | null = null;
  /** Why no rule or grant may allow the line. */
  let hazard: string | null = null;
  let control: string | null = null;
  switch (subject.kind) {
    case "shell": {
      const parsed = await parseShellLine(subject.command);
      if (!parsed.ok) {
        unparsable = parsed.reason;
        // Bash may still run it (up to the error, or in a way this parser does not know):
        // every Shell deny rule refuses it.
        unknownRun = `the line does not parse: ${parsed.reason}`;
        parts.push({ kind: "command", command: wholeLine(subject.command) });
        break;
      }
      hazard = parsed.hazards[0] ?? null;
      unknownRun = hazard ?? parsed.opaque[0] ?? null;
      for (const command of parsed.commands) parts.push({ kind: "command", command });
      for (const command of parsed.inner) {
        parts.push({ kind: "command", command, narrowOnly: true });
      }
      const cwd = workingDirs(parsed.cd, ctx);
      const writes = [
        ...parsed.writes.map((w) => ({ w, narrowOnly: false })),
        ...parsed.innerWrites.map((w) => ({ w, narrowOnly: true })),
      ];
      for (const { w, narrowOnly } of writes) {
        const known = w.path !== null && (!cwd.unknown || /^[\/~]/.test(w.path));
        const paths = known ? [...new Set(cwd.dirs.map((d) => resolveWrite(w.path!, ctx, d)))] : [
          null,
        ];
        for (const path of paths) {
          parts.push({
            kind: "write",
            path,
            source: w.source,
            tools: [EDIT_RULE_TOOL, "WriteFile", "Shell"],
            narrowOnly,
          });
        }
      }
      control = await protectedReason(parsed, ctx, cwd);
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
    const rule = deny.find((r) => partMatches(r, part, ctx, "narrow"));
    if (rule) return { kind: "deny", rule, what: describePart(part) };
  }
  if (unknownRun !== null) {
    // Whatever a Shell deny rule names, the line could run it.
    const rule = deny.find((r) => toolMatches(r.tool, "Shell"));
    if (rule) {
      return {
        kind: "deny",
        rule,
        what: `${rule.arg === null ? "every command" : `\`${rule.arg}\``}, and this line ` +
          `could run it: what it runs cannot be told before it runs (${unknownRun})`,
      };
    }
  }
  const unknownWrite = parts.find((p) => p.kind === "write" && p.path === null && !p.narrowOnly);
  if (unknownWrite?.kind === "write") {
    unparsable = `the target of the redirection to \`${unknownWrite.source}\` is only known ` +
      "when the command runs";
  }
  unparsable ??= hazard;
  if (unparsable !== null) return { kind: "ask", rule: null, unparsable, grant: [] };
  const ask = rules.filter((r) => r.decision === "ask");
  const allow = rules.filter((r) => r.decision === "allow");
  let askRule: PermissionRule | null = null;
  const allowedBy: PermissionRule[] = [];
  let needed = 0;
  let ungrantable = false;
  for (const part of parts) {
    const partAsk = ask.find((r) => partMatches(r, part, ctx, "narrow")) ?? null;
    askRule ??= partAsk;
    if (part.narrowOnly) continue;
    needed++;
    if (part.kind === "write" && part.path !== null && ctx.protectedPaths?.includes(part.path)) {
      ungrantable = true;
      continue; // never allowed by a rule, never granted
    }
    const allowRule = allow.find((r) => partMatches(r, part, ctx, "allow"));
    if (allowRule) {
      allowedBy.push(allowRule);
      continue;
    }
    // A grant of a part an ask rule covers would not spare the question: offer none for it.
    if (partAsk) continue;
    const g = grantFor(part, ctx);
    if (g === null) ungrantable = true;
    else if (!grant.includes(g)) grant.push(g);
  }
  if (control !== null) {
    // Never allowed by a rule, never granted: the user sees the reason and answers once.
    return { kind: "ask", rule: askRule, unparsable: null, grant: [], control };
  }
  if (askRule === null && allowedBy.length === needed) {
    return { kind: "allow", rules: allowedBy };
  }
  // A grant that would not cover the whole call would not spare the next question either.
  return { kind: "ask", rule: askRule, unparsable: null, grant: ungrantable ? [] : grant };
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
