import * as acp from "@agentclientprotocol/sdk";
import { assert, assertEquals } from "../helpers/assert.ts";
import { type AcpHarness, spawnAcp } from "../helpers/acp_client.ts";
import {
  denoDir,
  type KimiSandbox,
  kimiSandbox,
  MAIN_TS,
  toolCallLine,
} from "../helpers/kimi_process.ts";
import { parseProcessRef, waitProcessGone } from "../helpers/host_processes.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { LineSplitter } from "../helpers/wire_process.ts";

async function start(
  scripts: string[],
  opts: { rootArgs?: string[]; config?: Record<string, unknown> } = {},
): Promise<{ sb: KimiSandbox; client: AcpHarness; config: string }> {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig(scripts, opts.config);
  const client = spawnAcp(sb, { rootArgs: ["--config-file", config, ...(opts.rootArgs ?? [])] });
  return { sb, client, config };
}

type Update = acp.SessionUpdate;
const kinds = (us: Update[]) => us.map((u) => u.sessionUpdate);
const texts = (us: Update[], kind: string) =>
  us.filter((u) => u.sessionUpdate === kind).map((u) =>
    (u as { content: { type: string; text?: string } }).content.text
  );

async function rpcError(
  p: Promise<unknown>,
): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await p;
  } catch (err) {
    const e = err as acp.RequestError;
    return { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) };
  }
  throw new Error("expected an error");
}

Deno.test("acp: initialize, streamed chunks, a tool call with location and output, plan, commands", async () => {
  const { sb, client } = await start([
    "think: pondering\ntext: Hello\ntext: , world\n" +
    toolCallLine("tc-1", "ReadFile", { path: "notes.txt" }),
    toolCallLine("tc-2", "SetTodoList", {
      todos: [{ title: "read notes", status: "done" }, { title: "reply", status: "pending" }],
    }),
    "text: done",
  ]);
  try {
    await Deno.writeTextFile(`${sb.workDir}/notes.txt`, "line one\nline two\n");
    const init = await client.initialize();
    init.agentInfo!.version = "<V>";
    assertEquals(init, {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      authMethods: [],
      agentInfo: { name: "Kimi Code CLI", title: "Kimi Code", version: "<V>" },
    });
    const session = await client.newSession(sb.workDir);
    const sid = session.sessionId;
    assertEquals(session.modes?.currentModeId, "default");
    assertEquals(session.modes?.availableModes.map((m) => m.id), ["default", "plan", "yolo"]);
    assertEquals(
      session.configOptions?.map((o) => [o.id, o.currentValue]),
      [["mode", "default"], ["model", "scripted"]],
    );
    const commands = await client.waitFor(
      sid,
      (u) => u.sessionUpdate === "available_commands_update",
    );
    const names = (commands as acp.AvailableCommandsUpdate).availableCommands.map((c) => c.name);
    assert(names.includes("init") && names.includes("compact"), names.join());

    const res = await client.prompt(sid, "read my notes");
    assertEquals(res, { stopReason: "end_turn" });
    const us = client.of(sid).filter((u) => u.sessionUpdate !== "available_commands_update");
    assertEquals(texts(us, "agent_thought_chunk"), ["pondering"]);
    assertEquals(texts(us, "agent_message_chunk"), ["Hello", ", world", "done"]);
    const call = us.find((u) => u.sessionUpdate === "tool_call") as acp.ToolCall;
    assert(call.toolCallId.endsWith("/tc-1"), call.toolCallId);
    assertEquals(call.title, "ReadFile: notes.txt");
    assertEquals(call.kind, "read");
    assertEquals(call.status, "in_progress");
    assertEquals(call.locations, [{ path: `${sb.workDir}/notes.txt` }]);
    assertEquals(call.rawInput, { path: "notes.txt" });
    const done = us.filter((u) =>
      u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status
    ) as acp.ToolCallUpdate[];
    assertEquals(done.length, 1);
    assertEquals(done[0].status, "completed");
    assertEquals(done[0].content, [{
      type: "content",
      content: { type: "text", text: "     1\tline one\n     2\tline two\n" },
    }]);
    const plan = us.find((u) => u.sessionUpdate === "plan") as acp.Plan;
    assertEquals(plan.entries, [
      { content: "read notes", priority: "medium", status: "completed" },
      { content: "reply", priority: "medium", status: "pending" },
    ]);
    // order: thought, chunks, tool call, its result, the todo tool, plan, final text
    const order = kinds(us);
    assert(order.indexOf("tool_call") > order.indexOf("agent_message_chunk"), order.join());
    assertEquals(order.slice(-2), ["agent_message_chunk", "session_info_update"]);
    assertEquals((us.at(-1) as acp.SessionInfoUpdate).title, "read my notes");
    const { code } = await client.finish();
    assertEquals(code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: permission allow-always, then the same action runs without a request; save a rule; reject", async () => {
  const { sb, client, config } = await start([
    toolCallLine("tc-1", "Shell", { command: "echo first" }),
    toolCallLine("tc-2", "Shell", { command: "echo second" }),
    "text: both ran",
    toolCallLine("tc-4", "Shell", { command: "touch made.txt" }),
    "text: touched",
    toolCallLine("tc-3", "WriteFile", { path: "out.txt", content: "hi\n" }),
    "text: never",
  ]);
  try {
    await client.initialize();
    const { sessionId: sid } = await client.newSession(sb.workDir);
    client.answerPermission = () => "approve_for_session";
    assertEquals(await client.prompt(sid, "run twice"), { stopReason: "end_turn" });
    assertEquals(client.permissions.length, 1);
    const req = client.permissions[0];
    assertEquals(req.sessionId, sid);
    assertEquals(req.options, [
      { optionId: "approve", name: "Approve once", kind: "allow_once" },
      {
        optionId: "approve_for_session",
        name: "Approve `echo` commands for this session",
        kind: "allow_always",
      },
      {
        optionId: "approve_always",
        name: `Always approve \`echo\` commands (save rule to ${config})`,
        kind: "allow_always",
      },
      { optionId: "reject", name: "Reject", kind: "reject_once" },
    ]);
    assert(req.toolCall.toolCallId.endsWith("/tc-1"), req.toolCall.toolCallId);
    assertEquals(req.toolCall.title, "Shell: echo first");
    assertEquals(req.toolCall.kind, "execute");
    assertEquals(req.toolCall.content, [{
      type: "content",
      content: { type: "text", text: "Requesting approval to perform: Run command `echo first`" },
    }]);
    const results = client.of(sid).filter((u) =>
      u.sessionUpdate === "tool_call_update" && u.status === "completed"
    ) as acp.ToolCallUpdate[];
    assertEquals(
      results.map((r) => (r.content![0] as { content: { text: string } }).content.text),
      ["first\n", "second\n"],
    );

    // "always" with a rule file saves the rule there
    client.answerPermission = () => "approve_always";
    assertEquals(await client.prompt(sid, "touch"), { stopReason: "end_turn" });
    assertEquals(client.permissions.length, 2);
    const saved = await Deno.readTextFile(config);
    assert(saved.includes("Shell(touch"), saved);
    assertEquals(client.permissions[1].toolCall.title, "Shell: touch made.txt");

    // a different action asks again; rejecting it fails the call and ends the turn
    client.answerPermission = () => "reject";
    assertEquals(await client.prompt(sid, "write"), { stopReason: "end_turn" });
    assertEquals(client.permissions.length, 3);
    const write = client.permissions[2];
    assertEquals(write.toolCall.title, "WriteFile: out.txt");
    assertEquals(write.toolCall.content, [{
      type: "diff",
      path: `${sb.workDir}/out.txt`,
      oldText: null, // a new file (issue 32 item 17)
      newText: "hi",
    }]);
    const failed = client.of(sid).find((u) =>
      u.sessionUpdate === "tool_call_update" && u.status === "failed"
    ) as acp.ToolCallUpdate;
    assert(failed.toolCallId.endsWith("/tc-3"));
    assert(!texts(client.of(sid), "agent_message_chunk").includes("never"));
    await Deno.stat(`${sb.workDir}/out.txt`).then(
      () => assert(false, "file was written"),
      () => {},
    );
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: cancel mid-turn answers cancelled; a second prompt meanwhile is refused; max steps; EOF mid-turn", async () => {
  const { sb, client } = await start([
    toolCallLine("tc-1", "Shell", { command: "sleep 30" }),
    "text: after cancel",
    toolCallLine("tc-2", "Shell", { command: "true" }),
    toolCallLine("tc-3", "Shell", { command: "sleep 30" }),
  ], { rootArgs: ["--yolo", "--max-steps-per-turn", "1"] });
  try {
    await client.initialize();
    const { sessionId: sid } = await client.newSession(sb.workDir);
    const running = client.prompt(sid, "sleep");
    await client.waitFor(sid, (u) => u.sessionUpdate === "tool_call");
    const busy = await rpcError(client.prompt(sid, "meanwhile"));
    assertEquals(busy.code, -32600);
    assertEquals(
      busy.message,
      "Invalid request: a prompt is already running in this session; send session/cancel first",
    );
    await client.agent.notify(acp.methods.agent.session.cancel, { sessionId: sid });
    assertEquals(await running, { stopReason: "cancelled" });
    assertEquals(await client.prompt(sid, "again"), { stopReason: "end_turn" });
    assertEquals(texts(client.of(sid), "agent_message_chunk"), ["after cancel"]);
    // one step allowed: a tool call needs a second one
    assertEquals(await client.prompt(sid, "loop"), { stopReason: "max_turn_requests" });
    // the client goes away while a command runs: the server stops promptly and cleanly
    void client.prompt(sid, "sleep again").catch(() => {});
    await client.waitFor(
      sid,
      (u) => u.sessionUpdate === "tool_call" && u.toolCallId.endsWith("/tc-3"),
    );
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: session/load replays history; list and resume", async () => {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig([
    "text: first answer\n" + toolCallLine("tc-1", "Shell", { command: "echo hi" }),
    "text: second step",
  ]);
  try {
    const first = spawnAcp(sb, { rootArgs: ["--config-file", config, "--yolo"] });
    await first.initialize();
    const { sessionId: sid } = await first.newSession(sb.workDir);
    await first.prompt(sid, "hello there");
    const live = first.of(sid).filter((u) => u.sessionUpdate !== "available_commands_update");
    assertEquals((await first.finish()).code, 0);

    const second = spawnAcp(sb, { rootArgs: ["--config-file", config] });
    await second.initialize();
    const listed = await second.agent.request(acp.methods.agent.session.list, { cwd: sb.workDir });
    assertEquals(listed.sessions.map((s) => [s.sessionId, s.cwd, s.title]), [
      [sid, sb.workDir, "hello there"],
    ]);
    assert(typeof listed.sessions[0].updatedAt === "string");
    const loaded = await second.agent.request(acp.methods.agent.session.load, {
      sessionId: sid,
      cwd: sb.workDir,
      mcpServers: [],
    });
    assertEquals(loaded.modes?.currentModeId, "yolo");
    const replayed = second.of(sid).filter((u) => u.sessionUpdate !== "available_commands_update");
    assertEquals(kinds(replayed), [
      "user_message_chunk",
      "agent_message_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
    ]);
    assertEquals(texts(replayed, "user_message_chunk"), ["hello there"]);
    assertEquals(texts(replayed, "agent_message_chunk"), ["first answer", "second step"]);
    // the replay carries the same titles and results as the live turn (ids get a new turn prefix)
    const strip = (us: Update[]) =>
      us.filter((u) => u.sessionUpdate.startsWith("tool_call")).map((u) => {
        const { toolCallId: _, ...rest } = u as acp.ToolCallUpdate;
        return rest;
      });
    const liveFinal = strip(live).filter((u) => "title" in u || u.status === "completed");
    assertEquals(strip(replayed), liveFinal);

    const resumed = await second.agent.request(acp.methods.agent.session.resume, {
      sessionId: sid,
      cwd: sb.workDir,
    });
    assertEquals(resumed.modes?.currentModeId, "yolo");
    assertEquals(
      await rpcError(second.agent.request(acp.methods.agent.session.load, {
        sessionId: "no-such-session",
        cwd: sb.workDir,
        mcpServers: [],
      })),
      {
        code: -32002,
        message: `Session not found: no-such-session (no such session in ${sb.workDir})`,
        data: { sessionId: "no-such-session" },
      },
    );
    assertEquals((await second.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: fs through the client (unsaved buffer read, edits land in the editor), floor first", async () => {
  const { sb, client } = await start([
    toolCallLine("tc-1", "ReadFile", { path: "a.txt" }),
    toolCallLine("tc-2", "StrReplaceFile", {
      path: "a.txt",
      edit: { old: "unsaved", new: "edited" },
    }),
    toolCallLine("tc-3", "WriteFile", { path: "new.txt", content: "fresh\n" }),
    toolCallLine("tc-4", "ReadFile", { path: ".env" }),
    toolCallLine("tc-5", "ReadFile", { path: "../outside.txt" }),
    "text: ok",
  ], { rootArgs: ["--yolo"] });
  try {
    const a = `${sb.workDir}/a.txt`;
    await Deno.writeTextFile(a, "disk text\n");
    await Deno.writeTextFile(`${sb.root}/outside.txt`, "outside\n");
    client.buffers.set(a, "unsaved buffer\n");
    await Deno.writeTextFile(`${sb.workDir}/.env`, "TOKEN=disk\n");
    client.buffers.set(`${sb.workDir}/.env`, "TOKEN=buffer\n");
    await client.initialize({ fs: { readTextFile: true, writeTextFile: true } });
    const { sessionId: sid } = await client.newSession(sb.workDir);
    assertEquals(await client.prompt(sid, "edit"), { stopReason: "end_turn" });
    const results = client.of(sid).filter((u) =>
      u.sessionUpdate === "tool_call_update" && u.status
    ) as acp.ToolCallUpdate[];
    const text = (r: acp.ToolCallUpdate) =>
      (r.content ?? []).map((c) => c.type === "content" ? (c.content as { text: string }).text : "")
        .join("");
    assertEquals(text(results[0]), "     1\tunsaved buffer\n");
    assertEquals(results[1].content?.[0], {
      type: "diff",
      path: a,
      oldText: "unsaved buffer",
      newText: "edited buffer",
    });
    assertEquals(client.buffers.get(a), "edited buffer\n");
    assertEquals(await Deno.readTextFile(a), "disk text\n");
    assertEquals(client.buffers.get(`${sb.workDir}/new.txt`), "fresh\n");
    await Deno.stat(`${sb.workDir}/new.txt`).then(() => assert(false, "written to disk"), () => {});
    // a sensitive file and a relative path leaving the workspace are refused before the client
    // is asked
    assertEquals(results[3].status, "failed");
    assertEquals(results[4].status, "failed");
    assertEquals(client.fsCalls.filter((c) => c.includes("outside")), []);
    assertEquals(client.fsCalls, [
      `read ${a}`,
      `read ${a}`,
      `write ${a}`,
      `write ${sb.workDir}/new.txt`,
    ]);
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: the Deno permission floor applies before the client writes", async () => {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig([
    toolCallLine("tc-1", "WriteFile", { path: `${sb.root}/escape.txt`, content: "x" }),
    toolCallLine("tc-2", "WriteFile", { path: "inside.txt", content: "y" }),
    "text: end",
  ]);
  const client = spawnAcp(sb, {
    rootArgs: ["--config-file", config, "--yolo"],
    permissions: ["--allow-read", "--allow-env", `--allow-write=${sb.workDir},${sb.shareDir}`],
  });
  try {
    await client.initialize({ fs: { readTextFile: true, writeTextFile: true } });
    const { sessionId: sid } = await client.newSession(sb.workDir);
    assertEquals(await client.prompt(sid, "write"), { stopReason: "end_turn" });
    const results = client.of(sid).filter((u) =>
      u.sessionUpdate === "tool_call_update" && u.status
    ) as acp.ToolCallUpdate[];
    assertEquals(results.map((r) => r.status), ["failed", "completed"]);
    const denied = (results[0].content?.[0] as { content: { text: string } }).content.text;
    assert(denied.includes(`${sb.root}/escape.txt`) && denied.includes("--allow-write"), denied);
    assertEquals(client.fsCalls, [`write ${sb.workDir}/inside.txt`]);
    assertEquals(client.buffers.get(`${sb.workDir}/inside.txt`), "y");
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: a client terminal runs with the cleaned environment of local Shell, not the editor's", async () => {
  // The editor's own environment (the test client spawns terminals with it, as editors do).
  const secret = "sk-editor-secret-0123456789";
  Deno.env.set("KIMI_TEST_EDITOR_SECRET", secret);
  const { sb, client } = await start([
    toolCallLine("tc-1", "Shell", {
      command:
        'echo "[${KIMI_TEST_EDITOR_SECRET:-clean}] [${KIMI_SHARE_DIR:-none}] [${PATH:+path}]"',
    }),
    "text: seen",
  ], { rootArgs: ["--yolo"] });
  try {
    await client.initialize({ terminal: true });
    const { sessionId: sid } = await client.newSession(sb.workDir);
    assertEquals(await client.prompt(sid, "run"), { stopReason: "end_turn" });
    const [[, term]] = [...client.terminals];
    assertEquals(term.output, "[clean] [none] [path]\n");
    assertEquals(term.request.command, "env");
    assertEquals(term.request.args?.[0], "-i");
    assert(!JSON.stringify(term.request).includes(secret));
    assertEquals((await client.finish()).code, 0);
  } finally {
    Deno.env.delete("KIMI_TEST_EDITOR_SECRET");
    await sb.cleanup();
  }
});

Deno.test("acp: Shell runs in a client terminal shown in the tool call", async () => {
  const { sb, client } = await start([
    toolCallLine("tc-1", "Shell", { command: "echo from-terminal; exit 3" }),
    "text: seen",
  ], { rootArgs: ["--yolo"] });
  try {
    await client.initialize({ terminal: true });
    const { sessionId: sid } = await client.newSession(sb.workDir);
    assertEquals(await client.prompt(sid, "run"), { stopReason: "end_turn" });
    assertEquals(client.terminals.size, 1);
    const [[termId, term]] = [...client.terminals];
    assertEquals(term.request.args?.at(-2), "-c");
    assertEquals(term.request.args?.at(-1), "echo from-terminal; exit 3");
    assertEquals(term.request.cwd, sb.workDir);
    assertEquals(term.output, "from-terminal\n");
    assert(term.released, "terminal not released");
    const updates = client.of(sid).filter((u) =>
      u.sessionUpdate === "tool_call_update"
    ) as acp.ToolCallUpdate[];
    assertEquals(updates[0].content, [{ type: "terminal", terminalId: termId }]);
    assertEquals(updates[0].status, "in_progress");
    const final = updates.at(-1)!;
    assertEquals(final.status, "failed");
    assertEquals(final.content, [
      { type: "terminal", terminalId: termId },
      { type: "content", content: { type: "text", text: "Command failed with exit code: 3." } },
    ]);
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: modes and models switch through set_mode, set_config_option and set_model", async () => {
  const { sb, client, config } = await start(["text: hi"], {
    config: {
      models: {
        scripted: { provider: "echo", model: "scripted_echo", max_context_size: 100000 },
        deep: {
          provider: "echo",
          model: "scripted_echo",
          max_context_size: 100000,
          capabilities: ["thinking"],
        },
      },
    },
  });
  try {
    await client.initialize();
    const s = await client.newSession(sb.workDir);
    const sid = s.sessionId;
    const model = s.configOptions!.find((o) => o.id === "model") as acp.SessionConfigOption & {
      options: { value: string }[];
    };
    assertEquals(model.options.map((o) => o.value), ["scripted", "deep", "deep,thinking"]);
    await client.agent.request(acp.methods.agent.session.setMode, {
      sessionId: sid,
      modeId: "plan",
    });
    const r = await client.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId: sid,
      configId: "model",
      value: "deep,thinking",
    });
    assertEquals(r.configOptions.map((o) => [o.id, o.currentValue]), [
      ["mode", "plan"],
      ["model", "deep,thinking"],
    ]);
    const saved = JSON.parse(await Deno.readTextFile(config));
    assertEquals([saved.default_model, saved.default_thinking], ["deep", true]);
    await client.agent.request("session/set_model", { sessionId: sid, modelId: "scripted" });
    await client.agent.request(acp.methods.agent.session.setMode, {
      sessionId: sid,
      modeId: "yolo",
    });
    const r2 = await client.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId: sid,
      configId: "mode",
      value: "default",
    });
    assertEquals(r2.configOptions.map((o) => [o.id, o.currentValue]), [
      ["mode", "default"],
      ["model", "scripted"],
    ]);
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: bad requests get precise errors and the process lives on", async () => {
  const { sb, client } = await start(["text: still alive"]);
  try {
    // before initialize
    assertEquals(
      (await rpcError(client.newSession(sb.workDir))).code,
      -32600,
    );
    await client.initialize();
    assertEquals(await rpcError(client.agent.request("session/frobnicate", {})), {
      code: -32601,
      message: '"Method not found": session/frobnicate',
      data: { method: "session/frobnicate" },
    });
    assertEquals(
      (await rpcError(client.agent.request("session/new", { cwd: 42 }))).code,
      -32602,
    );
    assertEquals(await rpcError(client.newSession("relative/dir")), {
      code: -32602,
      message: 'Invalid params: cwd must be an absolute path, got "relative/dir"',
      data: { cwd: "relative/dir" },
    });
    assertEquals(await rpcError(client.prompt("nope", "hi")), {
      code: -32002,
      message: "Session not found: nope",
      data: { sessionId: "nope" },
    });
    const { sessionId: sid } = await client.newSession(sb.workDir);
    // cancel with nothing running is a no-op notification
    await client.agent.notify(acp.methods.agent.session.cancel, { sessionId: sid });
    await client.agent.notify(acp.methods.agent.session.cancel, { sessionId: "nope" });
    assertEquals(
      (await rpcError(client.agent.request(acp.methods.agent.session.setMode, {
        sessionId: sid,
        modeId: "turbo",
      }))).code,
      -32602,
    );
    assertEquals(
      (await rpcError(client.agent.request("session/set_model", {
        sessionId: sid,
        modelId: "gpt-99",
      }))).message,
      'Invalid params: unknown model "gpt-99"',
    );
    assertEquals(
      (await rpcError(client.agent.request(acp.methods.agent.session.prompt, {
        sessionId: sid,
        prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }],
      }))).code,
      -32602,
    );
    assertEquals(
      (await rpcError(client.agent.request(acp.methods.agent.authenticate, { methodId: "login" })))
        .code,
      -32602,
    );
    assertEquals(await client.prompt(sid, "hi"), { stopReason: "end_turn" });
    assertEquals(texts(client.of(sid), "agent_message_chunk"), ["still alive"]);
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: `kimi --acp` is deprecated with a non-zero exit", async () => {
  const sb = await kimiSandbox();
  try {
    const r = await sb.run(["--acp"]);
    assertEquals(r.code, 1);
    assertEquals(r.stdout, "");
    assertEquals(
      r.stderr.trim(),
      "`kimi --acp` is deprecated. Update your ACP client settings to use `kimi acp` without any flags or options.",
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: MCP servers from the client join the session and stop with it", async () => {
  const fixture = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;
  const denoJson = new URL("../../deno.json", import.meta.url).pathname;
  const { sb, client } = await start([
    toolCallLine("tc-1", "ping", { text: "editor" }),
    "text: pinged",
  ], { rootArgs: ["--yolo"] });
  try {
    const pidFile = `${sb.root}/mcp.pids`;
    await client.initialize();
    const { sessionId: sid } = await client.agent.request(acp.methods.agent.session.new, {
      cwd: sb.workDir,
      mcpServers: [{
        name: "fixture",
        command: Deno.execPath(),
        args: ["run", "-A", "--config", denoJson, "--no-lock", fixture],
        env: [{ name: "MCP_PID_FILE", value: pidFile }],
      }],
    });
    assertEquals(await client.prompt(sid, "ping it"), { stopReason: "end_turn" });
    const result = client.of(sid).find((u) =>
      u.sessionUpdate === "tool_call_update" && u.status
    ) as acp.ToolCallUpdate;
    assertEquals(result.status, "completed");
    assertEquals(result.content, [{
      type: "content",
      content: { type: "text", text: "pong:editor" },
    }]);
    const ref = parseProcessRef(await Deno.readTextFile(pidFile));
    assertEquals((await client.finish()).code, 0);
    assertEquals(await waitProcessGone(ref), true);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: questions are permission requests; EnterPlanMode switches the client's mode", async () => {
  const { sb, client } = await start([
    toolCallLine("tc-1", "AskUserQuestion", {
      questions: [{
        question: "Which color?",
        header: "Color",
        options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cold" }],
      }],
    }),
    toolCallLine("tc-2", "EnterPlanMode", {}),
    "text: planning now",
  ]);
  try {
    await client.initialize();
    const { sessionId: sid } = await client.newSession(sb.workDir);
    client.answerPermission = (req) =>
      req.options.find((o) => o.name === "Blue" || o.name === "Yes")!.optionId;
    assertEquals(await client.prompt(sid, "ask me"), { stopReason: "end_turn" });
    assertEquals(
      client.permissions.map((p) => [p.toolCall.title, p.options.map((o) => [o.name, o.kind])]),
      [
        ["Color: Which color?", [["Red", "allow_once"], ["Blue", "allow_once"]]],
        ["Plan Mode: Enter plan mode?", [["Yes", "allow_once"], ["No", "reject_once"]]],
      ],
    );
    const results = client.of(sid).filter((u) =>
      u.sessionUpdate === "tool_call_update" && u.status === "completed"
    ) as acp.ToolCallUpdate[];
    const first = (results[0].content![0] as { content: { text: string } }).content.text;
    assertEquals(JSON.parse(first), { answers: { "Which color?": "Blue" } });
    const mode = client.of(sid).find((u) => u.sessionUpdate === "current_mode_update");
    assertEquals(mode, { sessionUpdate: "current_mode_update", currentModeId: "plan" });
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: a rejected API key answers auth_required; other provider errors internal_error", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  const key = "sk-secret-acp-test-key";
  try {
    const config = await sb.openaiConfig(mock.url, { apiKey: key });
    const client = spawnAcp(sb, {
      rootArgs: ["--config-file", config, "--max-retries-per-step", "1"],
    });
    await client.initialize();
    const { sessionId: sid } = await client.newSession(sb.workDir);
    mock.enqueue({ status: 401, error: "Invalid Authentication" });
    const auth = await rpcError(client.prompt(sid, "hi"));
    assertEquals(auth.code, -32000);
    assert(auth.message.startsWith("Authentication required: "), auth.message);
    mock.enqueue({ status: 400, error: "bad request body" });
    const other = await rpcError(client.prompt(sid, "again"));
    assertEquals(other.code, -32603);
    assert(JSON.stringify(other.data).includes("bad request body"), JSON.stringify(other));
    assert(!JSON.stringify([auth, other]).includes(key), "the API key leaked into an error");
    mock.enqueue({ text: "recovered" });
    assertEquals(await client.prompt(sid, "third"), { stopReason: "end_turn" });
    assertEquals((await client.finish()).code, 0);
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});

Deno.test("acp: malformed lines on stdin get JSON-RPC errors with id null; the server goes on", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: unused"]);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "-A", MAIN_TS, "--config-file", config, "acp"],
      cwd: sb.workDir,
      clearEnv: true,
      env: {
        HOME: sb.home,
        KIMI_SHARE_DIR: sb.shareDir,
        DENO_DIR: denoDir(),
        PATH: "/usr/bin:/bin",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(
      new LineSplitter(),
    )[Symbol.asyncIterator]();
    const w = child.stdin.getWriter();
    const send = (text: string) => w.write(new TextEncoder().encode(text + "\n"));
    const next = async () => JSON.parse((await lines.next()).value);
    await send("{not json");
    assertEquals(await next(), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error" },
    });
    await send('[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]');
    assertEquals((await next()).error.code, -32600);
    await send('{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}');
    const init = await next();
    assertEquals([init.id, init.result.protocolVersion], [2, 1]);
    await w.close();
    assertEquals((await child.status).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: a prompt a UserPromptSubmit hook blocks ends with refusal", async () => {
  const { sb, client } = await start(["text: answered"], {
    config: {
      hooks: [{
        event: "UserPromptSubmit",
        matcher: "secret",
        command: "echo 'prompts about secrets are blocked' >&2; exit 2",
      }],
    },
  });
  try {
    await client.initialize();
    const { sessionId: sid } = await client.newSession(sb.workDir);
    assertEquals(await client.prompt(sid, "tell me the secret"), { stopReason: "refusal" });
    const reason = texts(client.of(sid), "agent_message_chunk").join("");
    assert(reason.includes("prompts about secrets are blocked"), reason);
    assertEquals(await client.prompt(sid, "hello"), { stopReason: "end_turn" });
    assertEquals(texts(client.of(sid), "agent_message_chunk").at(-1), "answered");
    assertEquals((await client.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("acp: a session another process is writing is refused naming it; free once it closes", async () => {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig(["text: one", "text: two"]);
  try {
    const first = spawnAcp(sb, { rootArgs: ["--config-file", config] });
    await first.initialize();
    const { sessionId: sid } = await first.newSession(sb.workDir);
    await first.prompt(sid, "hello there");

    const second = spawnAcp(sb, { rootArgs: ["--config-file", config] });
    await second.initialize();
    const refused = await rpcError(second.agent.request(acp.methods.agent.session.load, {
      sessionId: sid,
      cwd: sb.workDir,
      mcpServers: [],
    }));
    assertEquals(refused.code, -32603);
    assert(
      refused.message.startsWith(
        `Session ${sid} is in use by another kimi process (pid ${first.child.pid}, since `,
      ),
      refused.message,
    );
    assertEquals((refused.data as { pid: number }).pid, first.child.pid);

    // The first client closes the session: the lock goes with it.
    await first.agent.request(acp.methods.agent.session.close, { sessionId: sid });
    await second.agent.request(acp.methods.agent.session.load, {
      sessionId: sid,
      cwd: sb.workDir,
      mcpServers: [],
    });
    assertEquals((await first.finish()).code, 0);
    assertEquals((await second.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
