/**
 * Plan mode of the root agent (reference §7.13): on/off state persisted in `state.json`
 * (`plan_mode`, `plan_session_id`, `plan_slug`), the plan file `~/.kimi/plans/<slug>.md`
 * (always under HOME, never under `KIMI_SHARE_DIR`; names in `plan_slug.ts`), and which
 * reminder is due (texts and schedule in `plan_reminders.ts`).
 *
 * @module
 */
import { join } from "node:path";
import { isPresent, pathStatus } from "../fs/exists.ts";
import type { NormalizedMessage } from "../llm/message.ts";
import {
  assistantTurnsSinceReminder,
  fullReminder,
  PLAN_FULL_EVERY,
  PLAN_REMINDER_INTERVAL,
  reentryReminder,
  sparseReminder,
} from "./plan_reminders.ts";
import { createPlanSlug, plansDir } from "./plan_slug.ts";

/** The state.json fields plan mode owns. */
export interface PlanStateFields {
  /** Whether plan mode is on. */
  plan_mode: boolean;
  /** Id of the current planning session (null when plan mode is off). */
  plan_session_id: string | null;
  /** Slug of the current plan file (null when plan mode is off). */
  plan_slug: string | null;
}

/** Where plan mode reads and persists its fields. */
export interface PlanStateStore {
  /** The live session state (mutated in place). */
  state(): PlanStateFields;
  /** Persist the session state. */
  save(): Promise<void>;
}

/** Who changed plan mode: the user (`/plan`, wire `set_plan_mode`, `--plan`) or a tool. */
export type PlanModeSource = "manual" | "tool";

/** Options of {@link PlanMode}. */
export interface PlanModeOptions {
  /** HOME directory (plan files live in `<home>/.kimi/plans`). */
  home: string;
  /** Session state access. */
  store: PlanStateStore;
  /** Random source for slugs (tests). */
  random?: () => number;
}

/** Plan mode state of one session. */
export class PlanMode {
  readonly #home: string;
  readonly #store: PlanStateStore;
  readonly #random?: () => number;
  #pendingActivation = false;
  #reminderCount = 0;

  /** Plan mode bound to a session's state (restores `plan_mode`/`plan_slug` from it). */
  constructor(opts: PlanModeOptions) {
    this.#home = opts.home;
    this.#store = opts.store;
    this.#random = opts.random;
  }

  /** Whether plan mode is on. */
  get active(): boolean {
    return this.#store.state().plan_mode;
  }

  /** The plans directory. */
  get plansDir(): string {
    return plansDir(this.#home);
  }

  /** Absolute path of the current plan file, or null when there is no planning session. */
  get planFile(): string | null {
    const slug = this.#store.state().plan_slug;
    return slug ? join(this.plansDir, `${slug}.md`) : null;
  }

  /**
   * Turn plan mode on or off and persist it. Turning it on starts a planning session (new
   * slug) unless one is recorded; a manual switch schedules the activation reminder. Turning it
   * off forgets the planning session. Resolves with the new state.
   */
  async set(enabled: boolean, source: PlanModeSource): Promise<boolean> {
    const state = this.#store.state();
    if (enabled === state.plan_mode) {
      if (enabled && (!state.plan_slug || !state.plan_session_id)) {
        await this.#ensurePlanSession();
        await this.#store.save();
      }
      return state.plan_mode;
    }
    state.plan_mode = enabled;
    this.#reminderCount = 0;
    if (enabled) {
      await this.#ensurePlanSession();
      this.#pendingActivation = source === "manual";
    } else {
      this.#pendingActivation = false;
      state.plan_session_id = null;
      state.plan_slug = null;
    }
    await this.#store.save();
    return enabled;
  }

  /** Make sure a restored session in plan mode has a plan file (e.g. an old state.json). */
  async restore(): Promise<void> {
    const state = this.#store.state();
    if (state.plan_mode && (!state.plan_slug || !state.plan_session_id)) {
      await this.#ensurePlanSession();
      await this.#store.save();
    }
  }

  /** Schedule the activation reminder for the next step (plan mode already on, e.g. `--plan`). */
  scheduleActivationReminder(): void {
    if (this.active) this.#pendingActivation = true;
  }

  /** The plan file's content, or null when there is no (readable) plan file. */
  async readPlan(): Promise<string | null> {
    const file = this.planFile;
    if (!file) return null;
    try {
      return await Deno.readTextFile(file);
    } catch {
      return null;
    }
  }

  /** Delete the plan file (nothing happens when there is none). */
  async clearPlan(): Promise<void> {
    const file = this.planFile;
    if (!file) return;
    try {
      await Deno.remove(file);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }

  /**
   * The plan reminder due before the next model call, or null. `history` is the context as it
   * stands (reminders given earlier are part of it); `afk` whether nobody can answer questions.
   */
  async reminder(
    history: readonly NormalizedMessage[],
    opts: { afk: boolean },
  ): Promise<string | null> {
    if (!this.active) {
      this.#reminderCount = 0;
      this.#pendingActivation = false;
      return null;
    }
    const file = this.planFile;
    const planExists = file !== null && isPresent(await pathStatus(file, { noFollow: true }));
    if (this.#pendingActivation) {
      this.#pendingActivation = false;
      this.#reminderCount = 1;
      return planExists
        ? reentryReminder(file, opts.afk)
        : fullReminder(file, planExists, opts.afk);
    }
    const since = assistantTurnsSinceReminder(history);
    if (since === null) {
      this.#reminderCount = 1;
      return fullReminder(file, planExists, opts.afk);
    }
    if (since < PLAN_REMINDER_INTERVAL) return null;
    this.#reminderCount += 1;
    return this.#reminderCount % PLAN_FULL_EVERY === 1
      ? fullReminder(file, planExists, opts.afk)
      : sparseReminder(file, opts.afk);
  }

  async #ensurePlanSession(): Promise<void> {
    const state = this.#store.state();
    if (!state.plan_session_id) state.plan_session_id = crypto.randomUUID().replaceAll("-", "");
    if (!state.plan_slug) {
      state.plan_slug = await createPlanSlug({
        plansDir: this.plansDir,
        planSessionId: state.plan_session_id,
        random: this.#random,
      });
    }
  }
}
