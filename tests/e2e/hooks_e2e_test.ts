/**
 * Hooks end to end through main.ts with `_scripted_echo`: PreToolUse blocking `rm -rf` and
 * allowing other commands, UserPromptSubmit blocking a prompt, Stop asking for one more turn,
 * and a wire client answering a HookRequest with block.
 */
import { exists } from "../../lib/fs/exists.ts";
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

/** A PreToolUse hook script: refuses `rm -rf` (exit 2, reason on stderr), allows the rest. */
async function writeGuardScript(sb: KimiSandbox): Promise<string> {
  const path = `${sb.root}/guard.sh`;
  await Deno.writeTextFile(
    path,
    [
      "#!/usr/bin/env bash",
      "input=$(cat)",
      `printf '%s\\n' "$input" >> "${sb.root}/guard-inputs.jsonl"`,
      "if printf '%s' \"$input\" | grep -q 'rm -rf'; then",
      "  echo 'rm -rf is not allowed here' >&2",
      "  exit 2",
      "fi",
      "exit 0",
      "",
    ].join("\n"),
  );
  return path;
}

Deno.test("PreToolUse hook blocks `rm -rf`: the Shell call gets the reason, nothing runs", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.mkdir(`${sb.workDir}/victim`);
    await Deno.writeTextFile(`${sb.workDir}/victim/keep.txt`, "keep\n");
    const guard = await writeGuardScript(sb);
    const config = await sb.scriptedConfig([
      toolCallLine("tc_1", "Shell", { command: "rm -rf victim" }),
      "text: ok, not deleting",
    ], { hooks: [{ event: "PreToolUse", matcher: "^Shell$", command: `bash ${guard}` }] });
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "clean up",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const lines = jsonLines(r.stdout);
    assertEquals(lines[1], {
      role: "tool",
      content: "<system>ERROR: rm -rf is not allowed here</system>",
      tool_call_id: "tc_1",
    });
    assertEquals(lines[2], { role: "assistant", content: "ok, not deleting" });
    assert(await exists(`${sb.workDir}/victim/keep.txt`), "the command must not have run");
    const inputs = jsonLines(await Deno.readTextFile(`${sb.root}/guard-inputs.jsonl`));
    assertEquals(inputs.length, 1);
    const [sessionDir] = await sb.sessionDirs();
    assertEquals(inputs[0], {
      hook_event_name: "PreToolUse",
      session_id: sessionDir.split("/").pop(),
      cwd: sb.workDir,
      tool_name: "Shell",
      tool_input: { command: "rm -rf victim" },
      tool_call_id: "tc_1",
    });
  } finally {
    await sb.cleanup();
  }
});

Deno.test("PreToolUse hook that allows: the Shell command runs", async () => {
  const sb = await kimiSandbox();
  try {
    const guard = await writeGuardScript(sb);
    const config = await sb.scriptedConfig([
      toolCallLine("tc_1", "Shell", { command: "echo hi > created.txt && echo done" }),
      "text: created",
    ], { hooks: [{ event: "PreToolUse", matcher: "Shell", command: `bash ${guard}` }] });
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "create a file",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const lines = jsonLines(r.stdout);
    assertEquals(lines[1].role, "tool");
    assertEquals(lines[1].tool_call_id, "tc_1");
    assertStringIncludes(JSON.stringify(lines[1].content), "done\\n");
    assert(!JSON.stringify(lines[1].content).includes("ERROR"));
    assertEquals(await Deno.readTextFile(`${sb.workDir}/created.txt`), "hi\n");
    assertEquals(jsonLines(await Deno.readTextFile(`${sb.root}/guard-inputs.jsonl`)).length, 1);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("UserPromptSubmit hook blocks a prompt: the reason is shown, the model is not called", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: should never be said"], {
      hooks: [{
        event: "UserPromptSubmit",
        matcher: "password",
        command: "cat > /dev/null; echo 'Prompts mentioning passwords are blocked.' >&2; exit 2",
      }],
    });
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "what is the admin password?",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(jsonLines(r.stdout), [
      { role: "assistant", content: "Prompts mentioning passwords are blocked." },
    ]);
    const [dir] = await sb.sessionDirs();
    const wire = await Deno.readTextFile(`${dir}/wire.jsonl`);
    const types = jsonLines(wire).slice(1).map((l) => l.message.type);
    assertEquals(types, ["HookTriggered", "HookResolved", "TurnBegin", "ContentPart", "TurnEnd"]);
    const context = await Deno.readTextFile(`${dir}/context.jsonl`).catch(() => "");
    assert(!context.includes("admin password"), "the blocked prompt must not reach the context");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("Stop hook asks for one more turn with its reason as the user message", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: first answer", "text: summary given"], {
      hooks: [{
        event: "Stop",
        command: `cat >> "${sb.root}/stop-inputs.jsonl"; echo 'Now summarize.' >&2; exit 2`,
      }],
    });
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "answer me",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(jsonLines(r.stdout), [
      { role: "assistant", content: "first answer" },
      { role: "assistant", content: "summary given" },
    ]);
    const [dir] = await sb.sessionDirs();
    const users = jsonLines(await Deno.readTextFile(`${dir}/context.jsonl`))
      .filter((l) => l.role === "user").map((l) => l.content);
    assertEquals(users, ["answer me", "Now summarize."]);
    // the Stop hook ran once (the extra turn does not trigger it again)
    const stops = (await Deno.readTextFile(`${sb.root}/stop-inputs.jsonl`)).trim();
    assertEquals(JSON.parse(stops).hook_event_name, "Stop");
    assertEquals(JSON.parse(stops).stop_hook_active, false);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: a client's PreToolUse subscription answers block; Hook events on the wire", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("tc_1", "Shell", { command: "touch should-not-exist" }),
      "text: blocked, fine",
    ], { hooks: [{ event: "PostToolUse", command: `touch "${sb.root}/post-ran"` }] });
    const wp = spawnWire(sb, ["--yolo", "--config-file", config]);
    const init = await wp.call("init", "initialize", {
      protocol_version: "1.10",
      hooks: [
        { id: "guard", event: "PreToolUse", matcher: "^Shell$", timeout: 10 },
        { id: "ignored", event: "NotAnEvent" },
      ],
    });
    assertEquals(init.response.result.hooks.configured, { PostToolUse: 1, PreToolUse: 1 });
    assertEquals(init.response.result.hooks.supported_events.length, 13);

    const requests: WireLine[] = [];
    const { lines, response } = await wp.call(
      "p1",
      "prompt",
      { user_input: "run it" },
      (msg) => {
        if (msg.params.type !== "HookRequest") return undefined;
        requests.push(msg);
        return { request_id: msg.params.payload.id, action: "block", reason: "client blocked it" };
      },
    );
    assertEquals(response.result, { status: "finished" });
    assertEquals(requests.length, 1);
    const req = requests[0];
    assertEquals(req.id, req.params.payload.id);
    assertEquals(req.params.payload.subscription_id, "guard");
    assertEquals(req.params.payload.event, "PreToolUse");
    assertEquals(req.params.payload.target, "Shell");
    assertEquals(req.params.payload.input_data.tool_input, { command: "touch should-not-exist" });

    const events = lines.filter((l) => l.method === "event").map((l) => l.params);
    const triggered = events.filter((e) => e.type === "HookTriggered");
    const resolved = events.filter((e) => e.type === "HookResolved");
    assertEquals(triggered[0].payload, { event: "PreToolUse", target: "Shell", hook_count: 1 });
    assertEquals(
      [resolved[0].payload.event, resolved[0].payload.action, resolved[0].payload.reason],
      ["PreToolUse", "block", "client blocked it"],
    );
    const toolResult = events.find((e) => e.type === "ToolResult");
    assertEquals(toolResult?.payload, {
      tool_call_id: "tc_1",
      return_value: {
        is_error: true,
        output: "",
        message: "client blocked it",
        display: [{ type: "brief", text: "Hook blocked" }],
        extras: null,
      },
    });
    assert(!(await exists(`${sb.workDir}/should-not-exist`)));
    // a blocked call never ran, so no PostToolUse for it
    assert(!(await exists(`${sb.root}/post-ran`)));
    const status = await wp.finish();
    assertEquals(status.code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: PostToolUse hook runs after an executed tool; HookRequest answered allow", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("tc_1", "Shell", { command: "echo ran > ran.txt" }),
      "text: done",
    ], {
      hooks: [{
        event: "PostToolUse",
        matcher: "Shell",
        command: `cat > "${sb.root}/post.json"`,
      }],
    });
    const wp = spawnWire(sb, ["--yolo", "--config-file", config]);
    await wp.call("init", "initialize", {
      protocol_version: "1.10",
      hooks: [{ id: "g", event: "PreToolUse" }],
    });
    const { response } = await wp.call(
      "p1",
      "prompt",
      { user_input: "go" },
      (msg) =>
        msg.params.type === "HookRequest"
          ? { request_id: msg.params.payload.id, action: "allow" }
          : undefined,
    );
    assertEquals(response.result, { status: "finished" });
    assertEquals(await Deno.readTextFile(`${sb.workDir}/ran.txt`), "ran\n");
    let post: Record<string, unknown> | null = null;
    for (let i = 0; i < 100 && post === null; i++) {
      post = await Deno.readTextFile(`${sb.root}/post.json`).then(
        (t) => (t.trim() ? JSON.parse(t) : null),
        () => null,
      );
      if (post === null) await new Promise((r) => setTimeout(r, 50));
    }
    assert(post !== null, "PostToolUse hook did not run");
    assertEquals(post.hook_event_name, "PostToolUse");
    assertEquals(post.tool_name, "Shell");
    assertEquals(post.tool_call_id, "tc_1");
    assertEquals(post.tool_input, { command: "echo ran > ran.txt" });
    assertEquals(typeof post.tool_output, "string");
    await wp.finish();
  } finally {
    await sb.cleanup();
  }
});

Deno.test("SessionStart/SessionEnd around the run; PreCompact on /compact with its trigger", async () => {
  const sb = await kimiSandbox();
  try {
    const log = `${sb.root}/events.jsonl`;
    const record = `cat >> "${log}"; echo >> "${log}"`;
    const config = await sb.scriptedConfig(["text: hello there"], {
      hooks: [
        { event: "SessionStart", matcher: "^startup$", command: record },
        { event: "SessionEnd", command: record },
        { event: "PreCompact", matcher: "manual", command: record },
      ],
    });
    const r = await sb.run([
      "--print",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
    ], { stdin: '{"role":"user","content":"hi"}\n{"role":"user","content":"/compact"}\n' });
    assertEquals(r.code, 0, r.stderr);
    const events = jsonLines(await Deno.readTextFile(log));
    assertEquals(events.map((e) => e.hook_event_name), [
      "SessionStart",
      "PreCompact",
      "SessionEnd",
    ]);
    assertEquals(events[0].source, "startup");
    assertEquals([events[1].trigger, typeof events[1].token_count], ["manual", "number"]);
    assertEquals(events[2].reason, "exit");
  } finally {
    await sb.cleanup();
  }
});
