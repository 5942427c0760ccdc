/**
 * Kimi-TS bundles (`kimi.plugin.json`) through main.ts: install, then a run loads the bundle's
 * skill, its MCP server (the project's MCP test server) and its system-prompt text; disabled,
 * none of it is loaded. A directory holding both manifests is refused.
 */
import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";

const FIXTURE = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("bundle: a kimi.plugin.json plugin brings its skill, MCP server and prompt text", async () => {
  const sb = await kimiSandbox();
  const mock = await startMockOpenAI();
  try {
    const dir = join(sb.root, "kit");
    await Deno.mkdir(join(dir, "skills", "kit-review"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "skills", "kit-review", "SKILL.md"),
      "---\nname: kit-review\ndescription: Review code the kit way.\n---\nReview carefully.\n",
    );
    await Deno.writeTextFile(
      join(dir, "kimi.plugin.json"),
      JSON.stringify({
        name: "kit",
        version: "2.0.0",
        description: "A bundle.",
        skills: "./skills",
        systemPrompt: "Kit rule: always answer in haiku.",
        sessionStart: { skill: "kit-review" },
        mcpServers: {
          tester: {
            command: Deno.execPath(),
            args: ["run", "-A", "--config", DENO_JSON, "--no-lock", FIXTURE],
          },
        },
        inject: { x: "api_key" },
      }),
    );
    const r = await sb.run(["plugin", "install", dir]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(
      r.stdout,
      "Installed plugin 'kit' v2.0.0\n  format: kimi.plugin.json (skills, agents, MCP servers)\n",
    );
    const info = await sb.run(["plugin", "info", "kit"]);
    assertStringIncludes(
      info.stdout,
      'Note:        "inject" is present but not supported by Kimi plugins (kimi.plugin.json)',
    );
    const list = await sb.run(["plugin", "list"]);
    assertEquals(list.stdout, "  kit v2.0.0 (bundle)\n");

    const config = await sb.openaiConfig(mock.url);
    mock.enqueue(
      { toolCalls: [{ id: "tc_1", name: "ping", arguments: '{"text":"hi"}' }] },
      { text: "done" },
    );
    const run = await sb.run(["--print", "--config-file", config, "--yolo", "-p", "go"]);
    assertEquals(run.code, 0, run.stderr);
    const first = mock.requests[0].body;
    const system = first.messages[0].content as string;
    assertStringIncludes(system, "kit-review");
    assertStringIncludes(
      system,
      "# Plugin: kit\n\nKit rule: always answer in haiku.\n\nStartup skill `kit-review`:\n\n" +
        "Review carefully.",
    );
    const names = first.tools.map((t: { function: { name: string } }) => t.function.name);
    assert(names.includes("ping"), names.join(","));
    const toolMsg = mock.requests[1].body.messages.find((m: { role: string }) => m.role === "tool");
    assertStringIncludes(JSON.stringify(toolMsg.content), "pong:hi");

    // disabled: no server, no prompt text (a new session)
    const off = await sb.run(["plugin", "disable", "kit"]);
    assertEquals(off.code, 0, off.stderr);
    mock.enqueue({ text: "done" });
    const again = await sb.run(["--print", "--config-file", config, "-p", "go"]);
    assertEquals(again.code, 0, again.stderr);
    const body = mock.requests.at(-1)!.body;
    assert(!(body.messages[0].content as string).includes("Kit rule"));
    assert(!body.tools.some((t: { function: { name: string } }) => t.function.name === "ping"));
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});

Deno.test("bundle: a plugin holding both manifests is refused with a precise error", async () => {
  const sb = await kimiSandbox();
  try {
    const dir = join(sb.root, "mixed");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(join(dir, "kimi.plugin.json"), '{"name": "mixed"}');
    await Deno.writeTextFile(join(dir, "plugin.json"), '{"name": "mixed", "version": "1"}');
    const r = await sb.run(["plugin", "install", dir]);
    assertEquals(r.code, 1);
    assertEquals(
      r.stderr.split("\n").filter((l) => l.startsWith("Error")),
      [
        `Error: ${dir} holds both plugin.json (a tool plugin) and kimi.plugin.json (a skill/MCP ` +
        "bundle); a plugin uses one format: remove one of the two manifests.",
      ],
    );
    const bad = join(sb.root, "BadName!");
    await Deno.mkdir(bad);
    await Deno.writeTextFile(join(bad, "kimi.plugin.json"), '{"name": "Bad Name!"}');
    const b = await sb.run(["plugin", "install", bad]);
    assertEquals(b.code, 1);
    assertStringIncludes(
      b.stderr,
      `Error: Cannot install plugin at ${bad}: name "Bad Name!" must match`,
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("bundle: a plugin's Markdown agent is a subagent type with its body as system prompt", async () => {
  const sb = await kimiSandbox();
  try {
    const dir = join(sb.root, "agents-kit");
    await Deno.mkdir(join(dir, "agents"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "agents", "reviewer.md"),
      "---\nname: kit-reviewer\ndescription: Reviews diffs strictly.\n---\n" +
        "You are the kit reviewer. Costs ${NOT_A_TEMPLATE_VAR} nothing.\n",
    );
    await Deno.writeTextFile(
      join(dir, "kimi.plugin.json"),
      JSON.stringify({ name: "agents-kit", version: "1.0.0" }),
    );
    const r = await sb.run(["plugin", "install", dir]);
    assertEquals(r.code, 0, r.stderr);
    const summary = "Summary: I reviewed nothing because this is a test of a plugin agent; " +
      "the review found no problems, no files were changed, and nothing is left for the " +
      "parent agent to do afterwards in this session at all.";
    const config = await sb.scriptedConfig([
      toolCallLine("tc-agent", "Agent", {
        description: "review",
        prompt: "Review the diff.",
        subagent_type: "kit-reviewer",
      }),
      `text: ${summary}`,
      "text: parent done",
    ]);
    const run = await sb.run(["--print", "--config-file", config, "--yolo", "-p", "go"]);
    assertEquals(run.code, 0, run.stderr);
    const [session] = await sb.sessionDirs();
    let sub = "";
    for await (const e of Deno.readDir(`${session}/subagents`)) {
      sub += await Deno.readTextFile(`${session}/subagents/${e.name}/context.jsonl`);
    }
    const system = sub.trim().split("\n").map((l) => JSON.parse(l)).find((m) =>
      m.role === "_system_prompt"
    );
    assertEquals(
      system?.content,
      "You are the kit reviewer. Costs ${NOT_A_TEMPLATE_VAR} nothing.",
    );
  } finally {
    await sb.cleanup();
  }
});
