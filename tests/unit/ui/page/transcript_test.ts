/**
 * The chat view model of the web page: replayed (merged) and live (raw) wire messages fold into
 * the same turns; approvals wait until answered; upload wrappers become file names.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import {
  applyWireMessage,
  emptyTranscript,
  markApprovalAnswered,
  type Transcript,
  userInputView,
} from "../../../../lib/ui/web/page/transcript.ts";

function event(type: string, payload: unknown) {
  return { jsonrpc: "2.0", method: "event", params: { type, payload } };
}

function feed(t: Transcript, msgs: unknown[]): Transcript {
  for (const m of msgs) applyWireMessage(t, m);
  return t;
}

const toolCall = (id: string, name: string, args: string | null) =>
  event("ToolCall", { type: "function", id, function: { name, arguments: args }, extras: null });

Deno.test("transcript: live chunks and a merged replay give the same turn", () => {
  const live = feed(emptyTranscript(), [
    event("TurnBegin", { user_input: "hello" }),
    event("StepBegin", { n: 1 }),
    event("ContentPart", { type: "think", think: "hm", encrypted: null }),
    event("ContentPart", { type: "text", text: "# Ti" }),
    event("ContentPart", { type: "text", text: "tle\n" }),
    toolCall("tc-1", "Shell", null),
    event("ToolCallPart", { arguments_part: '{"command": ' }),
    event("ToolCallPart", { arguments_part: '"ls"}' }),
    event("ToolResult", {
      tool_call_id: "tc-1",
      return_value: { is_error: false, output: "a\n", message: "", display: [], extras: null },
    }),
    event("TurnEnd", {}),
  ]);
  const replay = feed(emptyTranscript(), [
    event("TurnBegin", { user_input: "hello" }),
    event("StepBegin", { n: 1 }),
    event("ContentPart", { type: "think", think: "hm", encrypted: null }),
    event("ContentPart", { type: "text", text: "# Title\n" }),
    toolCall("tc-1", "Shell", '{"command": "ls"}'),
    event("ToolResult", {
      tool_call_id: "tc-1",
      return_value: { is_error: false, output: "a\n", message: "", display: [], extras: null },
    }),
    event("TurnEnd", {}),
  ]);
  assertEquals(live.turns, replay.turns);
  assertEquals(live.turns.length, 1);
  const [think, text, tool] = live.turns[0].blocks;
  assertEquals(think, { kind: "think", text: "hm" });
  assertEquals(text, { kind: "text", text: "# Title\n" });
  assertEquals(tool.kind === "tool" && tool.args, '{"command": "ls"}');
  assertEquals(tool.kind === "tool" && tool.result?.output, "a\n");
  assertEquals(live.turns[0].ended, true);
});

Deno.test("transcript: an approval waits until its response; a replayed answered one never waits", () => {
  const request = {
    jsonrpc: "2.0",
    method: "request",
    id: "ap-1",
    params: {
      type: "ApprovalRequest",
      payload: {
        id: "ap-1",
        tool_call_id: "tc-1",
        sender: "Shell",
        action: "run command",
        description: "Run command `ls`",
        display: [{ type: "shell", language: "bash", command: "ls" }],
      },
    },
  };
  const t = feed(emptyTranscript(), [event("TurnBegin", { user_input: "x" }), request]);
  assertEquals(t.approvals.map((a) => [a.id, a.sender, a.action]), [[
    "ap-1",
    "Shell",
    "run command",
  ]]);
  // The same request again (re-sent at initialize) is not a second card.
  applyWireMessage(t, request);
  assertEquals(t.approvals.length, 1);
  // This tab answers: the card goes at once, the note keeps who asked once the server confirms.
  markApprovalAnswered(t, "ap-1");
  assertEquals(t.approvals, []);
  applyWireMessage(t, event("ApprovalResponse", { request_id: "ap-1", response: "approve" }));
  assertEquals(t.approvals, []);
  const note = t.turns[0].blocks.at(-1);
  assertEquals(note?.kind === "approval" && [note.response, note.sender], ["approve", "Shell"]);
  // Replayed after its answer: it stays answered.
  applyWireMessage(t, request);
  assertEquals(t.approvals, []);
  // A turn's end drops whatever still waited.
  applyWireMessage(t, {
    ...request,
    id: "ap-2",
    params: { ...request.params, payload: { ...request.params.payload, id: "ap-2" } },
  });
  assertEquals(t.approvals.length, 1);
  applyWireMessage(t, event("TurnEnd", {}));
  assertEquals(t.approvals, []);
});

Deno.test("transcript: questions, todos, usage and subagent steps", () => {
  const t = feed(emptyTranscript(), [
    event("TurnBegin", { user_input: "x" }),
    toolCall("agent-1", "Agent", '{"description": "look"}'),
    event("SubagentEvent", {
      parent_tool_call_id: "agent-1",
      agent_id: "a1",
      subagent_type: "explore",
      event: { type: "ContentPart", payload: { type: "text", text: "inner text" } },
    }),
    event("ToolResult", {
      tool_call_id: "t2",
      return_value: { is_error: false, output: "", message: "", display: [], extras: null },
    }),
    toolCall("todo-1", "SetTodoList", "{}"),
    event("ToolResult", {
      tool_call_id: "todo-1",
      return_value: {
        is_error: false,
        output: "",
        message: "",
        display: [{
          type: "todo",
          items: [{ title: "a", status: "done" }, { title: "b", status: "pending" }],
        }],
        extras: null,
      },
    }),
    event("StatusUpdate", {
      context_usage: 0.25,
      context_tokens: 250,
      max_context_tokens: 1000,
      plan_mode: true,
    }),
    {
      jsonrpc: "2.0",
      method: "request",
      id: "q-1",
      params: {
        type: "QuestionRequest",
        payload: {
          id: "q-1",
          tool_call_id: "tc-q",
          questions: [{
            question: "Which?",
            header: "Pick",
            options: [{ label: "A", description: "" }],
            multi_select: true,
          }],
        },
      },
    },
  ]);
  const agent = t.turns[0].blocks[0];
  assertEquals(agent.kind === "tool" && agent.subagent?.type, "explore");
  assertEquals(agent.kind === "tool" && agent.subagent?.blocks, [{
    kind: "text",
    text: "inner text",
  }]);
  assertEquals(t.todos, [{ title: "a", status: "done" }, { title: "b", status: "pending" }]);
  assertEquals(t.usage, {
    contextUsage: 0.25,
    contextTokens: 250,
    maxContextTokens: 1000,
    planMode: true,
  });
  assertEquals(t.questions.map((q) => [q.id, q.questions[0].multiSelect]), [["q-1", true]]);
});

Deno.test("transcript: the server's upload wrappers become file names", () => {
  assertEquals(
    userInputView([
      {
        type: "text",
        text:
          "<uploaded_files>\n1. /s/uploads/red_39e30d.png\n2. /s/uploads/a.txt\n</uploaded_files>",
      },
      { type: "text", text: '<image path="/s/uploads/red_39e30d.png" content_type="image/png">' },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAA", id: null } },
      { type: "text", text: "</image>" },
      {
        type: "text",
        text: '<document path="/s/uploads/a.txt" content_type="text/plain">hi</document>',
      },
      { type: "text", text: "What is it?" },
    ]),
    {
      text: "What is it?",
      images: ["data:image/png;base64,AAA"],
      files: ["red_39e30d.png", "a.txt"],
    },
  );
  assertEquals(userInputView("KIMI_FILE_UPLOAD_WITHOUT_MESSAGE").text, "");
  assertEquals(userInputView("plain").text, "plain");
});

Deno.test("transcript: goal updates and swarm progress", () => {
  const t = feed(emptyTranscript(), [
    event("TurnBegin", { user_input: "x" }),
    toolCall("sw-1", "AgentSwarm", "{}"),
    event("SwarmUpdate", {
      swarm_id: "s",
      parent_tool_call_id: "sw-1",
      description: "review files",
      total: 4,
      concurrency: 2,
      counts: { pending: 1, running: 1, ok: 1, error: 1, cancelled: 0 },
      item: null,
      done: false,
    }),
    event("GoalUpdate", {
      goal: {
        id: "g",
        objective: "ship it",
        status: "active",
        reason: null,
        notes: [],
        budget: { max_turns: 10, max_steps: null, max_tokens: null, max_seconds: null },
        usage: { turns: 3, steps: 9, tokens: 1200, seconds: 4 },
        created_at: 0,
        updated_at: 0,
      },
      queue: [],
      outcome: null,
    }),
  ]);
  const swarm = t.turns[0].blocks[0];
  assertEquals(swarm.kind === "tool" && swarm.swarm?.counts.ok, 1);
  assertEquals(swarm.kind === "tool" && swarm.swarm?.total, 4);
  assertEquals(t.goal, {
    objective: "ship it",
    status: "active",
    reason: null,
    turns: [3, 10],
    tokens: [1200, null],
  });
  applyWireMessage(t, event("GoalUpdate", { goal: null, queue: [], outcome: "completed" }));
  assertEquals(t.goal, null);
  assertEquals(t.turns[0].blocks.at(-1), { kind: "notice", text: "Goal completed", tone: "info" });
});

Deno.test("transcript: the texts of two steps (or of a subagent's two turns) stay two paragraphs", () => {
  const t = feed(emptyTranscript(), [
    event("TurnBegin", { user_input: "go" }),
    event("StepBegin", { n: 1 }),
    event("ContentPart", { type: "text", text: "First step." }),
    event("StepBegin", { n: 2 }),
    event("ContentPart", { type: "text", text: "Second step." }),
    toolCall("tc-a", "Agent", '{"description": "look"}'),
    ...[
      event("TurnBegin", { user_input: "look" }),
      event("StepBegin", { n: 1 }),
      event("ContentPart", { type: "text", text: "Found 30 files." }),
      event("TurnBegin", { user_input: "summarize more" }),
      event("StepBegin", { n: 1 }),
      event("ContentPart", { type: "text", text: "All done." }),
    ].map((e) =>
      event("SubagentEvent", {
        parent_tool_call_id: "tc-a",
        agent_id: "a1",
        subagent_type: "coder",
        event: e.params,
      })
    ),
  ]);
  const [text, tool] = t.turns[0].blocks;
  assertEquals(text, { kind: "text", text: "First step.\n\nSecond step." });
  assertEquals(tool.kind === "tool" ? tool.subagent?.blocks : null, [
    { kind: "text", text: "Found 30 files.\n\nAll done." },
  ]);
});
