/**
 * The session goal: an objective the root agent keeps working toward across turns until it is
 * achieved, blocked, paused or out of budget. The store owns the `state.json` fields `goal`,
 * `goal_queue` and `goal_log` (every change is written atomically before it is reported) and
 * emits a `GoalUpdate` event on each change.
 *
 * Undo: each change is logged with the context checkpoint it belongs to; `/undo` to checkpoint
 * `c` puts back the goal as it stood before `c`. Compaction and `/clear` restart the checkpoint
 * numbering, so they reset the log to the current goal.
 *
 * @module
 */
import {
  budgetReached,
  type Goal,
  type GoalBudget,
  type GoalLogEntry,
  MAX_GOAL_LOG,
  MAX_GOAL_NOTE_CHARS,
  MAX_GOAL_NOTES,
  MAX_GOAL_QUEUE,
  MAX_OBJECTIVE_CHARS,
} from "../session/goal_state.ts";
import type { GoalChange, GoalService, GoalStatusUpdate } from "../tooling/goal_service.ts";
import { event, type GoalOutcome, type WireMessage } from "../wire/messages.ts";

/** The state.json fields the goal store owns. */
export interface GoalStateFields {
  /** The current goal, or null. */
  goal: Goal | null;
  /** Objectives that start one after another when the current goal completes. */
  goal_queue: string[];
  /** Undo log (see the module docs). */
  goal_log: GoalLogEntry[];
}

/** Where the goal store reads and persists its fields. */
export interface GoalStateStore {
  /** The live session state (mutated in place). */
  state(): GoalStateFields;
  /** Persist the session state (atomically). */
  save(): Promise<void>;
}

/** Options of {@link GoalStore}. */
export interface GoalStoreOptions {
  /** Session state access. */
  store: GoalStateStore;
  /** The number of checkpoints of the live context (the next checkpoint's id). */
  nCheckpoints: () => number;
  /** Sends a wire message on the running turn (dropped between turns). */
  emit: (msg: WireMessage) => void;
  /** Clock in milliseconds (tests). */
  now?: () => number;
  /** Called after every change of the current goal (e.g. to offer the goal tools only then). */
  onChange?: (goal: Goal | null) => void;
}

export {
  BUDGET_UNITS,
  budgetLimit,
  budgetReached,
  type BudgetUnit,
  describeGoal,
  formatBudget,
} from "../session/goal_state.ts";

/** Usage of one goal turn. */
export interface GoalTurnUsage {
  /** Steps the turn took. */
  steps: number;
  /** Tokens the turn's model calls reported. */
  tokens: number;
  /** Wall time of the turn in seconds. */
  seconds: number;
}

/** The reason recorded when the user pauses a goal. */
export const USER_PAUSE = "paused by the user";
/** The reason recorded when the user interrupts a goal turn. */
export const INTERRUPTED = "interrupted by the user";
/** The reason recorded when a session with an active goal is resumed. */
export const SESSION_RESUMED = "the session was resumed";
/** The reason recorded when `/undo` rewinds an active goal. */
export const REWOUND = "rewound by /undo";

/** Pauses only the user lifts (`/goal resume`): the model may not resume these. */
const USER_PAUSES: ReadonlySet<string> = new Set([
  USER_PAUSE,
  INTERRUPTED,
  SESSION_RESUMED,
  REWOUND,
]);

/** The session goal of the root agent. */
export class GoalStore implements GoalService {
  readonly #opts: GoalStoreOptions;
  readonly #now: () => number;
  #stopRequested = false;
  #achieved: Goal | null = null;
  #lastOutcome: GoalOutcome | null = null;

  /** Create the store over the session state. */
  constructor(opts: GoalStoreOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  get #state(): GoalStateFields {
    return this.#opts.store.state();
  }

  /** The current goal, or null. */
  current(): Goal | null {
    return this.#state.goal;
  }

  /** The queued objectives. */
  queue(): readonly string[] {
    return this.#state.goal_queue;
  }

  /** Whether a goal is active (the goal loop keeps going). */
  get active(): boolean {
    return this.#state.goal?.status === "active";
  }

  /**
   * Whether a tool left the goal's `active` status during the running step (the turn then
   * ends after that step); reading clears it.
   */
  takeStopRequest(): boolean {
    const r = this.#stopRequested;
    this.#stopRequested = false;
    return r;
  }

  /** The goal the model marked complete since the last call (cleared by reading). */
  takeAchieved(): Goal | null {
    const g = this.#achieved;
    this.#achieved = null;
    return g;
  }

  /**
   * Start a goal. `at` is the checkpoint the change belongs to (default: the current one; the
   * `/goal` command passes the next one, which its first turn creates, so undoing that turn
   * undoes the goal).
   */
  async create(
    objective: string,
    opts: { replace: boolean; at?: number; budget?: Partial<GoalBudget> },
  ): Promise<GoalChange> {
    const text = objective.trim();
    if (!text) return { ok: false, error: "The objective is empty." };
    if (text.length > MAX_OBJECTIVE_CHARS) {
      return {
        ok: false,
        error: `The objective is longer than ${MAX_OBJECTIVE_CHARS} characters.`,
      };
    }
    const existing = this.#state.goal;
    if (existing && !opts.replace) {
      return {
        ok: false,
        error: `A goal is already set (${existing.status}): ${existing.objective}. Replace it ` +
          "(`replace`: true, or /goal replace <objective>) or queue the new one (/goal next).",
      };
    }
    const now = this.#now();
    const goal: Goal = {
      id: crypto.randomUUID(),
      objective: text,
      status: "active",
      reason: null,
      notes: [],
      budget: {
        max_turns: null,
        max_steps: null,
        max_tokens: null,
        max_seconds: null,
        ...opts.budget,
      },
      usage: { turns: 0, steps: 0, tokens: 0, seconds: 0 },
      created_at: now,
      updated_at: now,
    };
    await this.#commit(goal, { at: opts.at });
    return { ok: true, goal };
  }

  /**
   * Set the status on the model's behalf; `complete` clears the goal (the goal loop then
   * starts the next one). A goal the user paused is resumed only by the user ({@link resume}).
   */
  async setStatus(status: GoalStatusUpdate, reason: string | null): Promise<GoalChange> {
    const goal = this.#state.goal;
    if (status === "active" && goal?.status === "paused" && USER_PAUSES.has(goal.reason ?? "")) {
      return {
        ok: false,
        error: "The user paused this goal; only the user can resume it (/goal resume).",
      };
    }
    return await this.#setStatus(status, reason);
  }

  /** Resume a paused, blocked or exhausted goal (the user's `/goal resume`). */
  async resume(): Promise<GoalChange> {
    return await this.#setStatus("active", null);
  }

  async #setStatus(status: GoalStatusUpdate, reason: string | null): Promise<GoalChange> {
    const goal = this.#state.goal;
    if (!goal) return { ok: false, error: "There is no goal. Create one first." };
    if (status === "active") {
      const reached = budgetReached(goal);
      if (reached) {
        return {
          ok: false,
          error: `The goal's budget is used up (${reached}); raise it before resuming.`,
        };
      }
    } else if (status !== "paused" || goal.status === "active") {
      this.#stopRequested = true;
    }
    if (status === "complete") {
      this.#achieved = goal;
      await this.#commit(null, {});
      return { ok: true, goal: null };
    }
    const next: Goal = { ...goal, status, reason: status === "active" ? null : reason };
    await this.#commit(next, {});
    return { ok: true, goal: next };
  }

  /** Append a progress note (the oldest is dropped past {@link MAX_GOAL_NOTES}). */
  async addNote(note: string): Promise<GoalChange> {
    const goal = this.#state.goal;
    if (!goal) return { ok: false, error: "There is no goal. Create one first." };
    const text = note.trim().slice(0, MAX_GOAL_NOTE_CHARS);
    if (!text) return { ok: false, error: "The note is empty." };
    const notes = [...goal.notes, text].slice(-MAX_GOAL_NOTES);
    const next = { ...goal, notes };
    await this.#commit(next, {});
    return { ok: true, goal: next };
  }

  /** Merge limits into the budget. An exhausted goal within the new budget stays stopped. */
  async setBudget(limits: Partial<GoalBudget>): Promise<GoalChange> {
    const goal = this.#state.goal;
    if (!goal) return { ok: false, error: "There is no goal. Create one first." };
    const next: Goal = { ...goal, budget: { ...goal.budget, ...limits } };
    await this.#commit(next, {});
    return { ok: true, goal: next };
  }

  /** Add the usage of a goal turn. */
  async addUsage(u: GoalTurnUsage): Promise<void> {
    const goal = this.#state.goal;
    if (!goal) return;
    const usage = {
      turns: goal.usage.turns + 1,
      steps: goal.usage.steps + u.steps,
      tokens: goal.usage.tokens + u.tokens,
      seconds: goal.usage.seconds + u.seconds,
    };
    await this.#commit({ ...goal, usage }, { quiet: true });
  }

  /** Stop the goal because its budget is used up (when it is); returns the limit reached. */
  async checkBudget(): Promise<string | null> {
    const goal = this.#state.goal;
    if (!goal || goal.status !== "active") return null;
    const reached = budgetReached(goal);
    if (reached) {
      await this.#commit({ ...goal, status: "budget_exhausted", reason: `budget: ${reached}` }, {});
    }
    return reached;
  }

  /** Pause the active goal (user, interruption, resumed session). */
  async pause(reason: string): Promise<boolean> {
    const goal = this.#state.goal;
    if (!goal || goal.status !== "active") return false;
    await this.#commit({ ...goal, status: "paused", reason }, {});
    return true;
  }

  /** Mark the active goal blocked (e.g. the turn failed). */
  async block(reason: string): Promise<void> {
    const goal = this.#state.goal;
    if (!goal || goal.status !== "active") return;
    await this.#commit({ ...goal, status: "blocked", reason }, {});
  }

  /** Remove the goal (not the queue). */
  async clear(): Promise<Goal | null> {
    const goal = this.#state.goal;
    if (goal) await this.#commit(null, {});
    return goal;
  }

  /** Queue an objective; returns an error text, or null. */
  async enqueue(objective: string): Promise<string | null> {
    const text = objective.trim();
    if (!text) return "The objective is empty.";
    if (text.length > MAX_OBJECTIVE_CHARS) {
      return `The objective is longer than ${MAX_OBJECTIVE_CHARS} characters.`;
    }
    if (this.#state.goal_queue.length >= MAX_GOAL_QUEUE) {
      return `The goal queue is full (${MAX_GOAL_QUEUE} goals).`;
    }
    this.#state.goal_queue.push(text);
    await this.#opts.store.save();
    this.#emit(null);
    return null;
  }

  /** Take the first queued objective, or null. */
  async dequeue(): Promise<string | null> {
    const next = this.#state.goal_queue.shift() ?? null;
    if (next !== null) await this.#opts.store.save();
    return next;
  }

  /** Empty the queue; returns how many were dropped. */
  async clearQueue(): Promise<number> {
    const n = this.#state.goal_queue.length;
    this.#state.goal_queue = [];
    await this.#opts.store.save();
    this.#emit(null);
    return n;
  }

  /** The context restarted its checkpoints (compaction, `/clear`): reset the undo log. */
  async contextReset(): Promise<void> {
    this.#state.goal_log = [{ checkpoint: -1, goal: this.#state.goal }];
    await this.#opts.store.save();
  }

  /**
   * The context was rewound to just before checkpoint `checkpoint` (`/undo`): put back the
   * goal as it stood then. Returns whether the goal changed.
   */
  async rewindTo(checkpoint: number): Promise<boolean> {
    const log = this.#state.goal_log;
    let found: GoalLogEntry | null = null;
    for (const e of log) if (e.checkpoint < checkpoint) found = e;
    if (!found) return false;
    const before = JSON.stringify(this.#state.goal);
    this.#state.goal_log = log.filter((e) => e.checkpoint < checkpoint);
    this.#state.goal = found.goal;
    if (this.#state.goal?.status === "active") {
      this.#state.goal = { ...this.#state.goal, status: "paused", reason: REWOUND };
    }
    await this.#opts.store.save();
    this.#opts.onChange?.(this.#state.goal);
    const changed = before !== JSON.stringify(this.#state.goal);
    if (changed) this.#emit(null);
    return changed;
  }

  /** Emit the goal as it stands, with how the goal run ended (kept for {@link takeOutcome}). */
  report(outcome: GoalOutcome | null): void {
    if (outcome !== null) this.#lastOutcome = outcome;
    this.#emit(outcome);
  }

  /** How the last goal run ended since the previous call, or null (print mode's exit code). */
  takeOutcome(): GoalOutcome | null {
    const o = this.#lastOutcome;
    this.#lastOutcome = null;
    return o;
  }

  async #commit(goal: Goal | null, opts: { at?: number; quiet?: boolean }): Promise<void> {
    const state = this.#state;
    state.goal = goal ? { ...goal, updated_at: this.#now() } : null;
    const at = opts.at ?? Math.max(0, this.#opts.nCheckpoints() - 1);
    const log = state.goal_log;
    if (log.length === 0) log.push({ checkpoint: -1, goal: null });
    const last = log[log.length - 1];
    if (last.checkpoint === at) last.goal = state.goal;
    else log.push({ checkpoint: at, goal: state.goal });
    if (log.length > MAX_GOAL_LOG) log.splice(1, log.length - MAX_GOAL_LOG);
    await this.#opts.store.save();
    this.#opts.onChange?.(state.goal);
    if (!opts.quiet) this.#emit(null);
  }

  #emit(outcome: GoalOutcome | null): void {
    this.#opts.emit(event("GoalUpdate", {
      goal: this.#state.goal,
      queue: [...this.#state.goal_queue],
      outcome,
    }));
  }
}
