/**
 * Built-in YAML (agent specs, skill frontmatter) is parsed at build time: runs that use only
 * built-ins never load the `yaml` package, and the embedded parse equals the library's.
 *
 * @module
 */
import { parse } from "yaml";
import { EMBEDDED_ASSETS, EMBEDDED_YAML } from "../../../lib/assets/embedded.gen.ts";
import { parseYaml } from "../../../lib/assets/yaml.ts";
import { splitFrontmatter } from "../../../lib/skills/skill.ts";
import { probeModules } from "../../../scripts/bench/module_probe.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { kimiSandbox, MAIN_TS, sandboxEnv } from "../../helpers/kimi_process.ts";

Deno.test("yaml: every built-in agent spec and skill frontmatter is embedded pre-parsed, equal to yaml.parse", () => {
  let n = 0;
  for (const [path, text] of Object.entries(EMBEDDED_ASSETS)) {
    const yamlText = /\.ya?ml$/.test(path) ? text : splitFrontmatter(text)[0];
    if (yamlText === null) continue;
    assert(Object.hasOwn(EMBEDDED_YAML, yamlText), `${path} is not pre-parsed`);
    assertEquals(EMBEDDED_YAML[yamlText], parse(yamlText), path);
    n++;
  }
  assert(n >= 6, `only ${n} YAML texts found`);
});

Deno.test("yaml: each parse of built-in YAML is its own copy", async () => {
  const agentYaml = EMBEDDED_ASSETS["agents/default/agent.yaml"];
  const a = await parseYaml(agentYaml) as Record<string, unknown>;
  a.version = "mutated";
  assertEquals(await parseYaml(agentYaml), parse(agentYaml));
});

Deno.test("yaml: a print run with only built-ins loads no yaml module; a user skill does", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: one", "text: two"]);
    const probe = (cwd: string) =>
      probeModules({
        scriptArgs: [MAIN_TS, "--config-file", config, "--print", "-p", "hi"],
        denoFlags: ["--no-prompt", "-A"],
        cwd,
        env: sandboxEnv(sb, { NO_COLOR: "1" }),
        repoRoot: new URL("../../..", import.meta.url).pathname.replace(/\/$/, ""),
      });
    const builtinOnly = await probe(sb.workDir);
    assertEquals(builtinOnly.code, 0);
    const yamlLoaded = (p: { npmPackages: string[] }) =>
      p.npmPackages.some((n) => n.startsWith("yaml@"));
    assertEquals(yamlLoaded(builtinOnly), false, builtinOnly.npmPackages.join(", "));
    assert(
      builtinOnly.npmPackages.some((n) => n.startsWith("zod@")),
      "the probe sees npm packages",
    );

    // Control: a project skill's frontmatter needs the parser.
    const skillDir = `${sb.workDir}/.kimi/skills/hello`;
    await Deno.mkdir(skillDir, { recursive: true });
    await Deno.writeTextFile(
      `${skillDir}/SKILL.md`,
      "---\nname: hello\ndescription: Hi\n---\nSay hi.\n",
    );
    const withSkill = await probe(sb.workDir);
    assertEquals(withSkill.code, 0);
    assertEquals(yamlLoaded(withSkill), true, withSkill.npmPackages.join(", "));
  } finally {
    await sb.cleanup();
  }
});
