import { assertEquals } from "../../helpers/assert.ts";
import { formatSkillsListing, type SkillListingEntry } from "../../../lib/agent/skills_listing.ts";

const skill = (
  name: string,
  scope: SkillListingEntry["scope"],
  description = `${name} does things`,
): SkillListingEntry => ({ name, description, path: `/s/${scope}/${name}/SKILL.md`, scope });

Deno.test("no skills → placeholder", () => {
  assertEquals(formatSkillsListing([]), "No skills found.");
});

Deno.test("grouped by scope in precedence order, sorted by name, empty groups omitted", () => {
  const text = formatSkillsListing([
    skill("zeta", "builtin"),
    skill("beta", "user"),
    skill("alpha", "user"),
    skill("proj", "project"),
  ]);
  assertEquals(
    text,
    [
      "### Project",
      "- proj",
      "  - Path: /s/project/proj/SKILL.md",
      "  - Description: proj does things",
      "",
      "### User",
      "- alpha",
      "  - Path: /s/user/alpha/SKILL.md",
      "  - Description: alpha does things",
      "- beta",
      "  - Path: /s/user/beta/SKILL.md",
      "  - Description: beta does things",
      "",
      "### Built-in",
      "- zeta",
      "  - Path: /s/builtin/zeta/SKILL.md",
      "  - Description: zeta does things",
    ].join("\n"),
  );
});

Deno.test("extra scope sits between User and Built-in", () => {
  assertEquals(
    formatSkillsListing([skill("b", "builtin"), skill("e", "extra")]),
    "### Extra\n- e\n  - Path: /s/extra/e/SKILL.md\n  - Description: e does things\n\n" +
      "### Built-in\n- b\n  - Path: /s/builtin/b/SKILL.md\n  - Description: b does things",
  );
});
