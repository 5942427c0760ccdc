import { assert, assertEquals } from "../../helpers/assert.ts";
import { formatSkillsListing } from "../../../lib/agent/skills_listing.ts";
import {
  builtinSkills,
  discoverSkills,
  findSkill,
  loadSkills,
  resolveSkillsRoots,
} from "../../../lib/skills/discovery.ts";
import {
  fallbackDescription,
  NO_DESCRIPTION,
  parseSkillText,
  readSkillText,
} from "../../../lib/skills/skill.ts";
import { skillCommands, skillPrompt } from "../../../lib/soul/commands/skills.ts";
import { loadYaml } from "../../../lib/assets/yaml.ts";

// parseSkillText parses frontmatter that is not built in with the `yaml` package, which
// discovery loads before reading skill files; these tests call it directly.
await loadYaml();

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, text);
}

const skillMd = (name: string, description: string, body = "") =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

async function withTmp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi-skills-" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("frontmatter: name/description/type, defaults and fallback description", () => {
  const src = { defaultName: "dir-name", path: "/x/SKILL.md", scope: "user" as const };
  assertEquals(parseSkillText(skillMd("alpha", "Alpha does it"), src), {
    name: "alpha",
    description: "Alpha does it",
    type: "standard",
    path: "/x/SKILL.md",
    scope: "user",
    flow: null,
  });
  assertEquals(parseSkillText("# No frontmatter\nbody", src).name, "dir-name");
  assertEquals(parseSkillText("# No frontmatter\nbody", src).description, "# No frontmatter");
  assertEquals(
    parseSkillText("---\nname: n\n---\n\n\n  First line  \n", src).description,
    "First line",
  );
  assertEquals(parseSkillText("---\n---\n", src).description, NO_DESCRIPTION);
  const long = "x".repeat(300);
  const d = fallbackDescription(long)!;
  assertEquals(d.length, 240);
  assert(d.endsWith("…"));
  assertEquals(fallbackDescription("y".repeat(240)), "y".repeat(240));
});

Deno.test("frontmatter: invalid YAML, non-mapping, or unknown type → skill rejected", () => {
  const src = { defaultName: "d", path: "/p", scope: "user" as const };
  for (
    const text of ["---\nname: [oops\n---\n", "---\n- a\n- b\n---\n", "---\ntype: magic\n---\n"]
  ) {
    let threw = false;
    try {
      parseSkillText(text, src);
    } catch {
      threw = true;
    }
    assert(threw, text);
  }
});

Deno.test("flow skills: parsed flow; a broken diagram demotes to standard", () => {
  const src = { defaultName: "f", path: "/p", scope: "project" as const };
  const ok = parseSkillText(
    "---\ntype: flow\n---\n```mermaid\nflowchart TD\nBEGIN([BEGIN]) --> A[Hello]\nA --> END([END])\n```\n",
    src,
  );
  assertEquals(ok.type, "flow");
  assertEquals(ok.flow?.beginId, "BEGIN");
  const broken = parseSkillText("---\ntype: flow\n---\n```mermaid\nA --> B\n```\n", src);
  assertEquals(broken.type, "standard");
  assertEquals(broken.flow, null);
});

Deno.test("one root: subdir SKILL.md wins over a flat file of the same name; SKILL.md itself skipped", async () => {
  await withTmp(async (dir) => {
    await write(`${dir}/r/deploy/SKILL.md`, skillMd("deploy", "From the dir"));
    await write(`${dir}/r/deploy.md`, "Flat deploy");
    await write(`${dir}/r/lint.md`, "Lint everything\nmore");
    await write(`${dir}/r/SKILL.md`, "not a skill");
    await write(`${dir}/r/nodir/README.md`, "no SKILL.md here");
    await write(`${dir}/r/notes.txt`, "ignored");
    const skills = await discoverSkills({ dir: `${dir}/r`, scope: "user" });
    assertEquals(skills.map((s) => [s.name, s.description, s.path]), [
      ["deploy", "From the dir", `${dir}/r/deploy/SKILL.md`],
      ["lint", "Lint everything", `${dir}/r/lint.md`],
    ]);
  });
});

Deno.test("precedence: project > user > extra_skill_dirs > plugins > built-in, case-insensitive", async () => {
  await withTmp(async (dir) => {
    const home = `${dir}/home`;
    const project = `${dir}/project`;
    const work = `${project}/sub`;
    const share = `${home}/.kimi`;
    await Deno.mkdir(`${project}/.git`, { recursive: true });
    await Deno.mkdir(work, { recursive: true });
    await write(`${project}/.kimi/skills/shared/SKILL.md`, skillMd("shared", "project kimi"));
    await write(`${project}/.claude/skills/claude-only/SKILL.md`, skillMd("claude-only", "pc"));
    await write(`${project}/.agents/skills/Shared/SKILL.md`, skillMd("SHARED", "generic"));
    await write(`${home}/.kimi/skills/mine/SKILL.md`, skillMd("mine", "user kimi"));
    await write(`${home}/.kimi/skills/shared/SKILL.md`, skillMd("shared", "user"));
    await write(`${home}/.config/agents/skills/generic/SKILL.md`, skillMd("generic", "ug"));
    await write(`${home}/.agents/skills/second/SKILL.md`, skillMd("second", "not used"));
    await write(`${dir}/extra/kimi-cli-help/SKILL.md`, skillMd("kimi-cli-help", "overridden"));
    await write(`${project}/rel-extra/rel/SKILL.md`, skillMd("rel", "relative extra"));
    await write(`${share}/plugins/plug/SKILL.md`, skillMd("plug", "plugin"));
    const opts = {
      workDir: work,
      home,
      shareDir: share,
      extraDirs: [`${dir}/extra`, "rel-extra", "missing-dir"],
    };
    const skills = await loadSkills(opts);
    const view = Object.fromEntries(skills.map((s) => [s.name, [s.scope, s.description]]));
    assertEquals(view, {
      "claude-only": ["project", "pc"],
      generic: ["user", "ug"],
      "kimi-cli-help": ["extra", "overridden"],
      mine: ["user", "user kimi"],
      plug: ["extra", "plugin"],
      rel: ["extra", "relative extra"],
      shared: ["project", "project kimi"],
      "skill-creator": ["builtin", view["skill-creator"][1]],
    });
    assertEquals(findSkill(skills, "SHARED")?.description, "project kimi");

    const roots = await resolveSkillsRoots(opts);
    assertEquals(roots, [
      { dir: `${project}/.kimi/skills`, scope: "project" },
      { dir: `${project}/.claude/skills`, scope: "project" },
      { dir: `${project}/.agents/skills`, scope: "project" },
      { dir: `${home}/.kimi/skills`, scope: "user" },
      { dir: `${home}/.config/agents/skills`, scope: "user" },
      { dir: `${dir}/extra`, scope: "extra" },
      { dir: `${project}/rel-extra`, scope: "extra" },
      { dir: `${share}/plugins`, scope: "extra" },
    ]);
    // merge_all_available_skills = false: only the first existing brand dir.
    const firstOnly = await resolveSkillsRoots({ ...opts, mergeAllAvailable: false });
    assertEquals(firstOnly.slice(0, 2).map((r) => r.dir), [
      `${project}/.kimi/skills`,
      `${project}/.agents/skills`,
    ]);
  });
});

Deno.test("--skills-dir replaces project and user discovery; dedup by resolved path", async () => {
  await withTmp(async (dir) => {
    const home = `${dir}/home`;
    await write(`${home}/.kimi/skills/mine/SKILL.md`, skillMd("mine", "user"));
    await write(`${dir}/work/.kimi/skills/proj/SKILL.md`, skillMd("proj", "project"));
    await write(`${dir}/cli/one/SKILL.md`, skillMd("one", "from cli"));
    await Deno.symlink(`${dir}/cli`, `${dir}/cli-link`);
    const opts = {
      workDir: `${dir}/work`,
      home,
      shareDir: `${home}/.kimi`,
      skillsDirs: [`${dir}/cli`, `${dir}/cli-link`],
      extraDirs: [`${dir}/cli`],
    };
    assertEquals(await resolveSkillsRoots(opts), [{ dir: `${dir}/cli`, scope: "extra" }]);
    const names = (await loadSkills(opts)).map((s) => `${s.scope}:${s.name}`);
    assertEquals(names, ["builtin:kimi-cli-help", "extra:one", "builtin:skill-creator"]);
  });
});

Deno.test("built-in skills are embedded and readable; listing text", async () => {
  const builtins = builtinSkills();
  assertEquals(builtins.map((s) => [s.name, s.path, s.scope]), [
    ["kimi-cli-help", "builtin:skills/kimi-cli-help/SKILL.md", "builtin"],
    ["skill-creator", "builtin:skills/skill-creator/SKILL.md", "builtin"],
  ]);
  const text = await readSkillText(builtins[0]);
  assert(text?.startsWith("---\nname: kimi-cli-help\n"));
  assertEquals(text, text?.trim());

  const listing = formatSkillsListing([
    ...builtins,
    {
      name: "deploy",
      description: "Ship it.",
      path: "/repo/.kimi/skills/deploy/SKILL.md",
      scope: "project",
    },
  ]);
  assertEquals(
    listing,
    [
      "### Project",
      "- deploy",
      "  - Path: /repo/.kimi/skills/deploy/SKILL.md",
      "  - Description: Ship it.",
      "",
      "### Built-in",
      "- kimi-cli-help",
      "  - Path: builtin:skills/kimi-cli-help/SKILL.md",
      `  - Description: ${builtins[0].description}`,
      "- skill-creator",
      "  - Path: builtin:skills/skill-creator/SKILL.md",
      `  - Description: ${builtins[1].description}`,
    ].join("\n"),
  );
});

Deno.test("skill commands: skill:* then flow:*, taken names skipped, prompt format", () => {
  const src = (name: string) => ({
    defaultName: name,
    path: `/s/${name}.md`,
    scope: "user" as const,
  });
  const flowSkill = parseSkillText(
    "---\ntype: flow\ndescription: F\n---\n```mermaid\nA([BEGIN]) --> B([END])\n```",
    src("f"),
  );
  const plain = parseSkillText("---\ndescription: P\n---\n", src("p"));
  const cmds = skillCommands([flowSkill, plain], ["skill:p"]);
  assertEquals(cmds.map((c) => [c.name, c.description, c.aliases]), [
    ["skill:f", "F", []],
    ["flow:f", "F", []],
  ]);
  assertEquals(skillPrompt("TEXT", "  do it  "), "TEXT\n\nUser request:\ndo it");
  assertEquals(skillPrompt("TEXT", "   "), "TEXT");
});
