import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

Deno.test("/add-dir, /export and /import through print mode", async () => {
  const sb = await kimiSandbox();
  try {
    const extra = `${sb.root}/extra`;
    await Deno.mkdir(`${extra}/sub`, { recursive: true });
    await Deno.writeTextFile(`${extra}/a.txt`, "A");
    await Deno.writeTextFile(`${sb.workDir}/notes.md`, "remember the milk");
    const config = await sb.scriptedConfig(["text: hello"]);
    const cmds = [
      "hi",
      "/add-dir",
      `/add-dir ${extra}`,
      "/add-dir",
      "/import notes.md",
      "/export out.md",
    ];
    const r = await sb.run([
      "--print",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
    ], { stdin: cmds.map((c) => JSON.stringify({ role: "user", content: c })).join("\n") + "\n" });
    assertEquals(r.code, 0, r.stderr);
    const says = jsonLines(r.stdout).map((m) => m.content);
    assertEquals(says[0], "hello");
    assertStringIncludes(says[1], "No additional directories.");
    assertEquals(says[2], `Added \`${extra}\` to the workspace.`);
    assertStringIncludes(says[3], `- ${extra}`);
    assertStringIncludes(says[4], "Imported the file");
    assertEquals(says[5], `Exported the conversation to \`${sb.workDir}/out.md\`.`);
    const md = await Deno.readTextFile(`${sb.workDir}/out.md`);
    assertStringIncludes(md, "## User\n\nhi");
    assertStringIncludes(md, "## Assistant\n\nhello");
    assertStringIncludes(md, "remember the milk");
    const [dir] = await sb.sessionDirs();
    const state = JSON.parse(await Deno.readTextFile(`${dir}/state.json`));
    assertEquals(state.additional_dirs, [extra]);
    const ctx = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    const injected = ctx.filter((c) => c.role === "user").map((c) => String(c.content));
    assert(injected.some((t) => t.includes(`The user added \`${extra}\``) && t.includes("a.txt")));
    assert(injected.some((t) => t.includes("remember the milk")));
  } finally {
    await sb.cleanup();
  }
});

Deno.test("/init runs a throwaway agent that writes AGENTS.md, then tells the conversation", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      `tool_call: ${
        JSON.stringify({
          id: "w1",
          name: "WriteFile",
          arguments: JSON.stringify({ path: "AGENTS.md", content: "# Guide\nRun `make test`.\n" }),
        })
      }`,
      "text: written",
    ]);
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "/init",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/AGENTS.md`), "# Guide\nRun `make test`.\n");
    const [dir] = await sb.sessionDirs();
    const ctx = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assertEquals(ctx.map((c) => c.role), ["_system_prompt", "user"]);
    assertStringIncludes(ctx[1].content, "The user just ran /init");
    assertStringIncludes(ctx[1].content, "Run `make test`.");
    const wire = (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n").slice(1).map((
      l,
    ) => JSON.parse(l).message.type);
    assertEquals(wire.filter((t) => t === "TurnBegin").length, 2);
    assertEquals(wire[wire.length - 1], "TurnEnd");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("/clear rotates the context, keeps the system prompt and reports 0 tokens", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: hello"]);
    await sb.run(["--print", "--config-file", config, "-p", "hi"]);
    const r = await sb.run(["--print", "--continue", "--config-file", config, "-p", "/clear"]);
    assertEquals(r.code, 0, r.stderr);
    const [dir] = await sb.sessionDirs();
    const wire = (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n").slice(6).map((
      l,
    ) => JSON.parse(l).message);
    assertEquals(wire, [
      { type: "TurnBegin", payload: { user_input: "/clear" } },
      { type: "ContentPart", payload: { type: "text", text: "The context has been cleared." } },
      {
        type: "StatusUpdate",
        payload: {
          context_usage: 0,
          context_tokens: 0,
          max_context_tokens: 100000,
          token_usage: null,
          message_id: null,
          plan_mode: null,
          mcp_status: null,
        },
      },
      { type: "TurnEnd", payload: {} },
    ]);
    const ctx = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l).role
    );
    assertEquals(ctx, ["_system_prompt"]);
    const old = (await Deno.readTextFile(`${dir}/context_1.jsonl`)).trim().split("\n");
    assertEquals(old.length, 5);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("/yolo and /afk toggle and persist in state.json", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: hello"]);
    const cmds = ["hi", "/yolo", "/afk", "/afk", "/yolo"];
    const r = await sb.run([
      "--print",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
    ], { stdin: cmds.map((c) => JSON.stringify({ role: "user", content: c })).join("\n") + "\n" });
    assertEquals(r.code, 0, r.stderr);
    const says = jsonLines(r.stdout).map((m) => m.content);
    assertEquals(says.slice(1), [
      "You only live once! All actions will be auto-approved.",
      "afk mode enabled. AskUserQuestion will be auto-dismissed and tool calls auto-approved.",
      "afk mode disabled. You are back at the terminal. Yolo is still on.",
      "You only die once! Actions will require approval.",
    ]);
    const [dir] = await sb.sessionDirs();
    const state = JSON.parse(await Deno.readTextFile(`${dir}/state.json`));
    assertEquals([state.approval.yolo, state.approval.afk], [false, false]);
    const id = dir.split("/").pop()!;
    await sb.run(["--print", "--session", id, "--config-file", config, "-p", "/yolo"]);
    const after = JSON.parse(await Deno.readTextFile(`${dir}/state.json`));
    assertEquals(after.approval.yolo, true);
  } finally {
    await sb.cleanup();
  }
});
