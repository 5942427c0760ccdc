/**
 * The saved approval rules in force for a run: the user's (`config.toml` or `--config-file`,
 * or `--config` text) and the project's (`.kimi/config.toml` in the work dir, ask/deny only),
 * with the problems found while loading them. Saving and removing rules edit the user's file.
 *
 * @module
 */
import { extname, join } from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import { appendRules, removeRule, type RuleEntry } from "./config_edit.ts";
import { type PermissionRule, type RuleProblem, rulesFromConfig } from "./rules.ts";

/** Project rules file, relative to the work dir. */
export const PROJECT_RULES_FILE = join(".kimi", "config.toml");

/** Where to load rules from. */
export interface RuleSetOptions {
  /** The user's config file (null: config from `--config` text). */
  userFile: string | null;
  /** The `permission` value of `--config` text, when there is no file. */
  inlinePermission?: unknown;
  /** Work dir (for the project file). */
  workDir: string;
  /** Called with the user file's `permission.rules` list after it was edited. */
  onUserRulesChanged?: (rules: unknown[]) => void;
}

async function readRulesFile(
  file: string,
  scope: "user" | "project",
): Promise<{ rules: PermissionRule[]; problems: RuleProblem[]; raw: unknown[] }> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { rules: [], problems: [], raw: [] };
    return {
      raw: [],
      rules: [],
      problems: [{
        source: file,
        line: null,
        message: `cannot read the file (${err instanceof Error ? err.message : err}); ` +
          "its rules were not loaded",
      }],
    };
  }
  let doc: Record<string, unknown>;
  try {
    doc = (extname(file).toLowerCase() === ".json" ? JSON.parse(text) : parseToml(text)) as Record<
      string,
      unknown
    >;
  } catch (err) {
    const line = err instanceof TomlError ? err.line : null;
    return {
      raw: [],
      rules: [],
      problems: [{
        source: file,
        line,
        message: "the file does not parse; its rules were not loaded",
      }],
    };
  }
  const perm = doc?.permission as { rules?: unknown } | undefined;
  const raw = Array.isArray(perm?.rules) ? perm.rules : [];
  return { ...rulesFromConfig(doc?.permission, { scope, source: file, text }), raw };
}

/** User and project rules, with load problems. */
export class PermissionRuleSet {
  #user: PermissionRule[] = [];
  #project: PermissionRule[] = [];
  #problems: RuleProblem[] = [];
  readonly #opts: RuleSetOptions;

  private constructor(opts: RuleSetOptions) {
    this.#opts = opts;
  }

  /** Load the rules. Never throws: unreadable files and bad rules become problems. */
  static async load(opts: RuleSetOptions): Promise<PermissionRuleSet> {
    const set = new PermissionRuleSet(opts);
    await set.reload();
    return set;
  }

  /** An empty set (no files). */
  static empty(workDir: string): PermissionRuleSet {
    return new PermissionRuleSet({ userFile: null, workDir });
  }

  /** Read the files again. */
  async reload(): Promise<void> {
    const problems: RuleProblem[] = [];
    if (this.#opts.userFile !== null) {
      const u = await readRulesFile(this.#opts.userFile, "user");
      this.#user = u.rules;
      problems.push(...u.problems);
    } else {
      const u = rulesFromConfig(this.#opts.inlinePermission, {
        scope: "user",
        source: "--config",
      });
      this.#user = u.rules;
      problems.push(...u.problems);
    }
    const p = await readRulesFile(this.projectFile, "project");
    this.#project = p.rules;
    problems.push(...p.problems);
    this.#problems = problems;
  }

  /** The user's config file, where saved rules go (null: none, e.g. `--config` text). */
  get userFile(): string | null {
    return this.#opts.userFile;
  }

  /** The project rules file. */
  get projectFile(): string {
    return join(this.#opts.workDir, PROJECT_RULES_FILE);
  }

  /** User rules, in file order. */
  get user(): readonly PermissionRule[] {
    return this.#user;
  }

  /** Project rules (ask/deny), in file order. */
  get project(): readonly PermissionRule[] {
    return this.#project;
  }

  /** Problems found while loading. */
  get problems(): readonly RuleProblem[] {
    return this.#problems;
  }

  /** User and project rules. */
  all(): PermissionRule[] {
    return [...this.#user, ...this.#project];
  }

  /** Append rules to the user's file and load them. */
  async save(entries: readonly RuleEntry[]): Promise<void> {
    if (this.#opts.userFile === null) {
      throw new Error(
        "rules cannot be saved: the configuration came from --config text, not a file",
      );
    }
    await appendRules(this.#opts.userFile, entries);
    await this.#userChanged();
  }

  async #userChanged(): Promise<void> {
    await this.reload();
    if (this.#opts.userFile !== null && this.#opts.onUserRulesChanged) {
      this.#opts.onUserRulesChanged((await readRulesFile(this.#opts.userFile, "user")).raw);
    }
  }

  /** Remove a user or project rule from its file; false when the file changed behind us. */
  async remove(rule: PermissionRule): Promise<boolean> {
    if (rule.index === null || (rule.scope !== "user" && rule.scope !== "project")) return false;
    if (rule.scope === "user" && this.#opts.userFile === null) return false;
    const ok = await removeRule(rule.source, rule.index, rule.pattern);
    if (rule.scope === "user") await this.#userChanged();
    else await this.reload();
    return ok;
  }

  /** Append an ask/deny rule to the project file. */
  async saveProject(entries: readonly RuleEntry[]): Promise<void> {
    if (entries.some((e) => e.decision === "allow")) {
      throw new Error("project rules may only ask or deny");
    }
    await Deno.mkdir(join(this.#opts.workDir, ".kimi"), { recursive: true });
    await appendRules(this.projectFile, entries);
    await this.reload();
  }
}
