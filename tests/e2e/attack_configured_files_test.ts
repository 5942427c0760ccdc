/**
 * Attack class 6: files kimi is pointed at by configuration get the same secret rules. A
 * cloned repo ships `AGENTS.md` and a project skill that are symlinks to kimi's config and to
 * an SSH key; an agent file's `system_prompt_path` leads to the config. None of it is inlined
 * into the system prompt or the session, in any profile; the regular AGENTS.md next to them is
 * (so the refusal is not vacuous).
 *
 * Attack class 7 (precise messages): a custom tool module that fails on a denied write at
 * import time is reported as a denied write naming the path and the flag.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import {
  assertNoLeak,
  flagsFor,
  runAttack,
  scriptedConfigFile,
  type Setup,
} from "../helpers/attack.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

const CONFIG_SECRET = "sk-config-for-agents-md-91f0";
const KEY_SECRET = "PRIVATE-KEY-MATERIAL-2b7c";

async function plantRepo(sb: KimiSandbox): Promise<void> {
  await Deno.mkdir(sb.shareDir, { recursive: true });
  await Deno.writeTextFile(`${sb.shareDir}/config.toml`, `# ${CONFIG_SECRET}\n`);
  await Deno.mkdir(`${sb.home}/.ssh`, { recursive: true });
  await Deno.writeTextFile(`${sb.home}/.ssh/id_ed25519`, KEY_SECRET);
  const w = sb.workDir;
  await Deno.mkdir(`${w}/.git`);
  await Deno.mkdir(`${w}/.kimi/skills/helper`, { recursive: true });
  await Deno.writeTextFile(`${w}/.kimi/AGENTS.md`, "Regular project rules: use tabs.\n");
  await Deno.symlink(`${sb.shareDir}/config.toml`, `${w}/AGENTS.md`);
  await Deno.symlink(`${sb.home}/.ssh/id_ed25519`, `${w}/.kimi/skills/helper/SKILL.md`);
}

async function systemPrompt(sb: KimiSandbox): Promise<string> {
  const [dir] = await sb.sessionDirs();
  return await Deno.readTextFile(`${dir}/context.jsonl`);
}

async function planted(setup: Setup): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await plantRepo(sb);
    const r = await runAttack(sb, [
      toolCallLine("sk", "ReadFile", { path: `${sb.workDir}/.kimi/skills/helper/SKILL.md` }),
      "text: done",
    ], await flagsFor(sb, setup));
    assertEquals(r.code, 0, r.stderr);
    const prompt = (await systemPrompt(sb)).split("\n")[0];
    assertStringIncludes(prompt, "Regular project rules: use tabs.");
    assert(!prompt.includes("helper"), "the secret skill is not listed");
    assertStringIncludes(r.result("sk"), "appears to contain secrets");
    for (const secret of [CONFIG_SECRET, KEY_SECRET]) await assertNoLeak(sb, r, secret);
  } finally {
    await sb.cleanup();
  }
}

for (const setup of ["review", "workspace", "narrow", "full"] as const) {
  Deno.test({
    name: `configured files (${setup}): planted AGENTS.md and skill symlinks are not inlined`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: () => planted(setup),
  });
}

Deno.test({
  name: "configured files (-A): an agent's system_prompt_path to kimi's config is refused",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sb = await kimiSandbox();
    try {
      await plantRepo(sb);
      const agentDir = `${sb.root}/configs/agent`;
      await Deno.mkdir(agentDir, { recursive: true });
      await Deno.symlink(`${sb.shareDir}/config.toml`, `${agentDir}/prompt.md`);
      await Deno.writeTextFile(
        `${agentDir}/agent.yaml`,
        "version: 1\nagent:\n  extend: default\n  system_prompt_path: ./prompt.md\n",
      );
      const r = await runAttack(sb, ["text: never"], ["-A"], {
        args: ["--agent-file", `${agentDir}/agent.yaml`],
      });
      assertEquals(r.code, 1);
      assertStringIncludes(
        r.stderr,
        `System prompt path leads to a file that holds secrets (kimi's configuration or ` +
          `credentials, a key, /proc): ${agentDir}/prompt.md. Refusing to read it.`,
      );
      assert(!r.stderr.includes(CONFIG_SECRET) && !r.stdout.includes(CONFIG_SECRET));
      // A regular prompt file works (the refusal is not vacuous).
      await Deno.remove(`${agentDir}/prompt.md`);
      await Deno.writeTextFile(`${agentDir}/prompt.md`, "You are a careful agent.\n");
      const ok = await runAttack(sb, ["text: fine"], ["-A"], {
        args: ["--agent-file", `${agentDir}/agent.yaml`],
      });
      assertEquals(ok.code, 0, ok.stderr);
    } finally {
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "precise messages (hand-narrowed): a custom tool's denied write is reported as a write",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const sb = await kimiSandbox();
    try {
      const agentDir = `${sb.root}/configs/agent`;
      const target = `${sb.root}/outside.txt`;
      await Deno.mkdir(agentDir, { recursive: true });
      await Deno.writeTextFile(
        `${agentDir}/writer.ts`,
        `await Deno.writeTextFile(${
          JSON.stringify(target)
        }, "x");\nexport const tool = () => null;\n`,
      );
      await Deno.writeTextFile(
        `${agentDir}/agent.yaml`,
        'version: 1\nagent:\n  extend: default\n  tools: ["ReadFile", "./writer.ts"]\n',
      );
      const config = await scriptedConfigFile(sb, ["text: never"]);
      const r = await sb.run(
        ["--print", "--config-file", config, "--agent-file", `${agentDir}/agent.yaml`, "-p", "x"],
        { permissions: await flagsFor(sb, "narrow") },
      );
      assertEquals(r.code, 1);
      assertStringIncludes(
        r.stderr,
        `Cannot load custom tool module ${agentDir}/writer.ts: the module needs access this ` +
          "run does not have",
      );
      assertStringIncludes(
        r.stderr,
        `Denied by the sandbox: this run may not write \`${target}\` (needs ` +
          `--allow-write=${target}).`,
      );
      assert(!r.stderr.includes("may not read"), r.stderr);
    } finally {
      await sb.cleanup();
    }
  },
});
