import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

Deno.test("print stream-json: ReadFile, WriteFile, then a final text; exact output and file", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.writeTextFile(`${sb.workDir}/in.txt`, "Hello\n");
    const config = await sb.scriptedConfig([
      `text: reading\n${toolCallLine("tc_1", "ReadFile", { path: "in.txt" })}`,
      `${toolCallLine("tc_2", "WriteFile", { path: "out.txt", content: "Bonjour\n" })}`,
      "text: Translation completed successfully.",
    ]);
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "translate in.txt",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(jsonLines(r.stdout), [
      {
        role: "assistant",
        content: "reading",
        tool_calls: [{
          type: "function",
          id: "tc_1",
          function: { name: "ReadFile", arguments: '{"path":"in.txt"}' },
        }],
      },
      {
        role: "tool",
        content: [
          {
            type: "text",
            text:
              "<system>1 lines read from file starting from line 1. Total lines in file: 1. End of file reached.</system>",
          },
          { type: "text", text: "     1\tHello\n" },
        ],
        tool_call_id: "tc_1",
      },
      {
        role: "assistant",
        content: [],
        tool_calls: [{
          type: "function",
          id: "tc_2",
          function: { name: "WriteFile", arguments: '{"path":"out.txt","content":"Bonjour\\n"}' },
        }],
      },
      {
        role: "tool",
        content: "<system>File successfully overwritten. Current size: 8 bytes.</system>",
        tool_call_id: "tc_2",
      },
      { role: "assistant", content: "Translation completed successfully." },
    ]);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/out.txt`), "Bonjour\n");
    assertStringIncludes(r.stderr, "To resume this session: kimi --work-dir ");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print --final-message-only prints only the last step's text", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      `text: thinking aloud\n${toolCallLine("tc_1", "Think", { thought: "hmm" })}`,
      "text: The answer is 42.",
    ]);
    const text = await sb.run([
      "--print",
      "--final-message-only",
      "--config-file",
      config,
      "-p",
      "q",
    ]);
    assertEquals(text.code, 0, text.stderr);
    assertEquals(text.stdout, "The answer is 42.\n");

    const config2 = await sb.scriptedConfig(["text: Only this."]);
    const json = await sb.run([
      "--print",
      "--final-message-only",
      "--output-format",
      "stream-json",
      "--config-file",
      config2,
      "-p",
      "q",
    ]);
    assertEquals(json.stdout, '{"role":"assistant","content":"Only this."}\n');
    const quiet = await sb.run([
      "--quiet",
      "--config-file",
      await sb.scriptedConfig(["text: Q."]),
      "-p",
      "q",
    ]);
    assertEquals(quiet.stdout, "Q.\n");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print exit codes: 75 for a retryable 503, 1 for a 400, 1 for max steps", async () => {
  const sb = await kimiSandbox();
  try {
    const c503 = await sb.scriptedConfig(["error: 503", "error: 503"]);
    const r503 = await sb.run([
      "--print",
      "--output-format",
      "text",
      "--max-retries-per-step",
      "2",
      "--config-file",
      c503,
      "-p",
      "hi",
    ]);
    assertEquals(r503.code, 75, r503.stdout + r503.stderr);
    assertStringIncludes(r503.stdout, "Simulated 503 error");
    assertStringIncludes(r503.stdout, "StepRetry(n=1, next_attempt=2, max_attempts=2");

    const c400 = await sb.scriptedConfig(["error: 400 bad request"]);
    const r400 = await sb.run(["--print", "--config-file", c400, "-p", "hi"]);
    assertEquals(r400.code, 1);
    assertStringIncludes(r400.stdout, "bad request\n");

    const loop = await sb.scriptedConfig([toolCallLine("t1", "Think", { thought: "a" })]);
    const rMax = await sb.run([
      "--print",
      "--max-steps-per-turn",
      "1",
      "--config-file",
      loop,
      "-p",
      "hi",
    ]);
    assertEquals(rMax.code, 1);
    assertStringIncludes(rMax.stdout, "Max number of steps reached: 1\n");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print mode's default output is the answer; tool activity goes to stderr", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      `text: Let me look.\n${toolCallLine("c1", "Shell", { command: "echo hi" })}`,
      "text: Hello\ntext:  there",
    ]);
    const r = await sb.run(["--print", "--config-file", config, "-p", "say hi"]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "Let me look.\n\nHello there\n");
    assertStringIncludes(r.stderr, "• Used Shell (echo hi)");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print --output-format text echoes the command and shows every merged message", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: Hello\ntext:  there"]);
    const r = await sb.run([
      "--print",
      "--output-format",
      "text",
      "--debug",
      "--config-file",
      config,
      "-p",
      "say hi",
    ]);
    const logText = await Deno.readTextFile(`${sb.shareDir}/logs/kimi.log`);
    assertStringIncludes(logText, "| INFO | cli |");
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout.split("\n"), [
      "say hi",
      "TurnBegin(user_input='say hi')",
      "StepBegin(n=1)",
      "TextPart(type='text', text='Hello there')",
      "StatusUpdate(context_usage=None, context_tokens=None, max_context_tokens=None, token_usage=None, message_id=None, plan_mode=False, mcp_status=None)",
      "TurnEnd()",
      "",
    ]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print reads the prompt from stdin and stream-json input line by line", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: from stdin"]);
    const r = await sb.run(["--print", "--quiet", "--config-file", config], {
      stdin: "  hello  \n",
    });
    assertEquals(r.stdout, "from stdin\n");
    const c2 = await sb.scriptedConfig(["text: one", "text: two"]);
    const r2 = await sb.run(
      [
        "--print",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--config-file",
        c2,
      ],
      {
        stdin: '{"role":"user","content":"a"}\nnot json\n{"role":"assistant","content":"x"}\n' +
          '{"role":"user","content":[{"type":"text","text":"b"}]}\n',
      },
    );
    assertEquals(r2.code, 0, r2.stderr);
    assertEquals(jsonLines(r2.stdout), [
      { role: "assistant", content: "one" },
      { role: "assistant", content: "two" },
    ]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("two turns: context.jsonl and wire.jsonl record sequences; --continue appends", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: first", "text: second"]);
    const r1 = await sb.run(["--print", "--config-file", config, "-p", "one"]);
    assertEquals(r1.code, 0, r1.stderr);
    const [dir] = await sb.sessionDirs();
    const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assertEquals(files, ["context.jsonl", "state.json", "wire.jsonl"]);
    const ctxLines = async () =>
      (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n");
    const wireLines = async () => (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n");
    assertEquals((await ctxLines()).length, 5);
    assertEquals((await wireLines()).length, 6);
    const r2 = await sb.run(["--print", "--continue", "--config-file", config, "-p", "two"]);
    assertEquals(r2.code, 0, r2.stderr);
    assertEquals(await sb.sessionDirs(), [dir]);
    const ctx = (await ctxLines()).map((l) => JSON.parse(l));
    assertEquals(ctx.map((r) => r.role), [
      "_system_prompt",
      "_checkpoint",
      "user",
      "_checkpoint",
      "assistant",
      "_checkpoint",
      "user",
      "_checkpoint",
      "assistant",
    ]);
    assertEquals(ctx.filter((r) => r.role === "_checkpoint").map((r) => r.id), [0, 1, 2, 3]);
    const wire = await wireLines();
    assertEquals(wire.length, 11);
    assertEquals(wire[0], '{"type": "metadata", "protocol_version": "1.10"}');
    assertEquals(
      wire.slice(1).map((l) => JSON.parse(l).message.type),
      ["TurnBegin", "StepBegin", "ContentPart", "StatusUpdate", "TurnEnd"].concat(
        ["TurnBegin", "StepBegin", "ContentPart", "StatusUpdate", "TurnEnd"],
      ),
    );
    assert(wire[2].startsWith('{"timestamp": '));
    const state = JSON.parse(await Deno.readTextFile(`${dir}/state.json`));
    assertEquals(state.custom_title, "one");
    const kimiJson = JSON.parse(await Deno.readTextFile(`${sb.shareDir}/kimi.json`));
    assertEquals(kimiJson.work_dirs[0].last_session_id, dir.split("/").pop());
  } finally {
    await sb.cleanup();
  }
});

Deno.test("CLI errors: mutually exclusive flags, empty prompt, --version and info", async () => {
  const sb = await kimiSandbox();
  try {
    const both = await sb.run(["--print", "--wire"]);
    assertEquals(both.code, 2);
    assertStringIncludes(both.stderr, "Cannot combine --print, --wire.");
    const empty = await sb.run(["--print", "-p", "   "]);
    assertEquals(empty.code, 2);
    assertStringIncludes(empty.stderr, "Prompt cannot be empty");
    const fmt = await sb.run(["--output-format", "stream-json"]);
    assertStringIncludes(fmt.stderr, "Output format is only supported for print UI");
    const v = await sb.run(["--version"]);
    assertEquals(v.stdout, "kimi, version 1.49.0\n");
    const info = JSON.parse((await sb.run(["info", "--json"])).stdout);
    assertEquals(info.wire_protocol_version, "1.12");
    assertEquals(info.permission_rules, []);
    assertEquals(info.permission_problems, []);
    assertEquals(info.agent_spec_versions, ["1"]);
    assertEquals(info.kimi_cli_version, "1.49.0");
    const notty = await sb.run([]);
    assertEquals(notty.code, 1);
    assertStringIncludes(notty.stderr, "--print");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("a background task started in one turn is listed and read in the next", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("t1", "Shell", {
        command: "sleep 0.3; echo bg-finished",
        run_in_background: true,
        description: "slow echo",
      }),
      "text: started",
      toolCallLine("t2", "TaskList", { active_only: false }),
      "text: listed",
    ]);
    const stdin = '{"role":"user","content":"start it"}\n' +
      '{"role":"user","content":"check it"}\n';
    const r = await sb.run([
      "--print",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
    ], { stdin });
    assertEquals(r.code, 0, r.stderr);
    const lines = jsonLines(r.stdout);
    const started = lines[1].content.map((p: { text: string }) => p.text).join("");
    assertStringIncludes(started, "Background task started");
    const taskId = started.match(/bash-[0-9a-f]{8}/)?.[0];
    assert(taskId, started);
    const listed = lines[4].content.map((p: { text: string }) => p.text).join("");
    assertStringIncludes(listed, taskId);
    assertStringIncludes(listed, "slow echo");
    const [dir] = await sb.sessionDirs();
    // The task's record and output are kept on disk under the session.
    const spec = JSON.parse(await Deno.readTextFile(`${dir}/tasks/${taskId}/spec.json`));
    assertEquals(spec.description, "slow echo");
    assert((await Deno.stat(`${dir}/tasks/${taskId}/output.log`)).isFile);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("text print waits for background tasks, re-enters the agent, or times out and kills", async () => {
  const sb = await kimiSandbox();
  try {
    const done = await sb.scriptedConfig([
      toolCallLine("t1", "Shell", {
        command: "sleep 0.3; echo bg-done",
        run_in_background: true,
        description: "short job",
      }),
      "text: started",
      "text: processed the results",
    ]);
    const r = await sb.run(["--print", "--final-message-only", "--config-file", done, "-p", "go"]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "started\nprocessed the results\n");
    const [dir] = await sb.sessionDirs();
    const ctx = await Deno.readTextFile(`${dir}/context.jsonl`);
    assertStringIncludes(ctx, "Background tasks have completed. Process their results.");
    assertStringIncludes(ctx, "<notification ");

    const slow = await sb.scriptedConfig(
      [
        toolCallLine("t1", "Shell", {
          command: "sleep 30",
          run_in_background: true,
          description: "long job",
        }),
        "text: started",
        "text: summary of what happened",
      ],
      { background: { print_wait_ceiling_s: 1 } },
    );
    const t = await sb.run(["--print", "--final-message-only", "--config-file", slow, "-p", "go"]);
    assertEquals(t.code, 1, t.stdout + t.stderr);
    assertStringIncludes(t.stderr, "timed out waiting for background tasks (1s), killed 1 tasks");
    assertEquals(t.stdout, "started\nsummary of what happened\n");
  } finally {
    await sb.cleanup();
  }
});
