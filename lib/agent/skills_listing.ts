/**
 * `${KIMI_SKILLS}`: the skills available to the model, grouped by scope.
 *
 * Groups appear in precedence order `### Project`, `### User`, `### Extra`, `### Built-in`
 * (empty groups are left out), each listing its skills by name:
 *
 * ```
 * ### Project
 * - deploy
 *   - Path: /repo/.kimi/skills/deploy/SKILL.md
 *   - Description: Ship the service to staging.
 * ```
 *
 * Groups are separated by a blank line. With no skills the text is `No skills found.`.
 *
 * @module
 */
import * as z from "zod";

/** Where a skill was found, highest precedence first. */
export const SkillScope = z.enum(["project", "user", "extra", "builtin"]);
/** Where a skill was found. */
export type SkillScope = z.infer<typeof SkillScope>;

/** What the listing needs to know about one skill. */
export const SkillListingEntry = z.object({
  /** Skill name. */
  name: z.string(),
  /** One-line description. */
  description: z.string(),
  /** Absolute path of the skill's `SKILL.md` (or flat `.md` file). */
  path: z.string(),
  /** Scope it was discovered in. */
  scope: SkillScope,
});
/** What the listing needs to know about one skill. */
export type SkillListingEntry = z.infer<typeof SkillListingEntry>;

/** Text used when there are no skills. */
export const NO_SKILLS_TEXT = "No skills found.";

const HEADINGS: ReadonlyArray<[SkillScope, string]> = [
  ["project", "Project"],
  ["user", "User"],
  ["extra", "Extra"],
  ["builtin", "Built-in"],
];

function byName(a: SkillListingEntry, b: SkillListingEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The `${KIMI_SKILLS}` text for `skills` (see the module doc for the format). */
export function formatSkillsListing(skills: readonly SkillListingEntry[]): string {
  const groups: string[] = [];
  for (const [scope, heading] of HEADINGS) {
    const members = skills.filter((s) => s.scope === scope).sort(byName);
    if (members.length === 0) continue;
    const lines = [`### ${heading}`];
    for (const s of members) {
      lines.push(`- ${s.name}`, `  - Path: ${s.path}`, `  - Description: ${s.description}`);
    }
    groups.push(lines.join("\n"));
  }
  return groups.length > 0 ? groups.join("\n\n") : NO_SKILLS_TEXT;
}
