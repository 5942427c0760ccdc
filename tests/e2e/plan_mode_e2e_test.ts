import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";
import { FULL_REMINDER_HEAD } from "../../lib/soul/plan_reminders.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const jsonLines = (s: string): Json[] =>
  s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

async function sessionDir(sb: KimiSandbox, id: string): Promise<string> {
  const dir = (await sb.sessionDirs()).find((d) => d.endsWith(`/${id}`));
  assert(dir, `session ${id} not found`);
  return dir;
}

async function readState(sb: KimiSandbox, id: string): Promise<Json> {
  return JSON.parse(await Deno.readTextFile(`${await sessionDir(sb, id)}/state.json`));
}

/** Wire events recorded in the session's wire.jsonl. */
async function recorded(sb: KimiSandbox, id: string): Promise<{ type: string; payload: Json }[]> {
  const lines = jsonLines(await Deno.readTextFile(`${await sessionDir(sb, id)}/wire.jsonl`));
  return lines.filter((l) => l.message).map((l) => l.message);
}

/** Run a print-mode prompt (stream-json) in session `id`; returns the assistant texts. */
async function printRun(
  sb: KimiSandbox,
  config: string,
  id: string,
  prompt: string,
  extra: string[] = [],
): Promise<Json[]> {
  const r = await sb.run([
    "--print",
    "--output-format",
    "stream-json",
    "--session",
    id,
    "--config-file",
    config,
    ...extra,
    "-p",
    prompt,
  ]);
  assertEquals(r.code, 0, r.stderr);
  return jsonLines(r.stdout);
}

/** `/plan on` in a new session; returns the plan file path it announced. */
async function planOn(sb: KimiSandbox, config: string, id: string): Promise<string> {
  const out = await printRun(sb, config, id, "/plan on");
  const text: string = out[0].content;
  const prefix = "Plan mode ON. Plan file: ";
  assert(text.startsWith(prefix), text);
  const path = text.slice(prefix.length);
  assert(
    new RegExp(`^${sb.home}/\\.kimi/plans/[a-z0-9-]+\\.md$`).test(path),
    `plan file under HOME/.kimi/plans: ${path}`,
  );
  return path;
}

Deno.test("print --plan: only the plan file is writable; ExitPlanMode auto-approves in afk", async () => {
  const sb = await kimiSandbox();
  try {
    const idle = await sb.scriptedConfig(["text: idle"]);
    const planFile = await planOn(sb, idle, "s1");
    const statuses = (await recorded(sb, "s1")).filter((m) => m.type === "StatusUpdate");
    assertEquals(statuses.map((s) => s.payload.plan_mode), [true]);

    // Turn plan mode off, then start again with --plan on the resumed session: it is forced on.
    assertEquals(await printRun(sb, idle, "s1", "/plan off"), [
      { role: "assistant", content: "Plan mode OFF. All tools are now available." },
    ]);
    assertEquals((await readState(sb, "s1")).plan_mode, false);
    const view = await printRun(sb, idle, "s1", "/plan view");
    assertEquals(view, [{ role: "assistant", content: "No plan file found for this session." }]);
    const onAgain = await planOn(sb, idle, "s1");
    assert(onAgain !== planFile, "a new planning session gets a new plan file");
    await printRun(sb, idle, "s1", "/plan off");

    const scripted = async (plan: string) =>
      await sb.scriptedConfig([
        toolCallLine("w1", "WriteFile", { path: "notes.txt", content: "x" }) + "\n" +
        toolCallLine("w2", "WriteFile", { path: plan, content: "# Plan\n1. do it\n" }),
        toolCallLine("x1", "ExitPlanMode", {}),
        toolCallLine("w3", "WriteFile", { path: "notes.txt", content: "after\n" }),
        "text: done",
      ]);
    // --plan turns plan mode on; learn the new plan file from state.json first.
    await printRun(sb, idle, "s1", "/plan view", ["--plan"]);
    const state = await readState(sb, "s1");
    assertEquals(state.plan_mode, true);
    const path = `${sb.home}/.kimi/plans/${state.plan_slug}.md`;
    const out = await printRun(sb, await scripted(path), "s1", "make a plan", ["--plan"]);

    const toolMsgs = out.filter((m) => m.role === "tool");
    assertEquals(toolMsgs[0], {
      role: "tool",
      tool_call_id: "w1",
      content:
        `<system>ERROR: Plan mode is active. You may only edit the current plan file: \`${path}\`.</system>`,
    });
    assertEquals(toolMsgs[1].tool_call_id, "w2");
    assertStringIncludes(JSON.stringify(toolMsgs[1].content), "File successfully overwritten.");
    assertEquals(await Deno.readTextFile(path), "# Plan\n1. do it\n");
    assertEquals(toolMsgs[2].tool_call_id, "x1");
    const exitText = JSON.stringify(toolMsgs[2].content);
    assertStringIncludes(exitText, "Plan approved (auto)");
    assertStringIncludes(exitText, "## Approved Plan:\\n# Plan\\n1. do it\\n");
    assertEquals(toolMsgs[3].tool_call_id, "w3");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/notes.txt`), "after\n");

    const after = await readState(sb, "s1");
    assertEquals([after.plan_mode, after.plan_session_id, after.plan_slug], [false, null, null]);

    const events = await recorded(sb, "s1");
    const exitResult = events.find((m) =>
      m.type === "ToolResult" && m.payload.tool_call_id === "x1"
    )!;
    assertEquals(exitResult.payload.return_value.message, "Plan approved (auto)");
    // afk: no PlanDisplay, no question; the plan-mode switch is reported by a StatusUpdate.
    assertEquals(events.filter((m) => m.type === "PlanDisplay"), []);
    const lastTurn = events.slice(events.findLastIndex((m) => m.type === "TurnBegin"));
    const planStatuses = lastTurn.filter((m) => m.type === "StatusUpdate").map((m) =>
      m.payload.plan_mode
    );
    // Steps 1-2 in plan mode, 3-4 out of it (ExitPlanMode may finish before or after its
    // step's StatusUpdate; when after, an extra StatusUpdate reports the switch).
    assertEquals(planStatuses[0], true);
    assertEquals(planStatuses.at(-1), false);
    assertEquals(planStatuses.slice(planStatuses.indexOf(false)).includes(true), false);
    assert(planStatuses.length === 4 || planStatuses.length === 5, String(planStatuses));

    // The activation reminder went into the context before the first step, once.
    const ctx = jsonLines(await Deno.readTextFile(`${await sessionDir(sb, "s1")}/context.jsonl`));
    const reminders = ctx.filter((m) =>
      m.role === "user" && JSON.stringify(m.content).includes(FULL_REMINDER_HEAD)
    );
    assertEquals(reminders.length, 1);
    assertStringIncludes(JSON.stringify(reminders[0].content), `Plan file: ${path}`);
    assertStringIncludes(JSON.stringify(reminders[0].content), "<system-reminder>\\n");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("/plan view and /plan clear; default_plan_mode applies to new sessions only", async () => {
  const sb = await kimiSandbox();
  try {
    const idle = await sb.scriptedConfig(["text: idle"]);
    const path = await planOn(sb, idle, "v1");
    await Deno.mkdir(`${sb.home}/.kimi/plans`, { recursive: true });
    await Deno.writeTextFile(path, "# My plan\n");
    assertEquals(await printRun(sb, idle, "v1", "/plan view"), [
      { role: "assistant", content: "# My plan\n" },
    ]);
    assertEquals(await printRun(sb, idle, "v1", "/plan clear"), [
      { role: "assistant", content: "Plan cleared." },
    ]);
    assertEquals(await Deno.stat(path).then(() => true, () => false), false);
    assertEquals(await printRun(sb, idle, "v1", "/plan view"), [
      { role: "assistant", content: "No plan file found for this session." },
    ]);
    // Toggle without argument.
    const off = await printRun(sb, idle, "v1", "/plan");
    assertEquals(off, [{
      role: "assistant",
      content: "Plan mode OFF. All tools are now available.",
    }]);
    const on = await printRun(sb, idle, "v1", "/plan");
    // spoken to the user (not "use ExitPlanMode", which is for the model)
    assertStringIncludes(on[0].content, "Plan mode ON. Kimi will explore and write its plan to ");
    assertStringIncludes(on[0].content, "\nType /plan off to leave plan mode yourself.");
    assert(!on[0].content.includes("ExitPlanMode"), on[0].content);
    await printRun(sb, idle, "v1", "/plan off");

    const defaults = await sb.scriptedConfig(["text: hi", "text: hi again"], {
      default_plan_mode: true,
    });
    await printRun(sb, defaults, "n1", "hello");
    assertEquals((await readState(sb, "n1")).plan_mode, true, "new session starts in plan mode");
    await printRun(sb, defaults, "v1", "hello");
    assertEquals((await readState(sb, "v1")).plan_mode, false, "resumed session keeps its state");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: set_plan_mode result and StatusUpdate; ExitPlanMode answered by a QuestionRequest", async () => {
  const sb = await kimiSandbox();
  try {
    const idle = await sb.scriptedConfig(["text: idle"]);
    const planFile = await planOn(sb, idle, "w1");
    const config = await sb.scriptedConfig([
      toolCallLine("w", "WriteFile", { path: planFile, content: "# Wire plan\n" }),
      toolCallLine("x", "ExitPlanMode", {
        options: [{ label: "Quick", description: "fast" }, { label: "Thorough" }],
      }),
      "text: carrying out the plan",
    ]);
    const wire = spawnWire(sb, ["--config-file", config, "--session", "w1"]);
    try {
      await wire.call("init", "initialize", {
        protocol_version: "1.10",
        capabilities: { supports_question: true, supports_plan_mode: true },
      });
      const on = await wire.call("p1", "set_plan_mode", { enabled: true });
      assertEquals(on.response.result, { status: "ok", plan_mode: true });
      assertEquals(on.lines.map((l) => l.params), [{
        type: "StatusUpdate",
        payload: {
          context_usage: null,
          context_tokens: null,
          max_context_tokens: null,
          token_usage: null,
          message_id: null,
          plan_mode: true,
          mcp_status: null,
        },
      }]);

      let question: Json = null;
      const turn = await wire.call("t1", "prompt", { user_input: "plan it" }, (msg: WireLine) => {
        if (msg.params?.type !== "QuestionRequest") return undefined;
        question = msg.params.payload;
        return { request_id: question.id, answers: { "Approve this plan": "Thorough" } };
      });
      assertEquals(turn.response.result, { status: "finished" });
      const evs = turn.lines.filter((l) => l.method === "event").map((l) => l.params);
      const display = evs.find((e) => e.type === "PlanDisplay");
      assertEquals(display, {
        type: "PlanDisplay",
        payload: { content: "# Wire plan\n", file_path: planFile },
      });
      assertEquals(question.tool_call_id, "x");
      assertEquals(question.questions, [{
        question: "Approve this plan",
        header: "Plan",
        options: [
          { label: "Quick", description: "fast" },
          { label: "Thorough", description: "" },
          { label: "Reject", description: "Reject and stay in plan mode" },
          { label: "Reject and Exit", description: "Reject and exit plan mode" },
        ],
        multi_select: false,
        body: "",
        other_label: "Revise",
        other_description: "Stay in plan mode and provide feedback",
      }]);
      const result = evs.find((e) => e.type === "ToolResult" && e.payload.tool_call_id === "x")!;
      assertEquals(result.payload.return_value.message, "Plan approved: Thorough");
      assertEquals(
        evs.filter((e) => e.type === "StatusUpdate").map((e) => e.payload.plan_mode),
        [true, true, false, false],
      );
      assertEquals((await readState(sb, "w1")).plan_mode, false);

      const again = await wire.call("p2", "set_plan_mode", { enabled: true });
      assertEquals(again.response.result, { status: "ok", plan_mode: true });
      const state = await readState(sb, "w1");
      assertEquals(state.plan_mode, true);
      assert(state.plan_slug && `${sb.home}/.kimi/plans/${state.plan_slug}.md` !== planFile);
    } finally {
      await wire.finish();
    }
    const statuses = (await recorded(sb, "w1")).filter((m) => m.type === "StatusUpdate");
    // set_plan_mode records its StatusUpdate in wire.jsonl (the last one: p2).
    assertEquals(statuses.at(-1)!.payload.plan_mode, true);
    assertEquals(statuses.at(-1)!.payload.message_id, null);
  } finally {
    await sb.cleanup();
  }
});
