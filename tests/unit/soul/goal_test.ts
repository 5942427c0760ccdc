/**
 * The goal store (status rules, budget, undo log, queue), `/goal` argument parsing and the goal
 * loop driven by a fake host.
 */
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { type GoalStateFields, GoalStore, USER_PAUSE } from "../../../lib/soul/goal.ts";
import { type GoalLoopHost, pursueGoal } from "../../../lib/soul/goal_runner.ts";
import { parseGoalStart } from "../../../lib/soul/commands/goal.ts";
import { RunCancelled } from "../../../lib/soul/errors.ts";
import type { TurnResult } from "../../../lib/soul/turn.ts";
import type { WireMessage } from "../../../lib/wire/messages.ts";

function makeStore(opts: { checkpoint?: () => number } = {}) {
  const state: GoalStateFields = { goal: null, goal_queue: [], goal_log: [] };
  const emitted: WireMessage[] = [];
  let saves = 0;
  let ckpt = 0;
  const store = new GoalStore({
    store: {
      state: () => state,
      save: () => {
        saves++;
        // what is saved must be what the state holds: a deep copy round-trips
        JSON.parse(JSON.stringify(state));
        return Promise.resolve();
      },
    },
    nCheckpoints: opts.checkpoint ?? (() => ckpt),
    emit: (m) => emitted.push(m),
    now: () => 1000,
  });
  return {
    state,
    store,
    emitted,
    saves: () => saves,
    setCheckpoints: (n: number) => (ckpt = n),
  };
}

Deno.test("goal store: create refuses a second goal unless replacing; complete clears it", async () => {
  const { store, state, emitted } = makeStore();
  const a = await store.create("Fix the tests", { replace: false });
  assert(a.ok && a.goal);
  assertEquals(state.goal?.status, "active");
  const b = await store.create("Other", { replace: false });
  assert(!b.ok);
  assertStringIncludes(b.error, "A goal is already set (active): Fix the tests");
  const c = await store.create("Other", { replace: true });
  assert(c.ok);
  assertEquals(state.goal?.objective, "Other");
  assertEquals((await store.create("   ", { replace: true })).ok, false);

  store.takeStopRequest();
  const done = await store.setStatus("complete", null);
  assert(done.ok);
  assertEquals(state.goal, null);
  assertEquals(store.takeStopRequest(), true);
  assertEquals(store.takeAchieved()?.objective, "Other");
  assertEquals(store.takeAchieved(), null);
  const last = emitted.at(-1) as { type: string; payload: { goal: unknown } };
  assertEquals(last.type, "GoalUpdate");
  assertEquals(last.payload.goal, null);
});

Deno.test("goal store: budget stops the goal, resume is refused until the budget is raised", async () => {
  const { store, state } = makeStore();
  await store.create("Polish", { replace: false, budget: { max_turns: 2 } });
  await store.addUsage({ steps: 3, tokens: 100, seconds: 1 });
  assertEquals(await store.checkBudget(), null);
  await store.addUsage({ steps: 1, tokens: 50, seconds: 1 });
  assertEquals(await store.checkBudget(), "turns 2/2");
  assertEquals(state.goal?.status, "budget_exhausted");
  assertEquals(state.goal?.usage, { turns: 2, steps: 4, tokens: 150, seconds: 2 });
  const refused = await store.setStatus("active", null);
  assert(!refused.ok);
  assertStringIncludes(refused.error, "budget is used up (turns 2/2)");
  await store.setBudget({ max_turns: 5 });
  assert((await store.setStatus("active", null)).ok);
  assertEquals(state.goal?.status, "active");
});

Deno.test("goal store: notes are capped and trimmed; the queue is bounded", async () => {
  const { store, state } = makeStore();
  await store.create("Goal", { replace: false });
  for (let i = 0; i < 60; i++) await store.addNote(`note ${i}`);
  assertEquals(state.goal?.notes.length, 50);
  assertEquals(state.goal?.notes[0], "note 10");
  assertEquals((await store.addNote("  ")).ok, false);
  for (let i = 0; i < 20; i++) assertEquals(await store.enqueue(`next ${i}`), null);
  assertStringIncludes((await store.enqueue("one more"))!, "queue is full");
  assertEquals(await store.dequeue(), "next 0");
  assertEquals(await store.clearQueue(), 19);
});

Deno.test("goal store: the undo log rewinds to the goal before a checkpoint; a context reset is its base", async () => {
  const { store, state, setCheckpoints } = makeStore();
  // The goal is set for the turn that creates checkpoint 0.
  await store.create("Goal", { replace: false, at: 0 });
  setCheckpoints(1);
  await store.addNote("after turn 0");
  setCheckpoints(3);
  await store.addNote("after turn 2");
  assertEquals(await store.rewindTo(2), true);
  assertEquals(state.goal?.notes, ["after turn 0"]);
  assertEquals(state.goal?.status, "paused");
  assertEquals(await store.rewindTo(0), true);
  assertEquals(state.goal, null);

  await store.create("Kept across compaction", { replace: false, at: 0 });
  await store.contextReset();
  setCheckpoints(1);
  await store.addNote("new context");
  await store.rewindTo(0);
  assertEquals(state.goal?.objective, "Kept across compaction");
  assertEquals(state.goal?.notes, []);
});

Deno.test("/goal arguments: budget flags before the objective", () => {
  assertEquals(parseGoalStart("--max-turns 3 --max-time 30m Fix it"), {
    objective: "Fix it",
    budget: { max_turns: 3, max_seconds: 1800 },
  });
  assertEquals(parseGoalStart("--max-tokens=5000 Fix"), {
    objective: "Fix",
    budget: { max_tokens: 5000 },
  });
  assertStringIncludes(parseGoalStart("--max-turns x Fix") as string, "whole number");
  assertStringIncludes(parseGoalStart("--max-time 10d Fix") as string, "duration");
  assertStringIncludes(parseGoalStart("--max-turns 2") as string, "objective is missing");
});

/** A host whose turns run `script[i]` against the store, one per turn. */
function fakeHost(script: ((n: number) => Promise<void>)[]): GoalLoopHost & { prompts: string[] } {
  let n = 0;
  let cancelled = false;
  const prompts: string[] = [];
  const run = async (text: string): Promise<TurnResult> => {
    prompts.push(text);
    const step = script[n++];
    if (!step) throw new Error("script exhausted");
    try {
      await step(n);
    } catch (err) {
      if (err instanceof RunCancelled) cancelled = true;
      throw err;
    }
    return { reason: "no_tool_calls", finalMessage: null, steps: 2 };
  };
  return {
    prompts,
    turn: (m) => run(m.content.map((p) => (p.type === "text" ? p.text : "")).join("|")),
    runNestedTurn: (p) =>
      run(typeof p === "string" ? p : p.map((x) => (x.type === "text" ? x.text : "")).join("|")),
    get tokensUsed() {
      return n * 10;
    },
    nCheckpoints: 0,
    get cancelled() {
      return cancelled;
    },
  };
}

Deno.test("goal loop: continues until complete, then starts the queued goal", async () => {
  const { store, state } = makeStore();
  const g = await store.create("First", { replace: false });
  await store.enqueue("Second");
  const nothing = () => Promise.resolve();
  const complete = async () => {
    await store.setStatus("complete", null);
  };
  const host = fakeHost([nothing, nothing, complete, complete]);
  const end = await pursueGoal(host, store, {
    role: "user",
    content: [{ type: "text", text: g.ok && g.goal ? g.goal.objective : "" }],
  });
  assertEquals(end.outcome, "achieved");
  assertEquals(host.prompts.length, 4);
  assertStringIncludes(host.prompts[1], "goal turn 2");
  assertStringIncludes(host.prompts[3], "Second");
  assertEquals(state.goal, null);
  assertEquals(state.goal_queue, []);
  assertEquals(store.takeOutcome(), "achieved");
});

Deno.test("goal loop: a cancelled turn pauses the goal; a failed turn blocks it", async () => {
  const { store, state } = makeStore();
  await store.create("Cancel me", { replace: false });
  let host = fakeHost([() => Promise.reject(new RunCancelled())]);
  let threw = false;
  try {
    await pursueGoal(host, store, null);
  } catch (err) {
    threw = err instanceof RunCancelled;
  }
  assert(threw);
  assertEquals(state.goal?.status, "paused");
  assertEquals(state.goal?.reason, "interrupted by the user");
  assertEquals(store.takeOutcome(), "cancelled");

  assertEquals((await store.setStatus("active", null)).ok, false); // the user's to resume
  assert((await store.resume()).ok);
  host = fakeHost([() => Promise.reject(new Error("provider down"))]);
  threw = false;
  try {
    await pursueGoal(host, store, null);
  } catch {
    threw = true;
  }
  assert(threw);
  assertEquals(state.goal?.status, "blocked");
  assertEquals(state.goal?.reason, "the turn failed: provider down");
  assertEquals(state.goal?.usage.turns, 2);
});

Deno.test("goal store: the model cannot resume a goal the user paused; the user can", async () => {
  const { store, state } = makeStore();
  await store.create("Goal", { replace: false });
  assert(await store.pause(USER_PAUSE));
  const r = await store.setStatus("active", null);
  assert(!r.ok);
  assertStringIncludes(r.error, "only the user can resume it");
  assertEquals(state.goal?.status, "paused");
  assert((await store.resume()).ok);
  assertEquals(state.goal?.status, "active");
  // A pause by the model is the model's to lift.
  await store.setStatus("paused", "waiting");
  assert((await store.setStatus("active", null)).ok);
});

Deno.test("goal loop: a rejected tool call pauses the goal instead of pressing on", async () => {
  const { store, state } = makeStore();
  await store.create("Goal", { replace: false });
  const host = fakeHost([() => Promise.resolve()]);
  const rejecting: GoalLoopHost = {
    ...host,
    turn: async (m) => ({ ...(await host.turn(m)), reason: "tool_rejected" }),
    tokensUsed: 0,
    nCheckpoints: 0,
    cancelled: false,
  };
  const end = await pursueGoal(rejecting, store, {
    role: "user",
    content: [{ type: "text", text: "Goal" }],
  });
  assertEquals(end.outcome, "paused");
  assertEquals(state.goal?.reason, "a tool call was rejected");
});
