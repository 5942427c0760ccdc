/**
 * The persisted shape of a session goal (`state.json` fields `goal`, `goal_queue` and
 * `goal_log`): the objective, its lifecycle status, progress notes, budget and usage.
 *
 * @module
 */
import * as z from "zod";

/** Lifecycle of a goal. `complete` goals are cleared, so a stored goal is never complete. */
export const GoalStatusSchema = z.enum(["active", "paused", "blocked", "budget_exhausted"]);
/** Lifecycle of a goal. */
export type GoalStatus = z.infer<typeof GoalStatusSchema>;

/** Limits of a goal; null means unlimited. */
export const GoalBudgetSchema = z.object({
  max_turns: z.number().int().positive().nullable().default(null),
  max_steps: z.number().int().positive().nullable().default(null),
  max_tokens: z.number().int().positive().nullable().default(null),
  max_seconds: z.number().positive().nullable().default(null),
});
/** Limits of a goal. */
export type GoalBudget = z.infer<typeof GoalBudgetSchema>;

/** What a goal has used so far (goal turns only). */
export const GoalUsageSchema = z.object({
  turns: z.number().int().nonnegative().default(0),
  steps: z.number().int().nonnegative().default(0),
  tokens: z.number().int().nonnegative().default(0),
  seconds: z.number().nonnegative().default(0),
});
/** What a goal has used so far. */
export type GoalUsage = z.infer<typeof GoalUsageSchema>;

/** Most progress notes kept per goal (older ones are dropped first). */
export const MAX_GOAL_NOTES = 50;
/** Longest progress note, in characters. */
export const MAX_GOAL_NOTE_CHARS = 2000;
/** Most queued goals. */
export const MAX_GOAL_QUEUE = 20;
/** Longest objective, in characters. */
export const MAX_OBJECTIVE_CHARS = 4000;

/** A session goal. */
export const GoalSchema = z.object({
  id: z.string(),
  objective: z.string(),
  status: GoalStatusSchema,
  /** Why the goal is not active (user pause, blocker, budget, error), or null. */
  reason: z.string().nullable().default(null),
  notes: z.array(z.string()).default([]),
  budget: GoalBudgetSchema.prefault({}),
  usage: GoalUsageSchema.prefault({}),
  created_at: z.number(),
  updated_at: z.number(),
});
/** A session goal. */
export type Goal = z.infer<typeof GoalSchema>;

/** One entry of the undo log: the goal as it stood from context checkpoint `checkpoint` on. */
export const GoalLogEntrySchema = z.object({
  checkpoint: z.number().int(),
  goal: GoalSchema.nullable(),
});
/** One entry of the undo log. */
export type GoalLogEntry = z.infer<typeof GoalLogEntrySchema>;

/** Most undo log entries kept (the first, the base after a context reset, is always kept). */
export const MAX_GOAL_LOG = 512;

/** Budget units `/goal budget` and `SetGoalBudget` accept. */
export const BUDGET_UNITS = [
  "turns",
  "steps",
  "tokens",
  "seconds",
  "minutes",
  "hours",
] as const;
/** A budget unit. */
export type BudgetUnit = typeof BUDGET_UNITS[number];

/** Shortest and longest time budgets accepted, in seconds. */
const TIME_BUDGET_RANGE = [1, 7 * 24 * 3600] as const;

/** The budget limit of `value unit`, or an error text. */
export function budgetLimit(value: number, unit: BudgetUnit): Partial<GoalBudget> | string {
  if (!Number.isFinite(value) || value <= 0) {
    return `A goal budget must be a positive number; got ${value}.`;
  }
  switch (unit) {
    case "turns":
      return { max_turns: Math.max(1, Math.round(value)) };
    case "steps":
      return { max_steps: Math.max(1, Math.round(value)) };
    case "tokens":
      return { max_tokens: Math.max(1, Math.round(value)) };
    default: {
      const seconds = value * (unit === "hours" ? 3600 : unit === "minutes" ? 60 : 1);
      if (seconds < TIME_BUDGET_RANGE[0] || seconds > TIME_BUDGET_RANGE[1]) {
        return `A goal time budget must be between 1 second and 7 days; got ${value} ${unit}.`;
      }
      return { max_seconds: seconds };
    }
  }
}

/** `3 turns, 20 steps, 100000 tokens, 600 s` (the limits that are set) or `none`. */
export function formatBudget(b: GoalBudget): string {
  const parts: string[] = [];
  if (b.max_turns !== null) parts.push(`${b.max_turns} turns`);
  if (b.max_steps !== null) parts.push(`${b.max_steps} steps`);
  if (b.max_tokens !== null) parts.push(`${b.max_tokens} tokens`);
  if (b.max_seconds !== null) parts.push(`${b.max_seconds} s`);
  return parts.length > 0 ? parts.join(", ") : "none";
}

/** The limit a goal has reached (`3 turns of 3`), or null while it is within budget. */
export function budgetReached(goal: Goal): string | null {
  const { budget: b, usage: u } = goal;
  if (b.max_turns !== null && u.turns >= b.max_turns) return `turns ${u.turns}/${b.max_turns}`;
  if (b.max_steps !== null && u.steps >= b.max_steps) return `steps ${u.steps}/${b.max_steps}`;
  if (b.max_tokens !== null && u.tokens >= b.max_tokens) {
    return `tokens ${u.tokens}/${b.max_tokens}`;
  }
  if (b.max_seconds !== null && u.seconds >= b.max_seconds) {
    return `time ${Math.round(u.seconds)}s/${b.max_seconds}s`;
  }
  return null;
}

/** The multi-line status of a goal for `/goal` and `GetGoal`. */
export function describeGoal(goal: Goal | null, queue: readonly string[]): string {
  if (!goal) {
    const lines = ["No goal is set. Start one with /goal <objective>."];
    if (queue.length > 0) lines.push(...queueLines(queue));
    return lines.join("\n");
  }
  const u = goal.usage;
  const lines = [
    `Goal: ${goal.objective}`,
    `Status: ${goal.status}${goal.reason ? ` (${goal.reason})` : ""}`,
    `Budget: ${formatBudget(goal.budget)}`,
    `Used: ${u.turns} turns, ${u.steps} steps, ${u.tokens} tokens, ${Math.round(u.seconds)} s`,
  ];
  if (goal.notes.length > 0) {
    lines.push("Progress notes:", ...goal.notes.map((n) => `- ${n}`));
  }
  if (queue.length > 0) lines.push(...queueLines(queue));
  return lines.join("\n");
}

function queueLines(queue: readonly string[]): string[] {
  return ["Next goals:", ...queue.map((q, i) => `${i + 1}. ${q}`)];
}
