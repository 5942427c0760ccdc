/**
 * The goal loop: after a goal turn the root agent keeps going, one continuation turn after
 * another, while the goal stays active and within budget. It stops when the model marks the
 * goal complete (the next queued goal then starts), blocked or paused, when the budget is used
 * up, or when the run is cancelled (the goal is paused) or fails (the goal is blocked).
 *
 * @module
 */
import type { ContentPart, NormalizedMessage } from "../llm/message.ts";
import type { GoalOutcome } from "../wire/messages.ts";
import { budgetReached, formatBudget, type GoalStore, INTERRUPTED } from "./goal.ts";
import type { Goal } from "../session/goal_state.ts";
import { systemReminder } from "./tool_result_message.ts";
import type { TurnResult } from "./turn.ts";

/** What the goal loop needs of the soul. */
export interface GoalLoopHost {
  /** Run `message` as the body of the running turn. */
  turn(message: NormalizedMessage): Promise<TurnResult>;
  /** Run `prompt` as a nested turn of the running turn. */
  runNestedTurn(prompt: string | ContentPart[]): Promise<TurnResult>;
  /** Tokens reported by the model so far in this process. */
  readonly tokensUsed: number;
  /** The number of checkpoints of the live context. */
  readonly nCheckpoints: number;
  /** Whether the running turn was cancelled. */
  readonly cancelled: boolean;
}

/** How a goal loop ended. */
export interface GoalRunEnd {
  /** The outcome (null: the goal was removed while it ran). */
  outcome: GoalOutcome | null;
  /** The last turn's result. */
  result: TurnResult;
}

/** The rules of goal mode, sent with the first turn of a goal. */
export function goalStartReminder(goal: Goal): string {
  return systemReminder(
    [
      "Goal mode is on. You keep working on this objective across turns until it is done:",
      goal.objective,
      "",
      `Budget: ${formatBudget(goal.budget)}.`,
      "Work in useful slices; after each turn you are prompted to continue. Record progress " +
      "with UpdateGoal(note=...). When every required part is done and verified, call " +
      'UpdateGoal(status="complete"). Call UpdateGoal(status="blocked", reason=...) only for a ' +
      "real impasse (missing input, credentials or permissions, an impossible objective). Do " +
      "not mark the goal complete after only a plan or a partial result.",
    ].join("\n"),
  );
}

/** The prompt of a continuation turn. */
export function goalContinuePrompt(goal: Goal): string {
  const notes = goal.notes.length > 0
    ? ["Progress notes so far:", ...goal.notes.slice(-10).map((n) => `- ${n}`)]
    : [];
  return systemReminder(
    [
      `Continue working toward the goal (goal turn ${goal.usage.turns + 1}):`,
      goal.objective,
      "",
      `Budget: ${formatBudget(goal.budget)}; used ${goal.usage.turns} turns, ` +
      `${goal.usage.steps} steps, ${goal.usage.tokens} tokens.`,
      ...notes,
      'Do the next useful piece of work. Call UpdateGoal(status="complete") once it is done ' +
      "and verified.",
    ].join("\n"),
  );
}

/** The first message of a goal: the objective as the user's words plus the goal-mode rules. */
export function goalStartMessage(goal: Goal): NormalizedMessage {
  return {
    role: "user",
    content: [
      { type: "text", text: goal.objective },
      { type: "text", text: goalStartReminder(goal) },
    ],
  };
}

async function timedTurn(
  host: GoalLoopHost,
  goals: GoalStore,
  run: () => Promise<TurnResult>,
): Promise<TurnResult> {
  const started = performance.now();
  const tokens = host.tokensUsed;
  let steps = 0;
  try {
    const result = await run();
    steps = result.steps;
    return result;
  } finally {
    await goals.addUsage({
      steps,
      tokens: host.tokensUsed - tokens,
      seconds: (performance.now() - started) / 1000,
    });
  }
}

/**
 * Pursue the current goal: run `first` (a goal's first message, or the user's message while a
 * goal is active), then continuation turns until the goal stops. Errors propagate after the
 * goal is paused (cancelled) or blocked (failed).
 */
export async function pursueGoal(
  host: GoalLoopHost,
  goals: GoalStore,
  first: NormalizedMessage | null,
): Promise<GoalRunEnd> {
  let pending: NormalizedMessage | null = first;
  let nested = false;
  let result: TurnResult = { reason: "no_tool_calls", finalMessage: null, steps: 0 };
  while (true) {
    const goal = goals.current();
    if (!goal) return { outcome: null, result };
    if (goal.status !== "active") return end(goals, outcomeOf(goal), result);
    if (budgetReached(goal)) {
      await goals.checkBudget();
      return end(goals, "budget_exhausted", result);
    }
    const message = pending;
    pending = null;
    try {
      result = await timedTurn(
        host,
        goals,
        () =>
          message === null
            ? host.runNestedTurn(goalContinuePrompt(goal))
            : nested
            ? host.runNestedTurn(message.content)
            : host.turn(message),
      );
    } catch (err) {
      if (host.cancelled) {
        await goals.pause(INTERRUPTED);
        goals.report("cancelled");
      } else {
        const msg = err instanceof Error ? err.message : String(err);
        await goals.block(`the turn failed: ${msg}`);
        goals.report("blocked");
      }
      throw err;
    }
    nested = true;
    const achieved = goals.takeAchieved();
    if (!achieved && result.reason === "tool_rejected") {
      // The user turned down an action: wait for them instead of pressing on.
      await goals.pause("a tool call was rejected");
    }
    if (achieved) {
      goals.report("achieved");
      const next = await goals.dequeue();
      if (next === null) return { outcome: "achieved", result };
      const started = await goals.create(next, { replace: true, at: host.nCheckpoints });
      if (!started.ok || !started.goal) return { outcome: "achieved", result };
      pending = goalStartMessage(started.goal);
      continue;
    }
    const after = goals.current();
    if (!after) return { outcome: null, result };
    if (after.status !== "active") return end(goals, outcomeOf(after), result);
    if (await goals.checkBudget()) return end(goals, "budget_exhausted", result);
  }
}

function outcomeOf(goal: Goal): GoalOutcome {
  switch (goal.status) {
    case "blocked":
      return "blocked";
    case "budget_exhausted":
      return "budget_exhausted";
    default:
      return "paused";
  }
}

function end(goals: GoalStore, outcome: GoalOutcome, result: TurnResult): GoalRunEnd {
  goals.report(outcome);
  return { outcome, result };
}
