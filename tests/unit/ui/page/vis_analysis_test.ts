/**
 * The analyses of `kimi vis` over wire records: decision path, integrity check, tool statistics,
 * usage series and axis ticks, with exact expectations. The records are the ones a print run with
 * the scripted provider writes (thinking, a failing Shell call, StatusUpdates), plus crafted
 * anomalies.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import { buildTimeline, type VisEvent } from "../../../../lib/ui/web/page/timeline.ts";
import {
  axisTicks,
  checkIntegrity,
  decisionPath,
  formatDuration,
  summarizeArgs,
  timeAxis,
  toolStats,
  usageSeries,
} from "../../../../lib/ui/web/page/vis_analysis.ts";

function events(records: [number, string, Record<string, unknown>][]): VisEvent[] {
  return records.map(([timestamp, type, payload], index) => ({ index, timestamp, type, payload }));
}

function call(id: string, name: string, args: string): Record<string, unknown> {
  return { type: "function", id, function: { name, arguments: args }, extras: null };
}

function result(id: string, isError: boolean, output = "", message = ""): Record<string, unknown> {
  return { tool_call_id: id, return_value: { is_error: isError, output, message, display: [] } };
}

function status(context: number, input: number, output: number): Record<string, unknown> {
  return {
    context_usage: context,
    token_usage: { input_other: input, output, input_cache_read: 5, input_cache_creation: 0 },
  };
}

/** What a print run records: two turns, thinking, a failing Shell call, a ReadFile call. */
const SESSION = events([
  [1000, "TurnBegin", { user_input: "list files please" }], // 0
  [1000.016, "StepBegin", { n: 1 }], // 1
  [1000.018, "ContentPart", { type: "think", think: "I should run it", encrypted: null }], // 2
  [1000.021, "ContentPart", { type: "text", text: "Let me look." }], // 3
  [1000.5, "ToolCall", call("tc-1", "Shell", '{"command": "echo vis-ok; exit 3"}')], // 4
  [1000.6, "StatusUpdate", status(0.0012, 120, 30)], // 5
  [1002.75, "ToolResult", result("tc-1", true, "vis-ok\n", "Command failed with exit code: 3.")], // 6
  [1003, "StepBegin", { n: 2 }], // 7
  [1003.1, "ContentPart", { type: "text", text: "All done here." }], // 8
  [1003.2, "StatusUpdate", { context_usage: 0.002, token_usage: null }], // 9
  [1003.3, "TurnEnd", {}], // 10
  [1010, "TurnBegin", { user_input: [{ type: "text", text: "read it" }] }], // 11
  [1010.1, "StepBegin", { n: 1 }], // 12
  [1010.2, "ToolCall", call("tc-2", "ReadFile", '{"path": "a.txt", "line_offset": 2}')], // 13
  [1010.45, "ToolResult", result("tc-2", false, "hello")], // 14
  [1010.5, "ToolCall", call("tc-3", "Shell", '{"command": "ls"}')], // 15
  [1011, "ToolResult", result("tc-3", false, "a.txt")], // 16
  [1011.1, "StatusUpdate", status(0.5, 300, 7)], // 17
  [1011.2, "TurnEnd", {}], // 18
]);

Deno.test("vis analysis: the decision path links thinking, each call and its result per turn", () => {
  assertEquals(decisionPath(SESSION), [
    {
      n: 1,
      index: 0,
      input: "list files please",
      links: [{
        thinking: { indices: [2], text: "I should run it" },
        call: { index: 4, id: "tc-1", name: "Shell", args: "command=echo vis-ok; exit 3" },
        result: {
          index: 6,
          error: true,
          output: "Command failed with exit code: 3. — vis-ok",
          durationSec: 1002.75 - 1000.5,
        },
      }],
    },
    {
      n: 2,
      index: 11,
      input: "read it",
      links: [
        {
          thinking: null,
          call: { index: 13, id: "tc-2", name: "ReadFile", args: "path=a.txt, line_offset=2" },
          result: { index: 14, error: false, output: "hello", durationSec: 1010.45 - 1010.2 },
        },
        {
          thinking: null,
          call: { index: 15, id: "tc-3", name: "Shell", args: "command=ls" },
          result: { index: 16, error: false, output: "a.txt", durationSec: 1011 - 1010.5 },
        },
      ],
    },
  ]);
});

Deno.test("vis analysis: a turn without tool calls has no decision path; numbering follows the timeline", () => {
  const evs = events([
    [1, "TurnBegin", { user_input: "hi" }],
    [2, "ContentPart", { type: "text", text: "hello" }],
    [3, "TurnEnd", {}],
    [4, "TurnBegin", { user_input: "go" }],
    [5, "ToolCall", call("x", "Glob", "not json")],
  ]);
  assertEquals(decisionPath(evs), [{
    n: 2,
    index: 3,
    input: "go",
    links: [{
      thinking: null,
      call: { index: 4, id: "x", name: "Glob", args: "not json" },
      result: null,
    }],
  }]);
});

Deno.test("vis analysis: a clean session has no integrity finding", () => {
  assertEquals(checkIntegrity(SESSION), []);
  assertEquals(checkIntegrity([]), []);
});

Deno.test("vis analysis: the integrity check names every planted anomaly with its record", () => {
  const evs = events([
    [10, "StepBegin", { n: 1 }], // 0: outside a turn
    [11, "TurnBegin", { user_input: "a" }], // 1: never ended
    [12, "StepBegin", { n: 1 }], // 2
    [13, "ToolCall", call("c1", "Shell", "{}")], // 3: no result
    [12.5, "ToolResult", result("ghost", false)], // 4: no call; time goes back
    [14, "ApprovalRequest", { id: "r1", sender: "Shell", action: "run command" }], // 5
    [15, "TurnBegin", { user_input: "b" }], // 6
    [16, "ToolCall", call("c2", "ReadFile", "{}")], // 7
    [17, "ToolResult", result("c2", false)], // 8
    [18, "ToolCall", call("c2", "ReadFile", "{}")], // 9: duplicate id
    [19, "ToolResult", result("c2", false)], // 10
    [20, "ApprovalRequest", { id: "r2", sender: "WriteFile", action: "edit file" }], // 11
    [21, "ApprovalResponse", { request_id: "r2", response: "approve" }], // 12
    [22, "ToolCall", call("c4", "Shell", "{}")], // 13: in the open last turn
  ]);
  assertEquals(checkIntegrity(evs, { skippedLines: 2 }), [
    {
      kind: "step_outside_turn",
      severity: "error",
      index: 0,
      message: "StepBegin #0 is outside any turn",
    },
    {
      kind: "turn_without_end",
      severity: "error",
      index: 1,
      message: "TurnBegin #1 has no TurnEnd before the next turn (#6)",
    },
    {
      kind: "tool_call_without_result",
      severity: "error",
      index: 3,
      message: "ToolCall Shell (id c1) #3 has no ToolResult",
    },
    {
      kind: "time_backwards",
      severity: "warning",
      index: 4,
      message: "ToolResult #4 is timestamped 0.500 s before record #3",
    },
    {
      kind: "tool_result_without_call",
      severity: "error",
      index: 4,
      message: "ToolResult #4 answers id ghost, which no open ToolCall has",
    },
    {
      kind: "approval_without_response",
      severity: "error",
      index: 5,
      message: "ApprovalRequest #5 (Shell: run command) has no response",
    },
    {
      kind: "turn_still_open",
      severity: "warning",
      index: 6,
      message: "The last turn (TurnBegin #6) has no TurnEnd: still running or interrupted",
    },
    {
      kind: "duplicate_tool_call_id",
      severity: "error",
      index: 9,
      message: "ToolCall ReadFile #9 reuses the id c2 of ToolCall #7",
    },
    {
      kind: "tool_call_without_result",
      severity: "warning",
      index: 13,
      message:
        "ToolCall Shell (id c4) #13 has no ToolResult (the turn is still running or was interrupted)",
    },
    {
      kind: "skipped_lines",
      severity: "warning",
      index: -1,
      message: "2 line(s) of wire.jsonl could not be read (malformed or torn)",
    },
  ]);
});

Deno.test("vis analysis: tool statistics count calls, errors and durations per tool", () => {
  const stats = toolStats([
    ...SESSION,
    ...events([[1012, "ToolCall", call("tc-9", "Shell", "{}")]]).map((e) => ({ ...e, index: 19 })),
  ]);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  assertEquals(
    stats.map((s) => ({
      ...s,
      totalSec: round(s.totalSec),
      meanSec: round(s.meanSec),
      maxSec: round(s.maxSec),
    })),
    [
      {
        name: "Shell",
        calls: 3,
        errors: 1,
        pending: 1,
        totalSec: 2.75,
        meanSec: 1.375,
        maxSec: 2.25,
      },
      {
        name: "ReadFile",
        calls: 1,
        errors: 0,
        pending: 0,
        totalSec: 0.25,
        meanSec: 0.25,
        maxSec: 0.25,
      },
    ],
  );
  assertEquals(toolStats([]), []);
});

Deno.test("vis analysis: the usage series has one point per StatusUpdate with usage", () => {
  const series = usageSeries(SESSION).map((p) => ({
    ...p,
    timeSec: Math.round(p.timeSec * 1000) / 1000,
  }));
  assertEquals(series, [
    { index: 5, timeSec: 0.6, context: 0.0012, input: 125, output: 30 },
    { index: 9, timeSec: 3.2, context: 0.002, input: null, output: null },
    { index: 17, timeSec: 11.1, context: 0.5, input: 305, output: 7 },
  ]);
  assertEquals(
    usageSeries(events([[1, "StatusUpdate", { context_usage: null, plan_mode: true }]])),
    [],
  );
});

Deno.test("vis analysis: arguments summaries, axis ticks and durations", () => {
  assertEquals(
    summarizeArgs('{"command": "ls -la", "timeout": 5, "env": {"A": "1"}}'),
    'command=ls -la, timeout=5, env={"A":"1"}',
  );
  assertEquals(summarizeArgs("[1, 2]"), "[1, 2]");
  assertEquals(summarizeArgs(undefined), "");
  assertEquals(summarizeArgs(`{"text": "${"x".repeat(200)}"}`).length, 160);
  assertEquals(axisTicks(305), [0, 100, 200, 300, 400]);
  assertEquals(axisTicks(0.5), [0, 0.2, 0.4, 0.6]);
  assertEquals(axisTicks(0.002), [0, 0.0005, 0.001, 0.0015, 0.002]);
  assertEquals(axisTicks(0), [0]);
  assertEquals(timeAxis(0.023), {
    ticks: [0, 0.01, 0.02, 0.03],
    labels: ["0 s", "0.01 s", "0.02 s", "0.03 s"],
  });
  assertEquals(timeAxis(600), {
    ticks: [0, 300, 600],
    labels: ["0 min", "5 min", "10 min"],
  });
  assertEquals(timeAxis(9000).labels, ["0 h", "1 h", "2 h", "3 h"]);
  assertEquals(formatDuration(0.0015), "2 ms");
  assertEquals(formatDuration(2.25), "2.25 s");
  assertEquals(formatDuration(90), "1.5 min");
});

Deno.test("vis timeline: records outside any step stay in their turn", () => {
  const evs = events([
    [1, "TurnBegin", { user_input: "go" }],
    [2, "StatusUpdate", { context_usage: 0.1 }],
    [3, "StepBegin", { n: 1 }],
    [4, "ContentPart", { type: "text", text: "hi" }],
    [5, "TurnEnd", {}],
    [6, "ToolCall", call("late", "Glob", "{}")],
  ]);
  const [turn] = buildTimeline(evs);
  assertEquals(turn.loose.map((e) => [e.index, e.type]), [[1, "StatusUpdate"], [5, "ToolCall"]]);
  assertEquals(turn.steps.map((s) => s.events.map((e) => e.index)), [[3]]);
});

Deno.test("vis analysis: records with a null, string or odd payload are read, never thrown on", () => {
  const odd = [null, "text", 5, [], { function: "Shell", return_value: 3, token_usage: "x" }];
  const evs: VisEvent[] = ["TurnBegin", "StepBegin", "ToolCall", "ToolResult", "StatusUpdate"]
    .flatMap((type) => odd.map((payload) => ({ type, payload }))).map((e, index) => ({
      index,
      timestamp: index,
      type: e.type,
      payload: e.payload as unknown as Record<string, unknown>,
    }));
  assertEquals(buildTimeline(evs).length, 5);
  assertEquals(decisionPath(evs).flatMap((t) => t.links.map((l) => l.call.name)), [
    "?",
    "?",
    "?",
    "?",
    "?",
  ]);
  assertEquals(toolStats(evs).map((s) => [s.name, s.calls, s.pending]), [["?", 5, 5]]);
  assertEquals(usageSeries(evs), []);
  assertEquals(checkIntegrity(evs).map((f) => f.kind), [
    "turn_without_end",
    "turn_without_end",
    "turn_without_end",
    "turn_without_end",
    "turn_still_open",
    "tool_call_without_result",
    "tool_call_without_result",
    "tool_call_without_result",
    "tool_call_without_result",
    "tool_call_without_result",
    "tool_result_without_call",
    "tool_result_without_call",
    "tool_result_without_call",
    "tool_result_without_call",
    "tool_result_without_call",
  ]);
});
