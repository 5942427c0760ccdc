import { assert, assertEquals, assertRejects, assertStringIncludes } from "../../helpers/assert.ts";
import { makeCallContext, makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";
import { defaultState, loadState, saveState } from "../../../lib/session/state.ts";
import { PlanMode } from "../../../lib/soul/plan_mode.ts";
import {
  assistantTurnsSinceReminder,
  FULL_REMINDER_HEAD,
  SPARSE_REMINDER_HEAD,
} from "../../../lib/soul/plan_reminders.ts";
import { createPlanSlug, HERO_NAMES } from "../../../lib/soul/plan_slug.ts";
import { systemReminder } from "../../../lib/soul/tool_result_message.ts";
import { rejectionOf } from "../../../lib/tooling/result.ts";
import type { PlanControl } from "../../../lib/tooling/tool.ts";
import { enterPlanModeTool } from "../../../tools/enter_plan_mode.ts";
import { exitPlanModeTool } from "../../../tools/exit_plan_mode.ts";

/** A random source cycling through fixed indexes of HERO_NAMES. */
function fixedRandom(indexes: number[]): () => number {
  let i = 0;
  return () => (indexes[i++ % indexes.length] + 0.5) / HERO_NAMES.length;
}

async function withTemp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kimi-plan-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A PlanMode over a real state.json in `sessionDir`. */
function planFor(home: string, sessionDir: string, state = defaultState(), random?: () => number) {
  let saves = 0;
  const plan = new PlanMode({
    home,
    store: {
      state: () => state,
      save: async () => {
        saves++;
        await saveState(sessionDir, state);
      },
    },
    random,
  });
  return { plan, state, saves: () => saves };
}

const user = (text: string): NormalizedMessage => ({
  role: "user",
  content: [{ type: "text", text }],
});
const assistant = (text = "ok"): NormalizedMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
});

Deno.test("createPlanSlug: three hero names, avoids existing plan files, falls back to the id", async () => {
  await withTemp(async (dir) => {
    const slug = await createPlanSlug({
      plansDir: dir,
      planSessionId: "abcdef0123456789",
      random: fixedRandom([0, 1, 2]),
    });
    assertEquals(slug, `${HERO_NAMES[0]}-${HERO_NAMES[1]}-${HERO_NAMES[2]}`);
    await Deno.writeTextFile(`${dir}/${slug}.md`, "taken");
    const next = await createPlanSlug({
      plansDir: dir,
      planSessionId: "abcdef0123456789",
      random: fixedRandom([0, 1, 2, 3, 4, 5]),
    });
    assertEquals(next, `${HERO_NAMES[3]}-${HERO_NAMES[4]}-${HERO_NAMES[5]}`);
    const collided = await createPlanSlug({
      plansDir: dir,
      planSessionId: "abcdef0123456789",
      random: fixedRandom([0, 1, 2]),
    });
    assertEquals(collided, `${slug}-abcdef01`);
  });
});

Deno.test("PlanMode: on persists plan_mode/session/slug under HOME/.kimi/plans; off forgets them", async () => {
  await withTemp(async (dir) => {
    const sessionDir = `${dir}/session`;
    const { plan, state } = planFor(
      `${dir}/home`,
      sessionDir,
      defaultState(),
      fixedRandom([5, 6, 7]),
    );
    assertEquals(plan.active, false);
    assertEquals(plan.planFile, null);
    assertEquals(await plan.set(true, "tool"), true);
    const slug = `${HERO_NAMES[5]}-${HERO_NAMES[6]}-${HERO_NAMES[7]}`;
    assertEquals(plan.planFile, `${dir}/home/.kimi/plans/${slug}.md`);
    const saved = await loadState(sessionDir);
    assertEquals(saved.plan_mode, true);
    assertEquals(saved.plan_slug, slug);
    assertMatchHex(saved.plan_session_id);
    assertEquals(state.plan_session_id, saved.plan_session_id);

    // A new PlanMode over the persisted state (a resumed session) finds the same plan file.
    const again = planFor(`${dir}/home`, sessionDir, await loadState(sessionDir)).plan;
    assertEquals(again.active, true);
    assertEquals(again.planFile, plan.planFile);

    assertEquals(await plan.set(false, "manual"), false);
    const off = await loadState(sessionDir);
    assertEquals([off.plan_mode, off.plan_session_id, off.plan_slug], [false, null, null]);
    assertEquals(plan.planFile, null);
  });
});

function assertMatchHex(v: string | null): void {
  assert(v !== null && /^[0-9a-f]{32}$/.test(v), `expected a uuid hex, got ${v}`);
}

Deno.test("PlanMode: readPlan / clearPlan", async () => {
  await withTemp(async (dir) => {
    const { plan } = planFor(`${dir}/home`, `${dir}/s`);
    assertEquals(await plan.readPlan(), null);
    await plan.clearPlan(); // no plan session: nothing happens
    await plan.set(true, "manual");
    assertEquals(await plan.readPlan(), null);
    await Deno.mkdir(plan.plansDir, { recursive: true });
    await Deno.writeTextFile(plan.planFile!, "# Plan\n");
    assertEquals(await plan.readPlan(), "# Plan\n");
    await plan.clearPlan();
    assertEquals(await plan.readPlan(), null);
    await plan.clearPlan(); // already gone
  });
});

Deno.test("PlanMode reminders: full on activation, then every 5 assistant turns, every 5th full", async () => {
  await withTemp(async (dir) => {
    const { plan } = planFor(`${dir}/home`, `${dir}/s`);
    const history: NormalizedMessage[] = [user("hello")];
    assertEquals(await plan.reminder(history, { afk: false }), null, "off: no reminder");
    await plan.set(true, "manual");

    const kinds: string[] = [];
    // Simulate 40 steps: before each step the soul asks for a reminder and keeps it in the
    // context; each step adds one assistant message.
    for (let step = 1; step <= 40; step++) {
      const r = await plan.reminder(history, { afk: false });
      if (r !== null) {
        kinds.push(
          `${step}:${
            r.startsWith(FULL_REMINDER_HEAD)
              ? "full"
              : r.startsWith(SPARSE_REMINDER_HEAD)
              ? "sparse"
              : "?"
          }`,
        );
        history.push(user(systemReminder(r)));
      }
      history.push(assistant());
    }
    assertEquals(kinds, [
      "1:full",
      "6:sparse",
      "11:sparse",
      "16:sparse",
      "21:sparse",
      "26:full",
      "31:sparse",
      "36:sparse",
    ]);
    const last = history.findLast((m) => m.role === "user")!;
    assertStringIncludes(JSON.stringify(last), plan.planFile!);
  });
});

Deno.test("PlanMode reminders: tool activation and compaction start over with a full one; re-entry text", async () => {
  await withTemp(async (dir) => {
    const { plan } = planFor(`${dir}/home`, `${dir}/s`);
    await plan.set(true, "tool");
    const history: NormalizedMessage[] = [user("x"), assistant(), assistant()];
    assertEquals(assistantTurnsSinceReminder(history), null);
    const r = await plan.reminder(history, { afk: true });
    assert(r!.startsWith(FULL_REMINDER_HEAD));
    assertStringIncludes(r!, "afk mode");
    assertStringIncludes(r!, "does not exist yet");
    history.push(user(systemReminder(r!)), assistant());
    assertEquals(assistantTurnsSinceReminder(history), 1);
    assertEquals(await plan.reminder(history, { afk: true }), null);

    // Re-entering (manual) with an existing plan file: the re-entry reminder.
    await Deno.mkdir(plan.plansDir, { recursive: true });
    await Deno.writeTextFile(plan.planFile!, "# Old plan\n");
    plan.scheduleActivationReminder();
    const re = await plan.reminder(history, { afk: false });
    assert(re!.startsWith(FULL_REMINDER_HEAD));
    assertStringIncludes(re!, `A plan from an earlier planning session is at ${plan.planFile}.`);
  });
});

// ---- tools ----------------------------------------------------------------------------------

/** A plan control over a real PlanMode, plus an env whose planMode() reflects it. */
function planEnv(plan: PlanMode, opts: {
  afk?: boolean;
  autoApprove?: boolean;
  answers?: Record<string, string> | null;
  asked?: unknown[];
}) {
  const control: PlanControl = {
    set: (on) => plan.set(on, "tool"),
    autoApprove: () => opts.autoApprove ?? false,
    readPlan: () => plan.readPlan(),
  };
  return makeToolEnv({
    planMode: () => ({ active: plan.active, planFile: plan.active ? plan.planFile : null }),
    planControl: control,
    isAfk: () => opts.afk ?? false,
    askQuestions: (_id, questions) => {
      opts.asked?.push(questions);
      return Promise.resolve(opts.answers === undefined ? {} : opts.answers);
    },
  });
}

Deno.test("EnterPlanMode: asks Yes/No, auto-enters when auto-approved, refuses when already on", async () => {
  await withTemp(async (dir) => {
    const { plan } = planFor(`${dir}/home`, `${dir}/s`);
    const asked: unknown[] = [];
    const tool =
      (await enterPlanModeTool(planEnv(plan, { answers: { "Enter plan mode?": "No" }, asked })))!;
    let rv = await runTool(tool, {}, makeCallContext());
    assertEquals([rv.is_error, rv.message, plan.active], [false, "Declined", false]);
    assertEquals(
      (asked[0] as { question: string; options: { label: string }[] }[])[0].options.map((o) =>
        o.label
      ),
      [
        "Yes",
        "No",
      ],
    );

    const yes =
      (await enterPlanModeTool(planEnv(plan, { answers: { "Enter plan mode?": "Yes" } })))!;
    rv = await runTool(yes, {}, makeCallContext());
    assertEquals([rv.is_error, rv.message, plan.active], [false, "Plan mode on", true]);
    assertStringIncludes(rv.output as string, `Plan file: ${plan.planFile}`);
    rv = await runTool(yes, {}, makeCallContext());
    assertEquals([rv.is_error, rv.message], [
      true,
      "Already in plan mode. Use ExitPlanMode when your plan is ready.",
    ]);

    await plan.set(false, "manual");
    const auto = (await enterPlanModeTool(planEnv(plan, { autoApprove: true, answers: null })))!;
    rv = await runTool(auto, {}, makeCallContext());
    assertEquals([rv.is_error, rv.message, plan.active], [false, "Plan mode on (auto)", true]);

    await plan.set(false, "manual");
    const unsupported = (await enterPlanModeTool(planEnv(plan, { answers: null })))!;
    rv = await runTool(unsupported, {}, makeCallContext());
    assertEquals(
      rv.message,
      "The connected client does not support plan mode. Do NOT call this tool again.",
    );
    assertEquals(await enterPlanModeTool(makeToolEnv()), null, "no plan control: tool left out");
  });
});

Deno.test("ExitPlanMode: outcomes (approve, option, reject, reject and exit, revise, dismiss, afk)", async () => {
  await withTemp(async (dir) => {
    const { plan } = planFor(`${dir}/home`, `${dir}/s`);
    const call = async (
      params: Record<string, unknown>,
      opts: Parameters<typeof planEnv>[1],
    ) => {
      const env = planEnv(plan, opts);
      const rv = await runTool((await exitPlanModeTool(env))!, params, makeCallContext());
      return { rv, env };
    };
    let { rv } = await call({}, {});
    assertEquals(rv.message, "Not in plan mode. ExitPlanMode is only available during plan mode.");
    await plan.set(true, "manual");
    ({ rv } = await call({}, {}));
    assertEquals(
      rv.message,
      `No plan file found. Write your plan to ${plan.planFile} first, then call ExitPlanMode.`,
    );
    await Deno.mkdir(plan.plansDir, { recursive: true });
    await Deno.writeTextFile(plan.planFile!, "# The plan\n");

    const asked: unknown[] = [];
    const r1 = await call({}, { answers: { "Approve this plan": "Reject" }, asked });
    assertEquals(r1.env.events, [{
      type: "PlanDisplay",
      payload: { content: "# The plan\n", file_path: plan.planFile! },
    }]);
    const q = (asked[0] as Record<string, unknown>[])[0];
    assertEquals(q.question, "Approve this plan");
    assertEquals(q.other_label, "Revise");
    assertEquals((q.options as { label: string }[]).map((o) => o.label), [
      "Approve",
      "Reject",
      "Reject and Exit",
    ]);
    assert(rejectionOf(r1.rv) !== undefined && r1.rv.is_error);
    assertEquals(rejectionOf(r1.rv)!.feedback, "");
    assertStringIncludes(r1.rv.message, "Stay in plan mode.");
    assertEquals(plan.active, true);

    const revise = await call({}, { answers: { "Approve this plan": "split step 2" } });
    assertEquals([revise.rv.is_error, revise.rv.message, plan.active], [
      false,
      "Plan revision requested",
      true,
    ]);
    assertStringIncludes(revise.rv.output as string, "User feedback: split step 2");

    const dismissed = await call({}, { answers: {} });
    assertEquals([dismissed.rv.message, plan.active], ["Dismissed", true]);

    const opts = {
      options: [{ label: "Fast" }, { label: "Safe (Recommended)", description: "slower" }],
    };
    const asked2: unknown[] = [];
    const chose = await call(opts, {
      answers: { "Approve this plan": "Safe (Recommended)" },
      asked: asked2,
    });
    assertEquals(
      ((asked2[0] as Record<string, unknown>[])[0].options as { label: string }[]).map((o) =>
        o.label
      ),
      ["Fast", "Safe (Recommended)", "Reject", "Reject and Exit"],
    );
    assertEquals([chose.rv.message, plan.active], ["Plan approved: Safe (Recommended)", false]);
    assertStringIncludes(chose.rv.output as string, "## Approved Plan:\n# The plan\n");

    await plan.set(true, "manual");
    await Deno.writeTextFile(plan.planFile!, "# Plan B\n");
    const exit = await call({}, { answers: { "Approve this plan": "Reject and Exit" } });
    assert(rejectionOf(exit.rv) !== undefined);
    assertEquals([
      exit.rv.message.startsWith("Plan rejected by user. Plan mode deactivated."),
      plan.active,
    ], [
      true,
      false,
    ]);

    await plan.set(true, "manual");
    await Deno.writeTextFile(plan.planFile!, "# Plan C\n");
    const approve = await call({}, { answers: { "Approve this plan": "Approve" } });
    assertEquals([approve.rv.message, plan.active], ["Plan approved", false]);

    await plan.set(true, "manual");
    await Deno.writeTextFile(plan.planFile!, "# Plan D\n");
    const afk = await call({}, { afk: true, answers: null });
    assertEquals([afk.rv.message, plan.active, afk.env.events.length], [
      "Plan approved (auto)",
      false,
      0,
    ]);
    assertStringIncludes(afk.rv.output as string, "## Approved Plan:\n# Plan D\n");

    await plan.set(true, "manual");
    await Deno.writeTextFile(plan.planFile!, "# Plan E\n");
    await assertRejects(() => call({ options: [{ label: " approve" }, { label: "Other" }] }, {}));
    await assertRejects(() => call({ options: [{ label: "A" }, { label: "A" }] }, {}));
    await assertRejects(() =>
      call({ options: [{ label: "A" }, { label: "B" }, { label: "C" }, { label: "D" }] }, {})
    );
    assertEquals(plan.active, true);
  });
});
