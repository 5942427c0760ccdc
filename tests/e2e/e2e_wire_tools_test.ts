/**
 * Approvals and display blocks of the file tools over the wire, with the default agent
 * (reference §4.9, §4.13 and §13 `test_wire_approvals_tools.py`).
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine, type WireProcess } from "../helpers/wire_process.ts";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NULL_STATUS = {
  context_usage: null,
  context_tokens: null,
  max_context_tokens: null,
  token_usage: null,
  message_id: null,
  plan_mode: false,
  mcp_status: null,
};
const WRITE_HELLO = toolCallLine("tc-1", "WriteFile", {
  path: "file.txt",
  content: "hello",
  mode: "overwrite",
});
const REPLACE_HELLO = toolCallLine("tc-1", "StrReplaceFile", {
  path: "file.txt",
  edit: { old: "hello", new: "hi", replace_all: false },
});

type Event = { type: string; payload: any };
const events = (lines: WireLine[]): Event[] =>
  lines.filter((l) => l.method === "event").map((l) => l.params as Event);
const types = (lines: WireLine[]) => events(lines).map((e) => e.type);
const requests = (lines: WireLine[]) => lines.filter((l) => l.method === "request");
const toolResult = (lines: WireLine[], id = "tc-1") =>
  events(lines).find((e) => e.type === "ToolResult" && e.payload.tool_call_id === id)?.payload;

/** Start `kimi --wire` with the default agent and a scripted model, then initialize. */
async function start(
  scripts: string[],
  extraArgs: string[] = [],
  prepare?: (sb: KimiSandbox) => Promise<void>,
): Promise<{ sb: KimiSandbox; wire: WireProcess }> {
  const sb = await kimiSandbox();
  await prepare?.(sb);
  const config = await sb.scriptedConfig(scripts);
  const wire = spawnWire(sb, ["--config-file", config, ...extraArgs]);
  const init = await wire.call("init", "initialize", { protocol_version: "1.10" });
  assertEquals(init.response.result.protocol_version, "1.10");
  return { sb, wire };
}

/** The approval payload without its two uuids, after checking them. */
function approvalPayload(req: WireLine): Record<string, unknown> {
  assertEquals(req.params.type, "ApprovalRequest");
  assert(UUID_RE.test(req.id), req.id);
  const { id, source_id, ...rest } = req.params.payload;
  assertEquals(id, req.id);
  assert(UUID_RE.test(source_id), source_id);
  return rest;
}

const answer = (response: string, feedback?: string) => (msg: WireLine) => ({
  request_id: msg.params.payload.id,
  response,
  ...(feedback === undefined ? {} : { feedback }),
});

Deno.test("wire tools: WriteFile approval (edit file, diff display), approve writes the file", async () => {
  const { sb, wire } = await start([`text: write\n${WRITE_HELLO}`, "text: done"]);
  try {
    const path = `${sb.workDir}/file.txt`;
    const diff = {
      type: "diff",
      path,
      old_text: "",
      new_text: "hello",
      old_start: 1,
      new_start: 1,
      is_summary: false,
    };
    const { lines, response } = await wire.call(
      "p-1",
      "prompt",
      { user_input: "write file" },
      answer("approve"),
    );
    const reqs = requests(lines);
    assertEquals(reqs.length, 1);
    assertEquals(approvalPayload(reqs[0]), {
      tool_call_id: "tc-1",
      sender: "WriteFile",
      action: "edit file",
      description: `Write file \`${path}\``,
      source_kind: "foreground_turn",
      agent_id: null,
      subagent_type: null,
      source_description: null,
      display: [diff],
    });
    assertEquals(events(lines), [
      { type: "TurnBegin", payload: { user_input: "write file" } },
      { type: "StepBegin", payload: { n: 1 } },
      { type: "ContentPart", payload: { type: "text", text: "write" } },
      {
        type: "ToolCall",
        payload: {
          type: "function",
          id: "tc-1",
          function: {
            name: "WriteFile",
            arguments: '{"path":"file.txt","content":"hello","mode":"overwrite"}',
          },
          extras: null,
        },
      },
      { type: "StatusUpdate", payload: NULL_STATUS },
      {
        type: "ApprovalResponse",
        payload: { request_id: reqs[0].id, response: "approve", feedback: "" },
      },
      {
        type: "ToolResult",
        payload: {
          tool_call_id: "tc-1",
          return_value: {
            is_error: false,
            output: "",
            message: "File successfully overwritten. Current size: 5 bytes.",
            display: [diff],
            extras: null,
          },
        },
      },
      { type: "StepBegin", payload: { n: 2 } },
      { type: "ContentPart", payload: { type: "text", text: "done" } },
      { type: "StatusUpdate", payload: NULL_STATUS },
      { type: "TurnEnd", payload: {} },
    ]);
    assertEquals(response.result, { status: "finished" });
    assertEquals(await Deno.readTextFile(path), "hello");
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire tools: StrReplaceFile approval (hello → hi diff), approve edits the file", async () => {
  const { sb, wire } = await start(
    [`text: replace\n${REPLACE_HELLO}`, "text: done"],
    [],
    (sb) => Deno.writeTextFile(`${sb.workDir}/file.txt`, "hello"),
  );
  try {
    const path = `${sb.workDir}/file.txt`;
    const diff = {
      type: "diff",
      path,
      old_text: "hello",
      new_text: "hi",
      old_start: 1,
      new_start: 1,
      is_summary: false,
    };
    const { lines, response } = await wire.call(
      "p-1",
      "prompt",
      { user_input: "replace" },
      answer("approve"),
    );
    const reqs = requests(lines);
    assertEquals(reqs.length, 1);
    assertEquals(approvalPayload(reqs[0]), {
      tool_call_id: "tc-1",
      sender: "StrReplaceFile",
      action: "edit file",
      description: `Edit file \`${path}\``,
      source_kind: "foreground_turn",
      agent_id: null,
      subagent_type: null,
      source_description: null,
      display: [diff],
    });
    assertEquals(toolResult(lines), {
      tool_call_id: "tc-1",
      return_value: {
        is_error: false,
        output: "",
        message: "File successfully edited. Applied 1 edit(s) with 1 total replacement(s).",
        display: [diff],
        extras: null,
      },
    });
    assertEquals(types(lines), [
      "TurnBegin",
      "StepBegin",
      "ContentPart",
      "ToolCall",
      "StatusUpdate",
      "ApprovalResponse",
      "ToolResult",
      "StepBegin",
      "ContentPart",
      "StatusUpdate",
      "TurnEnd",
    ]);
    assertEquals(response.result, { status: "finished" });
    assertEquals(await Deno.readTextFile(path), "hi");
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire tools: WriteFile rejected with feedback → feedback message, turn goes on to step 2", async () => {
  const { sb, wire } = await start([`text: write\n${WRITE_HELLO}`, "text: ok, not writing"]);
  try {
    const { lines, response } = await wire.call(
      "p-1",
      "prompt",
      { user_input: "write file" },
      answer("reject", "write it to notes.txt instead"),
    );
    const reqs = requests(lines);
    assertEquals(reqs.length, 1);
    assertEquals(events(lines).find((e) => e.type === "ApprovalResponse")?.payload, {
      request_id: reqs[0].id,
      response: "reject",
      feedback: "write it to notes.txt instead",
    });
    assertEquals(toolResult(lines), {
      tool_call_id: "tc-1",
      return_value: {
        is_error: true,
        output: "",
        message:
          "The tool call is rejected by the user. User feedback: write it to notes.txt instead",
        display: [{ type: "brief", text: "Rejected: write it to notes.txt instead" }],
        extras: null,
      },
    });
    assertEquals(events(lines).slice(-4), [
      { type: "StepBegin", payload: { n: 2 } },
      { type: "ContentPart", payload: { type: "text", text: "ok, not writing" } },
      { type: "StatusUpdate", payload: NULL_STATUS },
      { type: "TurnEnd", payload: {} },
    ]);
    assertEquals(response.result, { status: "finished" });
    assertEquals(await Deno.stat(`${sb.workDir}/file.txt`).then(() => true, () => false), false);
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire tools: approve_for_session on WriteFile → the next prompt's WriteFile asks nothing", async () => {
  const { sb, wire } = await start([
    `text: write\n${WRITE_HELLO}`,
    "text: done",
    toolCallLine("tc-2", "WriteFile", { path: "other.txt", content: "again" }),
    "text: done again",
  ]);
  try {
    const first = await wire.call(
      "p-1",
      "prompt",
      { user_input: "write file" },
      answer("approve_for_session"),
    );
    const reqs = requests(first.lines);
    assertEquals(reqs.length, 1);
    assertEquals(reqs[0].params.payload.action, "edit file");
    assertEquals(events(first.lines).find((e) => e.type === "ApprovalResponse")?.payload, {
      request_id: reqs[0].id,
      response: "approve_for_session",
      feedback: "",
    });
    assertEquals(toolResult(first.lines)?.return_value.is_error, false);
    assertEquals(first.response.result, { status: "finished" });

    const second = await wire.call("p-2", "prompt", { user_input: "write another" }, () => {
      throw new Error("no request expected after approve_for_session");
    });
    assertEquals(requests(second.lines), []);
    assertEquals(types(second.lines).includes("ApprovalResponse"), false);
    assertEquals(toolResult(second.lines, "tc-2"), {
      tool_call_id: "tc-2",
      return_value: {
        is_error: false,
        output: "",
        message: "File successfully overwritten. Current size: 5 bytes.",
        display: [{
          type: "diff",
          path: `${sb.workDir}/other.txt`,
          old_text: "",
          new_text: "again",
          old_start: 1,
          new_start: 1,
          is_summary: false,
        }],
        extras: null,
      },
    });
    assertEquals(second.response.result, { status: "finished" });
    assertEquals(await Deno.readTextFile(`${sb.workDir}/file.txt`), "hello");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/other.txt`), "again");
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire tools: --yolo runs WriteFile and StrReplaceFile without any request", async () => {
  const { sb, wire } = await start(
    [
      `text: write\n${WRITE_HELLO}`,
      toolCallLine("tc-2", "StrReplaceFile", {
        path: "file.txt",
        edit: { old: "hello", new: "hi" },
      }),
      "text: done",
    ],
    ["--yolo"],
  );
  try {
    const { lines, response } = await wire.call(
      "p-1",
      "prompt",
      { user_input: "edit" },
      () => {
        throw new Error("no request expected with --yolo");
      },
    );
    assertEquals(requests(lines), []);
    assertEquals(types(lines).includes("ApprovalResponse"), false);
    assertEquals(
      toolResult(lines, "tc-1")?.return_value.message,
      "File successfully overwritten. Current size: 5 bytes.",
    );
    assertEquals(
      toolResult(lines, "tc-2")?.return_value.message,
      "File successfully edited. Applied 1 edit(s) with 1 total replacement(s).",
    );
    assertEquals(response.result, { status: "finished" });
    assertEquals(await Deno.readTextFile(`${sb.workDir}/file.txt`), "hi");
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire tools: SetTodoList → output 'Todo list updated' and a todo display block", async () => {
  const { sb, wire } = await start([
    `text: todo\n${
      toolCallLine("tc-1", "SetTodoList", { todos: [{ title: "one", status: "pending" }] })
    }`,
    "text: done",
  ]);
  try {
    const { lines, response } = await wire.call("p-1", "prompt", { user_input: "todo" }, () => {
      throw new Error("SetTodoList needs no approval");
    });
    assertEquals(events(lines), [
      { type: "TurnBegin", payload: { user_input: "todo" } },
      { type: "StepBegin", payload: { n: 1 } },
      { type: "ContentPart", payload: { type: "text", text: "todo" } },
      {
        type: "ToolCall",
        payload: {
          type: "function",
          id: "tc-1",
          function: {
            name: "SetTodoList",
            arguments: '{"todos":[{"title":"one","status":"pending"}]}',
          },
          extras: null,
        },
      },
      { type: "StatusUpdate", payload: NULL_STATUS },
      {
        type: "ToolResult",
        payload: {
          tool_call_id: "tc-1",
          return_value: {
            is_error: false,
            output: "Todo list updated",
            message: "Todo list updated",
            display: [{ type: "todo", items: [{ title: "one", status: "pending" }] }],
            extras: null,
          },
        },
      },
      { type: "StepBegin", payload: { n: 2 } },
      { type: "ContentPart", payload: { type: "text", text: "done" } },
      { type: "StatusUpdate", payload: NULL_STATUS },
      { type: "TurnEnd", payload: {} },
    ]);
    assertEquals(response.result, { status: "finished" });
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
