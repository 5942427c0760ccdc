/**
 * One skill: a Markdown file (`<root>/<name>/SKILL.md`, or a flat `<root>/<name>.md`) with an
 * optional YAML frontmatter giving its `name`, `description` and `type` (reference §10).
 * Flow skills (`type: flow`) also carry the flow parsed from their first mermaid/d2 block.
 *
 * @module
 */
import type { SkillScope } from "../agent/skills_listing.ts";
import { readAsset } from "../assets/mod.ts";
import { parseYamlSync } from "../assets/yaml.ts";
import type { Flow } from "../flows/flow.ts";
import { parseFlowFromMarkdown } from "../flows/markdown.ts";
import { log } from "../log.ts";
import { isSecretFile } from "../tooling/sensitive.ts";
import type { ControlPath } from "../tooling/control_paths.ts";

/** Prefix of the paths of built-in skills (they are embedded, not files). */
export const BUILTIN_SKILL_PREFIX = "builtin:";

/** Description used when a skill gives none and has no body text. */
export const NO_DESCRIPTION = "No description provided.";

/** Longest fallback description (taken from the body), in characters. */
export const MAX_FALLBACK_DESCRIPTION = 240;

/** A discovered skill. */
export interface Skill {
  /** Name (frontmatter `name`, else the directory name or file stem). */
  name: string;
  /** One-line description. */
  description: string;
  /** `flow` only when the flow diagram parsed. */
  type: "standard" | "flow";
  /** The skill file, or `builtin:skills/<name>/SKILL.md` for a built-in skill. */
  path: string;
  /** Where it was found. */
  scope: SkillScope;
  /** The flow of a flow skill, else null. */
  flow: Flow | null;
}

/** The skill is unusable (bad frontmatter, unknown type); discovery skips it. */
export class InvalidSkillError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "InvalidSkillError";
  }
}

/** Split a leading `---` YAML frontmatter off: `[yaml, body]`, or `[null, text]` if none. */
export function splitFrontmatter(text: string): [string | null, string] {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines[0]?.trim() !== "---") return [null, text];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].trim() === "---") {
      return [lines.slice(1, i).join("\n"), lines.slice(i + 1).join("\n")];
    }
  }
  return [null, text];
}

/**
 * The frontmatter mapping of a skill text ({} when there is none). Frontmatter that is not
 * built in needs the YAML parser loaded first (`loadYaml()` in `lib/assets/yaml.ts`).
 *
 * @throws {InvalidSkillError} when the frontmatter is not valid YAML or not a mapping.
 */
export function parseFrontmatter(text: string): Record<string, unknown> {
  const [yaml] = splitFrontmatter(text);
  if (yaml === null) return {};
  let data: unknown;
  try {
    data = parseYamlSync(yaml);
  } catch (err) {
    throw new InvalidSkillError(`Invalid YAML frontmatter: ${(err as Error).message}`);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new InvalidSkillError("The frontmatter must be a YAML mapping");
  }
  return data as Record<string, unknown>;
}

/** First non-empty body line (after the frontmatter), at most 240 characters, or null. */
export function fallbackDescription(text: string): string | null {
  const [, body] = splitFrontmatter(text);
  for (const raw of body.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const chars = [...line];
    return chars.length > MAX_FALLBACK_DESCRIPTION
      ? chars.slice(0, MAX_FALLBACK_DESCRIPTION - 1).join("") + "…"
      : line;
  }
  return null;
}

function optionalString(fm: Record<string, unknown>, key: string): string | null {
  const v = fm[key];
  if (v === undefined || v === null || v === "") return null;
  if (typeof v === "string") return v.trim() || null;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new InvalidSkillError(`Frontmatter field \`${key}\` must be a string`);
}

/** Where a skill text came from. */
export interface SkillSource {
  /** Name to use when the frontmatter has none (directory name or file stem). */
  defaultName: string;
  /** Path recorded on the skill. */
  path: string;
  /** Scope recorded on the skill. */
  scope: SkillScope;
}

/**
 * Build a skill from its text. A flow skill whose diagram does not parse is logged and
 * demoted to a standard skill.
 *
 * @throws {InvalidSkillError} for a bad frontmatter or an unknown `type`.
 */
export function parseSkillText(text: string, source: SkillSource): Skill {
  const fm = parseFrontmatter(text);
  const name = optionalString(fm, "name") ?? source.defaultName;
  const description = optionalString(fm, "description") ?? fallbackDescription(text) ??
    NO_DESCRIPTION;
  const type = optionalString(fm, "type") ?? "standard";
  if (type !== "standard" && type !== "flow") {
    throw new InvalidSkillError(`Invalid skill type "${type}"`);
  }
  let flow: Flow | null = null;
  if (type === "flow") {
    try {
      flow = parseFlowFromMarkdown(text);
    } catch (err) {
      log("ERROR", "skills", `Failed to parse flow skill ${name}: ${(err as Error).message}`);
    }
  }
  return {
    name,
    description,
    type: flow ? "flow" : "standard",
    path: source.path,
    scope: source.scope,
    flow,
  };
}

/**
 * The skill's whole text, trimmed (frontmatter included), or null when it cannot be read or
 * leads to a secret (a sensitive name, `/proc`, one of the session's secret `controls`).
 */
export async function readSkillText(
  skill: Skill,
  controls: readonly ControlPath[] = [],
): Promise<string | null> {
  try {
    if (skill.path.startsWith(BUILTIN_SKILL_PREFIX)) {
      return readAsset(skill.path.slice(BUILTIN_SKILL_PREFIX.length)).trim();
    }
    if (isSecretFile(skill.path, controls)) {
      log("WARNING", "skills", `Refusing skill file ${skill.path}: it leads to a secret`);
      return null;
    }
    return (await Deno.readTextFile(skill.path)).trim();
  } catch (err) {
    log("WARNING", "skills", `Failed to read skill file ${skill.path}: ${(err as Error).message}`);
    return null;
  }
}

/** Name key for lookups: skill names are compared case-insensitively. */
export function skillKey(name: string): string {
  return name.toLowerCase();
}
