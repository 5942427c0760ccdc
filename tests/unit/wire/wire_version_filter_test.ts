import { assertEquals } from "../../helpers/assert.ts";
import {
  filterForClient,
  filterForVersion,
  knowsType,
  parseProtocolVersion,
} from "../../../lib/wire/version_filter.ts";

const v = (s: string) => parseProtocolVersion(s);

Deno.test("parseProtocolVersion and knowsType", () => {
  assertEquals(v("1.10"), [1, 10]);
  assertEquals(v(" 1.7 "), [1, 7]);
  assertEquals(v("latest"), null);
  assertEquals(knowsType(v("1.7"), "StepRetry"), false);
  assertEquals(knowsType(v("1.9"), "StepRetry"), false);
  assertEquals(knowsType(v("1.10"), "StepRetry"), true);
  assertEquals(knowsType(v("2.0"), "StepRetry"), true);
  assertEquals(knowsType(v("1.8"), "BtwBegin"), false);
  assertEquals(knowsType(v("1.9"), "BtwEnd"), true);
  assertEquals(knowsType(v("1.6"), "PlanDisplay"), false);
  assertEquals(knowsType(v("1.7"), "PlanDisplay"), true);
  assertEquals(knowsType(v("1.1"), "TurnEnd"), false);
  assertEquals(knowsType(v("1.4"), "SteerInput"), false);
  assertEquals(knowsType(null, "StepRetry"), true);
});

Deno.test("no initialize or unparsable version: everything passes unchanged", () => {
  const env = { type: "StepRetry", payload: { n: 1 } };
  assertEquals(filterForVersion(null, env), env);
  assertEquals(filterForClient({ version: v("x"), name: null }, env), env);
});

Deno.test("a 1.7 client never gets StepRetry/BtwBegin/BtwEnd but gets PlanDisplay", () => {
  const c = v("1.7");
  assertEquals(filterForVersion(c, { type: "StepRetry", payload: {} }), null);
  assertEquals(
    filterForVersion(c, { type: "BtwBegin", payload: { id: "1", question: "q" } }),
    null,
  );
  assertEquals(filterForVersion(c, { type: "BtwEnd", payload: { id: "1" } }), null);
  assertEquals(
    filterForVersion(c, { type: "PlanDisplay", payload: { content: "p", file_path: "/f" } }),
    {
      type: "PlanDisplay",
      payload: { content: "p", file_path: "/f" },
    },
  );
});

Deno.test("DiffDisplayBlock.is_summary needs 1.8, in ToolResult and ApprovalRequest", () => {
  const diff = {
    type: "diff",
    path: "a",
    old_text: "",
    new_text: "x",
    old_start: 1,
    new_start: 1,
    is_summary: false,
  };
  const tr = {
    type: "ToolResult",
    payload: {
      tool_call_id: "t",
      return_value: { is_error: false, output: "", message: "", display: [diff], extras: null },
    },
  };
  const { is_summary: _, ...diffOld } = diff;
  assertEquals(filterForVersion(v("1.7"), tr)!.payload.return_value, {
    is_error: false,
    output: "",
    message: "",
    display: [diffOld],
    extras: null,
  });
  assertEquals(filterForVersion(v("1.8"), tr), tr);
  // input not modified
  assertEquals((tr.payload.return_value.display[0] as typeof diff).is_summary, false);
  const ar = { type: "ApprovalRequest", payload: { id: "a", display: [diff] } };
  assertEquals(filterForVersion(v("1.7"), ar)!.payload.display, [diffOld]);
});

Deno.test("approval fields and names per version", () => {
  const req = {
    type: "ApprovalRequest",
    payload: {
      id: "a",
      tool_call_id: "t",
      sender: "Shell",
      action: "run command",
      description: "d",
      source_kind: "foreground_turn",
      source_id: "s",
      agent_id: null,
      subagent_type: null,
      source_description: null,
      display: [],
    },
  };
  assertEquals(filterForVersion(v("1.5"), req), {
    type: "ApprovalRequest",
    payload: {
      id: "a",
      tool_call_id: "t",
      sender: "Shell",
      action: "run command",
      description: "d",
      display: [],
    },
  });
  assertEquals(filterForVersion(v("1.6"), req), req);
  const resp = {
    type: "ApprovalResponse",
    payload: { request_id: "a", response: "reject", feedback: "" },
  };
  assertEquals(filterForVersion(v("1.5"), resp), {
    type: "ApprovalResponse",
    payload: { request_id: "a", response: "reject" },
  });
  assertEquals(filterForVersion(v("1.0"), resp), {
    type: "ApprovalRequestResolved",
    payload: { request_id: "a", response: "reject" },
  });
});

Deno.test("SubagentEvent field names per version and nested filtering", () => {
  const sub = (inner: { type: string; payload: Record<string, unknown> }) => ({
    type: "SubagentEvent",
    payload: { parent_tool_call_id: "tc", agent_id: "ag", subagent_type: "coder", event: inner },
  });
  const text = { type: "ContentPart", payload: { type: "text", text: "hi" } };
  assertEquals(filterForVersion(v("1.5"), sub(text)), {
    type: "SubagentEvent",
    payload: { task_tool_call_id: "tc", event: text },
  });
  assertEquals(filterForVersion(v("1.6"), sub(text)), sub(text));
  assertEquals(filterForVersion(v("1.9"), sub({ type: "StepRetry", payload: {} })), null);
});

Deno.test("kimi-agent-sdk quirks: no PlanDisplay, SubagentEvent needs a parent id", () => {
  const sdk = { version: v("1.7"), name: "kimi-agent-sdk/0.1.8" };
  assertEquals(
    filterForClient(sdk, { type: "PlanDisplay", payload: { content: "", file_path: "" } }),
    null,
  );
  const orphan = {
    type: "SubagentEvent",
    payload: {
      parent_tool_call_id: null,
      agent_id: null,
      subagent_type: null,
      event: { type: "TurnEnd", payload: {} },
    },
  };
  assertEquals(filterForClient(sdk, orphan), null);
  assertEquals(filterForClient({ version: v("1.7"), name: "other" }, orphan), orphan);
  const turnEnd = { type: "TurnEnd", payload: {} };
  assertEquals(filterForClient(sdk, turnEnd), turnEnd);
});

Deno.test("approval rule choices: fields and approve_always only from wire 1.11", () => {
  const req = {
    type: "ApprovalRequest",
    payload: {
      id: "r",
      action: "run command",
      display: [],
      grant_patterns: ["Shell(git status *)"],
      rule_file: "/c.toml",
      options: [{ id: "approve", label: "Approve once" }],
    },
  };
  assertEquals(filterForVersion(v("1.10"), req)!.payload, {
    id: "r",
    action: "run command",
    display: [],
  });
  assertEquals(filterForVersion(v("1.11"), req)!.payload, req.payload);
  const resp = {
    type: "ApprovalResponse",
    payload: { request_id: "r", response: "approve_always", feedback: "" },
  };
  assertEquals(filterForVersion(v("1.10"), resp)!.payload.response, "approve_for_session");
  assertEquals(filterForVersion(v("1.11"), resp)!.payload.response, "approve_always");
  assertEquals(filterForVersion(null, resp)!.payload.response, "approve_always");
});

Deno.test("Notification events exist from 1.10 on, as the reference sends them", () => {
  const note = {
    type: "Notification",
    payload: { id: "n1", category: "task", type: "task.completed", title: "t" },
  };
  assertEquals(knowsType(v("1.9"), "Notification"), false);
  assertEquals(filterForVersion(v("1.9"), note), null);
  assertEquals(filterForVersion(v("1.10"), note), note);
  assertEquals(filterForVersion(v("1.11"), note), note);
  assertEquals(filterForVersion(v("1.12"), note), note);
  assertEquals(filterForVersion(null, note), note);
});

Deno.test("version filter: GoalUpdate and SwarmUpdate reach 1.12 clients only", () => {
  const goal = { type: "GoalUpdate", payload: { goal: null, queue: [], outcome: null } };
  const swarm = { type: "SwarmUpdate", payload: { swarm_id: "s" } };
  for (const env of [goal, swarm]) {
    assertEquals(filterForVersion([1, 11], env), null);
    assertEquals(filterForVersion([1, 12], env), env);
    assertEquals(filterForVersion(null, env), env);
  }
});
