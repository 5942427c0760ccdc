import { assert, assertEquals } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine, type WireProcess } from "../helpers/wire_process.ts";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SHELL_ECHO = toolCallLine("tc-1", "Shell", { command: "echo ok" });
const NULL_STATUS = {
  context_usage: null,
  context_tokens: null,
  max_context_tokens: null,
  token_usage: null,
  message_id: null,
  plan_mode: false,
  mcp_status: null,
};

async function start(
  scripts: string[],
  extraArgs: string[] = [],
): Promise<{ sb: KimiSandbox; wire: WireProcess }> {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig(scripts);
  const wire = spawnWire(sb, ["--config-file", config, ...extraArgs]);
  return { sb, wire };
}

const events = (lines: WireLine[]) =>
  lines.filter((l) => l.method === "event").map((l) => l.params as { type: string; payload: any });
const types = (lines: WireLine[]) => events(lines).map((e) => e.type);
const init = (wire: WireProcess, params: Record<string, unknown> = {}) =>
  wire.call("init", "initialize", { protocol_version: "1.10", ...params });

Deno.test("wire: initialize golden, external tools accepted/rejected, round trip, content inputs", async () => {
  const { sb, wire } = await start([
    "id: scripted-1\nusage: input_other=5 output=2\ntext: Hello",
    "text: multi",
    "text: parts",
    toolCallLine("tc-1", "open_in_ide", { path: "README.md" }),
    "text: opened",
  ]);
  try {
    const { lines, response } = await init(wire, {
      client: { name: "test", version: "0" },
      external_tools: [
        {
          name: "open_in_ide",
          description: "Open a file in the IDE",
          parameters: {
            type: "object",
            properties: { path: { type: "string" } },
            required: ["path"],
          },
        },
        { name: "Shell", description: "x", parameters: { type: "object" } },
        { name: "bad", description: "x", parameters: { type: "frobnicate" } },
      ],
    });
    assertEquals(lines, []);
    assertEquals(Object.keys(response.result), [
      "protocol_version",
      "server",
      "slash_commands",
      "external_tools",
      "hooks",
      "capabilities",
    ]);
    response.result.server.version = "<VERSION>";
    assertEquals(response, {
      jsonrpc: "2.0",
      id: "init",
      result: {
        protocol_version: "1.10", // the client said 1.10: the connection speaks 1.10
        server: { name: "Kimi Code CLI", version: "<VERSION>" },
        slash_commands: [
          {
            name: "init",
            description: "Analyze the codebase and generate an `AGENTS.md` file",
            aliases: [],
          },
          {
            name: "compact",
            description: "Compact the context (optionally: what to focus the summary on)",
            aliases: [],
          },
          { name: "clear", description: "Clear the context", aliases: ["reset"] },
          { name: "yolo", description: "Toggle YOLO mode (auto-approve all actions)", aliases: [] },
          {
            name: "afk",
            description: "Toggle afk mode (auto-approve and auto-dismiss questions)",
            aliases: [],
          },
          {
            name: "plan",
            description: "Toggle plan mode. Usage: /plan [on|off|view|clear]",
            aliases: [],
          },
          {
            name: "add-dir",
            description: "Add a directory to the workspace, or list the added ones",
            aliases: [],
          },
          {
            name: "export",
            description: "Export the conversation to a Markdown file",
            aliases: [],
          },
          {
            name: "import",
            description: "Import a file or another session's conversation as reference context",
            aliases: [],
          },
          {
            name: "undo",
            description:
              "Undo the last n turns (default 1): rewind the conversation and restore files",
            aliases: [],
          },
          {
            name: "btw",
            description: "Ask a side question (no tools, not added to the conversation)",
            aliases: [],
          },
          {
            name: "goal",
            description:
              "Set or manage the session goal. Usage: /goal [objective|status|pause|resume|...]",
            aliases: [],
          },
          {
            name: "swarm",
            description: "Show the agent swarms of this session and their items",
            aliases: [],
          },
          {
            name: "skill:kimi-cli-help",
            description:
              "Answer questions about this Kimi Code CLI (the Deno build) - its flags, modes, " +
              "configuration, sessions, wire protocol, permission profiles, skills and slash " +
              "commands.",
            aliases: [],
          },
          {
            name: "skill:skill-creator",
            description:
              "Write a new skill or flow skill for Kimi Code CLI - where to put it, the " +
              "frontmatter fields, how to write the instructions, and the mermaid/d2 flow syntax.",
            aliases: [],
          },
        ],
        external_tools: {
          accepted: ["open_in_ide"],
          rejected: [
            { name: "Shell", reason: "conflicts with builtin tool" },
            {
              name: "bad",
              reason: 'parameters.type: "frobnicate" is not valid under any of the given schemas',
            },
          ],
        },
        hooks: {
          supported_events: [
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "UserPromptSubmit",
            "Stop",
            "StopFailure",
            "SessionStart",
            "SessionEnd",
            "SubagentStart",
            "SubagentStop",
            "PreCompact",
            "PostCompact",
            "Notification",
          ],
          configured: {},
        },
        capabilities: { supports_question: true },
      },
    });

    // basic prompt: exact events, exact StatusUpdate
    const basic = await wire.call("prompt-1", "prompt", { user_input: "hi" });
    assertEquals(events(basic.lines), [
      { type: "TurnBegin", payload: { user_input: "hi" } },
      { type: "StepBegin", payload: { n: 1 } },
      { type: "ContentPart", payload: { type: "text", text: "Hello" } },
      {
        type: "StatusUpdate",
        payload: {
          context_usage: 5e-05,
          context_tokens: 5,
          max_context_tokens: 100000,
          token_usage: { input_other: 5, output: 2, input_cache_read: 0, input_cache_creation: 0 },
          message_id: "scripted-1",
          plan_mode: false,
          mcp_status: null,
        },
      },
      { type: "TurnEnd", payload: {} },
    ]);
    assertEquals(basic.response, {
      jsonrpc: "2.0",
      id: "prompt-1",
      result: { status: "finished" },
    });

    const multi = await wire.call("prompt-2", "prompt", { user_input: "line one\nline two\n" });
    assertEquals(events(multi.lines)[0], {
      type: "TurnBegin",
      payload: { user_input: "line one\nline two\n" },
    });
    assertEquals(multi.response.result, { status: "finished" });

    const parts = await wire.call("prompt-3", "prompt", {
      user_input: [{ type: "text", text: "look" }, { type: "text", text: " here" }],
    });
    assertEquals(events(parts.lines)[0], {
      type: "TurnBegin",
      payload: { user_input: [{ type: "text", text: "look" }, { type: "text", text: " here" }] },
    });
    assertEquals(parts.response.result, { status: "finished" });

    // external tool round trip
    const requests: WireLine[] = [];
    const ext = await wire.call("prompt-4", "prompt", { user_input: "open it" }, (msg) => {
      requests.push(msg);
      return {
        tool_call_id: msg.params.payload.id,
        return_value: {
          is_error: false,
          output: "Opened",
          message: "Opened README.md",
          display: [],
        },
      };
    });
    assertEquals(requests, [{
      jsonrpc: "2.0",
      method: "request",
      id: "tc-1",
      params: {
        type: "ToolCallRequest",
        payload: { id: "tc-1", name: "open_in_ide", arguments: '{"path":"README.md"}' },
      },
    }]);
    assertEquals(events(ext.lines).find((e) => e.type === "ToolResult"), {
      type: "ToolResult",
      payload: {
        tool_call_id: "tc-1",
        return_value: {
          is_error: false,
          output: "Opened",
          message: "Opened README.md",
          display: [],
          extras: null,
        },
      },
    });
    assertEquals(ext.response.result, { status: "finished" });
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: approve (transcript §4.13), then replay counts 10/0", async () => {
  const { sb, wire } = await start([`text: step1\n${SHELL_ECHO}`, "text: done"]);
  try {
    await init(wire);
    const { lines, response } = await wire.call(
      "prompt-1",
      "prompt",
      { user_input: "run shell" },
      (msg) => ({
        request_id: msg.params.payload.id,
        response: "approve",
      }),
    );
    const req = lines.find((l) => l.method === "request")!;
    assert(UUID_RE.test(req.id), req.id);
    assertEquals(req.params.payload.id, req.id);
    const { source_id, ...rest } = req.params.payload;
    assert(UUID_RE.test(source_id));
    assertEquals(rest, {
      id: req.id,
      tool_call_id: "tc-1",
      sender: "Shell",
      action: "run command",
      description: "Run command `echo ok`",
      source_kind: "foreground_turn",
      agent_id: null,
      subagent_type: null,
      source_description: null,
      display: [{ type: "shell", language: "bash", command: "echo ok" }],
    });
    assertEquals(events(lines), [
      { type: "TurnBegin", payload: { user_input: "run shell" } },
      { type: "StepBegin", payload: { n: 1 } },
      { type: "ContentPart", payload: { type: "text", text: "step1" } },
      {
        type: "ToolCall",
        payload: {
          type: "function",
          id: "tc-1",
          function: { name: "Shell", arguments: '{"command":"echo ok"}' },
          extras: null,
        },
      },
      { type: "StatusUpdate", payload: NULL_STATUS },
      {
        type: "ApprovalResponse",
        payload: { request_id: req.id, response: "approve", feedback: "" },
      },
      {
        type: "ToolResult",
        payload: {
          tool_call_id: "tc-1",
          return_value: {
            is_error: false,
            output: "ok\n",
            message: "Command executed successfully.",
            display: [],
            extras: null,
          },
        },
      },
      { type: "StepBegin", payload: { n: 2 } },
      { type: "ContentPart", payload: { type: "text", text: "done" } },
      { type: "StatusUpdate", payload: NULL_STATUS },
      { type: "TurnEnd", payload: {} },
    ]);
    assertEquals(response, { jsonrpc: "2.0", id: "prompt-1", result: { status: "finished" } });

    const replay = await wire.call("r-1", "replay");
    assertEquals(replay.response.result, { status: "finished", events: 10, requests: 0 });
    assertEquals(replay.lines.length, 10);
    assertEquals(types(replay.lines), [
      "TurnBegin",
      "StepBegin",
      "ContentPart",
      "ToolCall",
      "StatusUpdate",
      "ToolResult",
      "StepBegin",
      "ContentPart",
      "StatusUpdate",
      "TurnEnd",
    ]);
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: reject stops the turn; approve_for_session skips the next request", async () => {
  const { sb, wire } = await start([
    SHELL_ECHO,
    toolCallLine("tc-2", "Shell", { command: "echo a" }),
    "text: after session approval",
    toolCallLine("tc-3", "Shell", { command: "echo b" }),
    "text: done",
  ]);
  try {
    await init(wire);
    const rejected = await wire.call("p-1", "prompt", { user_input: "x" }, (msg) => ({
      request_id: msg.params.payload.id,
      response: "reject",
    }));
    const evs = events(rejected.lines);
    assertEquals(evs.find((e) => e.type === "ToolResult")!.payload, {
      tool_call_id: "tc-1",
      return_value: {
        is_error: true,
        output: "",
        message:
          "The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed.",
        display: [{ type: "brief", text: "Rejected by user" }],
        extras: null,
      },
    });
    assertEquals(evs.filter((e) => e.type === "StepBegin").length, 1);
    assertEquals(evs.at(-1)!.type, "TurnEnd");
    assertEquals(rejected.response.result, { status: "finished" });

    const session = await wire.call("p-2", "prompt", { user_input: "y" }, (msg) => ({
      request_id: msg.params.payload.id,
      response: "approve_for_session",
    }));
    assertEquals(session.lines.filter((l) => l.method === "request").length, 1);
    assertEquals(
      events(session.lines).find((e) => e.type === "ToolResult")!.payload.return_value.output,
      "a\n",
    );

    const again = await wire.call("p-3", "prompt", { user_input: "z" }, () => {
      throw new Error("no request expected");
    });
    assertEquals(again.lines.filter((l) => l.method === "request"), []);
    assertEquals(
      events(again.lines).find((e) => e.type === "ToolResult")!.payload.return_value.output,
      "b\n",
    );
    assertEquals(again.response.result, { status: "finished" });
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: --yolo runs Shell without requests; max steps 1; concurrent prompt is refused", async () => {
  const { sb, wire } = await start(
    [SHELL_ECHO, toolCallLine("tc-2", "Shell", { command: "sleep 2" }), "text: unused"],
    ["--yolo", "--max-steps-per-turn", "1"],
  );
  try {
    await init(wire);
    const r = await wire.call("p-1", "prompt", { user_input: "go" });
    assertEquals(r.lines.filter((l) => l.method === "request"), []);
    assertEquals(types(r.lines).includes("ApprovalResponse"), false);
    assertEquals(types(r.lines), [
      "TurnBegin",
      "StepBegin",
      "ToolCall",
      "StatusUpdate",
      "ToolResult",
      "TurnEnd",
    ]);
    assertEquals(r.response.result, { status: "max_steps_reached", steps: 1 });

    await wire.send({
      jsonrpc: "2.0",
      id: "p-2",
      method: "prompt",
      params: { user_input: "slow" },
    });
    await wire.send({
      jsonrpc: "2.0",
      id: "p-3",
      method: "prompt",
      params: { user_input: "again" },
    });
    const refused = await wire.until("p-3");
    assertEquals(refused.response, {
      jsonrpc: "2.0",
      id: "p-3",
      error: { code: -32000, message: "An agent turn is already in progress", data: null },
    });
    const done = await wire.until("p-2");
    assertEquals(done.response.result, { status: "max_steps_reached", steps: 1 });
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: protocol errors with exact codes and messages", async () => {
  const { sb, wire } = await start(["bad line without colon"]);
  try {
    const err = (id: string | null, code: number, message: string) => ({
      jsonrpc: "2.0",
      id,
      error: { code, message, data: null },
    });
    await wire.send("{not json");
    assertEquals(await wire.next(), err(null, -32700, "Invalid JSON format"));
    await wire.send({ jsonrpc: "1.0", id: "x", method: "prompt" });
    assertEquals(await wire.next(), err(null, -32600, "Invalid request"));
    await wire.send({ jsonrpc: "2.0", id: "x", error: "nope" });
    assertEquals(await wire.next(), err(null, -32600, "Invalid response"));
    await wire.send({ jsonrpc: "2.0", method: "whatever" }); // unknown notification: ignored
    await wire.send({ jsonrpc: "2.0", id: "m-1", method: "frobnicate", params: {} });
    assertEquals(await wire.next(), err("m-1", -32601, "Unexpected method received: frobnicate"));
    await wire.send({ jsonrpc: "2.0", id: "m-2", method: "prompt" });
    assertEquals(await wire.next(), err("m-2", -32602, "Invalid parameters for method `prompt`"));
    await wire.send({
      jsonrpc: "2.0",
      id: "m-3",
      method: "set_plan_mode",
      params: { enabled: "yes" },
    });
    assertEquals(
      await wire.next(),
      err("m-3", -32602, "Invalid parameters for method `set_plan_mode`"),
    );
    await wire.send({ jsonrpc: "2.0", id: "m-4", method: "cancel" });
    assertEquals(await wire.next(), err("m-4", -32000, "No agent turn is in progress"));
    await wire.send({ jsonrpc: "2.0", id: "m-5", method: "steer", params: { user_input: "x" } });
    assertEquals(await wire.next(), err("m-5", -32000, "No agent turn is in progress"));

    const image = await wire.call("m-6", "prompt", {
      user_input: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }],
    });
    assertEquals(
      image.response,
      err(
        "m-6",
        -32002,
        "LLM model 'scripted_echo' does not support required capability: image_in.",
      ),
    );
    const provider = await wire.call("m-7", "prompt", { user_input: "x" });
    assertEquals(
      provider.response,
      err("m-7", -32003, "Invalid echo DSL at line 1: 'bad line without colon'"),
    );
    assertEquals(types(provider.lines), ["TurnBegin", "StepBegin", "StepInterrupted", "TurnEnd"]);

    const plan = await wire.call("m-8", "set_plan_mode", { enabled: true });
    assertEquals(events(plan.lines), [{
      type: "StatusUpdate",
      payload: { ...NULL_STATUS, plan_mode: true },
    }]);
    assertEquals(plan.response.result, { status: "ok", plan_mode: true });
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: -32001 when no model is configured (prompt without initialize)", async () => {
  const sb = await kimiSandbox();
  try {
    const config = `${sb.root}/empty.json`;
    await Deno.writeTextFile(config, "{}");
    const wire = spawnWire(sb, ["--config-file", config]);
    const r = await wire.call("p", "prompt", { user_input: "x" });
    assertEquals(r.response.error, { code: -32001, message: "LLM is not set", data: null });
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: cancel mid-turn, steer during a turn, EOF mid-turn exits 0", async () => {
  const { sb, wire } = await start(
    [
      toolCallLine("tc-1", "Shell", { command: "sleep 30" }),
      toolCallLine("tc-2", "Shell", { command: "sleep 1" }),
      "text: steered answer",
      toolCallLine("tc-3", "Shell", { command: "sleep 30" }),
    ],
    ["--yolo"],
  );
  try {
    await init(wire);
    // cancel
    await wire.send({
      jsonrpc: "2.0",
      id: "p-1",
      method: "prompt",
      params: { user_input: "sleep" },
    });
    while ((await wire.next()).params?.type !== "ToolCall");
    const t0 = Date.now();
    await wire.send({ jsonrpc: "2.0", id: "c-1", method: "cancel" });
    const cancelled = await wire.until("p-1");
    assert(Date.now() - t0 < 10000);
    const cancelResp = cancelled.lines.find((l) => l.id === "c-1");
    assertEquals(cancelResp, { jsonrpc: "2.0", id: "c-1", result: {} });
    assertEquals(cancelled.response.result, { status: "cancelled" });
    assertEquals(events(cancelled.lines).at(-1)!.type, "TurnEnd");

    // steer
    await wire.send({
      jsonrpc: "2.0",
      id: "p-2",
      method: "prompt",
      params: { user_input: "slow" },
    });
    while ((await wire.next()).params?.type !== "ToolCall");
    await wire.send({
      jsonrpc: "2.0",
      id: "s-1",
      method: "steer",
      params: { user_input: "use python" },
    });
    const steered = await wire.until("p-2");
    assertEquals(steered.lines.find((l) => l.id === "s-1")?.result, { status: "steered" });
    const evTypes = types(steered.lines);
    const steerAt = evTypes.indexOf("SteerInput");
    assert(
      steerAt > evTypes.indexOf("ToolResult") && steerAt < evTypes.lastIndexOf("StepBegin"),
      evTypes.join(),
    );
    assertEquals(events(steered.lines)[steerAt].payload, { user_input: "use python" });
    assertEquals(steered.response.result, { status: "finished" });

    // EOF while a Shell sleeps
    await wire.send({
      jsonrpc: "2.0",
      id: "p-3",
      method: "prompt",
      params: { user_input: "sleep again" },
    });
    while ((await wire.next()).params?.type !== "ToolCall");
    const t1 = Date.now();
    const status = await wire.finish();
    assertEquals(status.code, 0);
    assert(Date.now() - t1 < 10000, "exit took too long");
  } finally {
    await sb.cleanup();
  }
});
