/**
 * Approval rules (`[[permission.rules]]` in `config.toml`): `pattern = "Tool(argument)"` with
 * `decision = "allow" | "ask" | "deny"`, following Moonshot kimi-code's rule syntax with this
 * program's tool names:
 *
 * - `Shell(git status *)`: a command pattern (`*` matches anything; a trailing ` *` also
 *   matches the command with no further arguments), checked against every command of a line;
 * - `WriteFile(src/**)`, `StrReplaceFile(...)`, `Edit(...)`: path globs (relative to the work
 *   dir, absolute, or `~/`); `Edit` covers both file tools and shell redirections to files;
 * - `mcp:server:tool` (globs allowed, e.g. `mcp:github:*`): an MCP server's tool;
 * - `plugin:tool` (globs allowed, e.g. `plugin:*`): a plugin's tool;
 * - a bare tool name (`TaskStop`, `Shell`): every call of that tool.
 *
 * Loading never throws: bad entries come back as problems with their file and line and are
 * left out.
 *
 * @module
 */

/** What a rule decides. */
export type RuleDecision = "allow" | "ask" | "deny";
/** Where a rule comes from. */
export type RuleScope = "user" | "project" | "session";

/** The decisions a rule may have. */
export const RULE_DECISIONS: readonly RuleDecision[] = ["allow", "ask", "deny"];

/** A parsed rule pattern. */
export interface RulePattern {
  /** Tool name or glob (`Shell`, `mcp:github:*`, `*`). */
  tool: string;
  /** The argument pattern between the parentheses, or null for a bare tool name. */
  arg: string | null;
}

/** A loaded rule. */
export interface PermissionRule extends RulePattern {
  /** The pattern as written. */
  pattern: string;
  /** Its decision. */
  decision: RuleDecision;
  /** Its scope. */
  scope: RuleScope;
  /** The file it was read from (`session` for session grants, `--config` for inline text). */
  source: string;
  /** 1-based line in `source`, when known. */
  line: number | null;
  /** Optional reason shown when the rule denies. */
  reason: string;
  /** Index in the source file's `permission.rules` list (null for session grants). */
  index: number | null;
}

/** A rule that was left out, and why. */
export interface RuleProblem {
  /** File of the rule. */
  source: string;
  /** 1-based line, when known. */
  line: number | null;
  /** What is wrong. */
  message: string;
}

/** kimi-code's tool names in rules, mapped to this program's (`Bash(rm *)` is `Shell(rm *)`). */
const TOOL_ALIASES: Readonly<Record<string, string>> = { Bash: "Shell", Write: "WriteFile" };

/** Parse `Tool(arg)` / `Tool`; returns an error message for a malformed pattern. */
export function parseRulePattern(pattern: string): RulePattern | string {
  const text = pattern.trim();
  if (!text) return "the pattern is empty";
  const open = text.indexOf("(");
  if (open === -1) {
    if (text.includes(")")) return `unbalanced ")" in "${pattern}"`;
    if (/\s/.test(text)) {
      return `"${pattern}" is not a tool name; write Tool(argument), e.g. Shell(git status *)`;
    }
    return { tool: text, arg: null };
  }
  if (!text.endsWith(")")) return `missing closing ")" in "${pattern}"`;
  const tool = text.slice(0, open).trim();
  if (!tool) return `missing tool name before "(" in "${pattern}"`;
  const arg = text.slice(open + 1, -1).trim();
  if (!arg) return `empty argument in "${pattern}"; leave out the parentheses to match every call`;
  return { tool, arg };
}

/** Build a rule pattern string. */
export function formatRulePattern(tool: string, arg: string | null): string {
  return arg === null ? tool : `${tool}(${arg})`;
}

/** Options of {@link rulesFromConfig}. */
export interface RulesFromConfigOptions {
  /** Scope of the rules. */
  scope: "user" | "project";
  /** File the data came from (for messages), or `--config`. */
  source: string;
  /** The file's text, to find line numbers. */
  text?: string | null;
}

/**
 * Rules from the `permission` value of a config document. Project rules may only narrow:
 * an `allow` there is reported and left out.
 */
export function rulesFromConfig(
  permission: unknown,
  opts: RulesFromConfigOptions,
): { rules: PermissionRule[]; problems: RuleProblem[] } {
  const rules: PermissionRule[] = [];
  const problems: RuleProblem[] = [];
  if (permission === undefined || permission === null) return { rules, problems };
  const lines = opts.text ? ruleLines(opts.text) : [];
  const problem = (line: number | null, message: string) =>
    problems.push({ source: opts.source, line, message });
  if (typeof permission !== "object" || Array.isArray(permission)) {
    problem(null, "`permission` must be a table with a `rules` list; no rules were loaded");
    return { rules, problems };
  }
  const list = (permission as Record<string, unknown>).rules;
  if (list === undefined) return { rules, problems };
  if (!Array.isArray(list)) {
    problem(null, "`permission.rules` must be a list of tables; no rules were loaded");
    return { rules, problems };
  }
  list.forEach((raw, index) => {
    const line = lines[index] ?? null;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
      problem(line, `rule ${index + 1} is not a table with \`pattern\` and \`decision\`; ignored`);
      return;
    }
    const entry = raw as Record<string, unknown>;
    if (typeof entry.pattern !== "string") {
      problem(line, `rule ${index + 1} has no \`pattern\` string; ignored`);
      return;
    }
    const decision = entry.decision;
    if (typeof decision !== "string" || !RULE_DECISIONS.includes(decision as RuleDecision)) {
      problem(
        line,
        `rule "${entry.pattern}": unknown decision ${
          JSON.stringify(decision ?? null)
        } (use "allow", "ask" or "deny"); ignored`,
      );
      return;
    }
    const parsed = parseRulePattern(entry.pattern);
    if (typeof parsed === "string") {
      problem(line, `rule "${entry.pattern}": ${parsed}; ignored`);
      return;
    }
    if (opts.scope === "project" && decision === "allow") {
      problem(
        line,
        `rule "${entry.pattern}": project rules may only ask or deny (a repository cannot ` +
          "grant itself permissions); ignored",
      );
      return;
    }
    rules.push({
      ...parsed,
      tool: TOOL_ALIASES[parsed.tool] ?? parsed.tool,
      pattern: entry.pattern.trim(),
      decision: decision as RuleDecision,
      scope: opts.scope,
      source: opts.source,
      line,
      reason: typeof entry.reason === "string" ? entry.reason : "",
      index,
    });
  });
  return { rules, problems };
}

/**
 * 1-based line of each entry of `permission.rules` in a TOML or JSON text: the
 * `[[permission.rules]]` headers when every entry has one, else the lines naming a `pattern`.
 */
export function ruleLines(text: string): number[] {
  const lines = text.split("\n");
  const headers: number[] = [];
  const patterns: number[] = [];
  lines.forEach((l, i) => {
    if (/^\s*\[\[\s*permission\s*\.\s*rules\s*\]\]/.test(l)) headers.push(i + 1);
    const re = /(^|[\s{,])"?pattern"?\s*[=:]/g;
    while (re.exec(l)) patterns.push(i + 1);
  });
  return headers.length > 0 ? headers : patterns;
}

/** Human form of where a rule is: `file:line` or the scope. */
export function ruleLocation(r: { source: string; line: number | null }): string {
  return r.line !== null ? `${r.source}:${r.line}` : r.source;
}
