/**
 * What the goal tools (`CreateGoal`, `GetGoal`, `UpdateGoal`, `SetGoalBudget`) see of the
 * session goal (the `ToolEnv.goals` field). Pure types: the implementation is the soul's goal
 * store (`lib/soul/goal.ts`), wired by `lib/app/`.
 *
 * @module
 */
import type { Goal, GoalBudget } from "../session/goal_state.ts";

/** Status the model may set: `complete` ends (and clears) the goal. */
export type GoalStatusUpdate = "active" | "complete" | "paused" | "blocked";

/** The result of a goal change: the goal afterwards, or why nothing changed. */
export type GoalChange = { ok: true; goal: Goal | null } | { ok: false; error: string };

/** The session goal as the tools reach it (root agent only). */
export interface GoalService {
  /** The current goal, or null. */
  current(): Goal | null;
  /** Queued objectives that start when the current goal completes. */
  queue(): readonly string[];
  /** Start a goal; fails when one exists unless `replace`. */
  create(objective: string, opts: { replace: boolean }): Promise<GoalChange>;
  /** Set the goal's status (`complete` clears it and ends the turn). */
  setStatus(status: GoalStatusUpdate, reason: string | null): Promise<GoalChange>;
  /** Append a progress note. */
  addNote(note: string): Promise<GoalChange>;
  /** Merge limits into the goal's budget. */
  setBudget(limits: Partial<GoalBudget>): Promise<GoalChange>;
}
