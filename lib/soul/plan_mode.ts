/**
 * Plan mode of the root agent (reference §7.13): on/off state persisted in `state.json`
 * (`plan_mode`, `plan_session_id`, `plan_slug`), the plan file `~/.kimi/plans/<slug>.md`
 * (always under HOME, never under `KIMI_SHARE_DIR`), and the `<system-reminder>` schedule:
 * a full reminder on activation, then one every {@link PLAN_REMINDER_INTERVAL} assistant turns,
 * every {@link PLAN_FULL_EVERY}th of them full again.
 *
 * @module
 */
import { isPresent, pathStatus } from "../fs/exists.ts";
import { join } from "node:path";
import { extractText, type NormalizedMessage } from "../llm/message.ts";

/** Assistant turns between two plan reminders. */
export const PLAN_REMINDER_INTERVAL = 5;
/** Every Nth plan reminder is the full one (the others are short). */
export const PLAN_FULL_EVERY = 5;
/** Attempts at a slug whose plan file does not exist yet. */
const SLUG_ATTEMPTS = 20;

/** Hero names plan-file slugs are made of (three of them, joined by `-`). */
export const HERO_NAMES: readonly string[] = [
  "iron-man",
  "spider-man",
  "captain-america",
  "thor",
  "hulk",
  "black-widow",
  "hawkeye",
  "black-panther",
  "doctor-strange",
  "scarlet-witch",
  "vision",
  "falcon",
  "ant-man",
  "wasp",
  "captain-marvel",
  "gamora",
  "star-lord",
  "groot",
  "rocket",
  "drax",
  "mantis",
  "nebula",
  "shang-chi",
  "moon-knight",
  "ms-marvel",
  "wolverine",
  "cyclops",
  "storm",
  "jean-grey",
  "rogue",
  "beast",
  "nightcrawler",
  "colossus",
  "shadowcat",
  "jubilee",
  "iceman",
  "psylocke",
  "silver-surfer",
  "nova",
  "squirrel-girl",
  "daredevil",
  "luke-cage",
  "iron-fist",
  "jessica-jones",
  "blade",
  "ghost-rider",
  "miles-morales",
  "kate-bishop",
  "medusa",
  "black-bolt",
  "quake",
  "mockingbird",
  "valkyrie",
  "hercules",
  "batman",
  "superman",
  "wonder-woman",
  "flash",
  "aquaman",
  "green-lantern",
  "martian-manhunter",
  "cyborg",
  "hawkgirl",
  "green-arrow",
  "black-canary",
  "zatanna",
  "shazam",
  "blue-beetle",
  "booster-gold",
  "firestorm",
  "atom",
  "hawkman",
  "plastic-man",
  "starfire",
  "raven",
  "beast-boy",
  "robin",
  "nightwing",
  "batgirl",
  "huntress",
  "supergirl",
  "stargirl",
  "doctor-fate",
  "mister-terrific",
  "swamp-thing",
  "vixen",
  "static",
  "mister-miracle",
  "big-barda",
  "orion",
  "impulse",
  "kid-flash",
  "miss-martian",
  "starman",
];

/** The plans directory: `<home>/.kimi/plans`. */
export function plansDir(home: string): string {
  return join(home, ".kimi", "plans");
}

/** Options of {@link createPlanSlug}. */
export interface CreatePlanSlugOptions {
  /** Directory holding the plan files (a slug whose file exists there is avoided). */
  plansDir: string;
  /** Plan session id (its first 8 characters disambiguate when every attempt collides). */
  planSessionId: string;
  /** Random source in [0, 1) (default `crypto.getRandomValues`). */
  random?: () => number;
}

/**
 * A new slug of three hero names, e.g. `thor-storm-robin`, whose plan file does not exist yet;
 * after {@link SLUG_ATTEMPTS} collisions the plan session id's prefix is appended.
 */
export async function createPlanSlug(opts: CreatePlanSlugOptions): Promise<string> {
  const random = opts.random ?? secureRandom;
  const pick = () => HERO_NAMES[Math.floor(random() * HERO_NAMES.length) % HERO_NAMES.length];
  let slug = "";
  for (let i = 0; i < SLUG_ATTEMPTS; i++) {
    slug = [pick(), pick(), pick()].join("-");
    if (!isPresent(await pathStatus(join(opts.plansDir, `${slug}.md`), { noFollow: true }))) {
      return slug;
    }
  }
  return `${slug}-${opts.planSessionId.slice(0, 8)}`;
}

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

/** First line of the full reminder (also how earlier reminders are recognised in the context). */
export const FULL_REMINDER_HEAD =
  "Plan mode is on. Do not change anything: no edits except to the plan file named below, " +
  "no tools with side effects. This overrides every other instruction.";
/** Start of the short reminder. */
export const SPARSE_REMINDER_HEAD = "Plan mode is still on (full rules given earlier).";

/**
 * Assistant messages after the most recent plan reminder in `history`, or null when the
 * history holds no plan reminder (first reminder, or it was compacted away).
 */
export function assistantTurnsSinceReminder(history: readonly NormalizedMessage[]): number | null {
  let turns = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i];
    if (m.role === "user" && isPlanReminder(m)) return turns;
    if (m.role === "assistant") turns++;
  }
  return null;
}

function isPlanReminder(m: NormalizedMessage): boolean {
  const text = extractText(m.content);
  return text.includes(FULL_REMINDER_HEAD) || text.includes(SPARSE_REMINDER_HEAD);
}

/** The full plan reminder. */
export function fullReminder(planFile: string | null, planExists: boolean, afk: boolean): string {
  const lines = [FULL_REMINDER_HEAD];
  if (planFile) {
    lines.push(
      "",
      planExists
        ? `Plan file: ${planFile} (it already exists: read it, then update it with WriteFile or StrReplaceFile)`
        : `Plan file: ${planFile} (does not exist yet: create it with WriteFile, then refine it with WriteFile or StrReplaceFile)`,
      "It is the only file you may change.",
    );
  }
  lines.push(
    "",
    "How to work:",
    "1. Explore: read the relevant code with Glob, Grep and ReadFile.",
    "2. Design: weigh the options and settle on one recommended approach.",
    "3. Check: re-read the key files to confirm your understanding.",
    "4. Write: put the plan in the plan file (WriteFile creates it).",
    "5. Submit: call ExitPlanMode so the user can approve the plan.",
    "",
  );
  if (afk) {
    lines.push(
      "Nobody is at the keyboard (afk mode): do not call AskUserQuestion. Decide from the context " +
        "you have, prefer the safest and most reversible approach, and state your assumptions in " +
        "the plan.",
      "End your turn by calling ExitPlanMode once the plan file is written; never end it any " +
        "other way.",
    );
  } else {
    lines.push(
      "Propose at most two or three genuinely different approaches, and only when the choice " +
        "really depends on the user; if one approach is clearly better, propose just that one.",
      "If the right approach depends on requirements or preferences you do not know, ask with " +
        "AskUserQuestion before writing the plan.",
      "When the plan offers several approaches, pass them as `options` to ExitPlanMode so the " +
        "user can pick one when approving.",
      "End your turn with AskUserQuestion (to clarify) or ExitPlanMode (to get approval), never " +
        "any other way. The user cannot see the plan until ExitPlanMode shows it, so never ask " +
        "for approval in text or through AskUserQuestion.",
    );
  }
  return lines.join("\n");
}

/** The short plan reminder. */
export function sparseReminder(planFile: string | null, afk: boolean): string {
  const parts = [
    SPARSE_REMINDER_HEAD,
    planFile ? `Read-only except the plan file (${planFile}).` : "Read-only.",
    "Edit the plan with WriteFile or StrReplaceFile (create it with WriteFile first).",
  ];
  if (afk) {
    parts.push(
      "afk mode: do not call AskUserQuestion; choose the best approach yourself and end the turn " +
        "with ExitPlanMode once the plan is written.",
    );
  } else {
    parts.push(
      "Clarify preferences with AskUserQuestion when it improves the plan, pass alternative " +
        "approaches as ExitPlanMode options, and end each turn with AskUserQuestion or " +
        "ExitPlanMode; never ask for plan approval any other way.",
    );
  }
  return parts.join(" ");
}

/** The activation reminder when the plan file already exists (plan mode re-entered). */
export function reentryReminder(planFile: string, afk: boolean): string {
  const lines = [
    FULL_REMINDER_HEAD,
    "",
    "## Back in plan mode",
    `A plan from an earlier planning session is at ${planFile}.`,
    "1. Read it first.",
    "2. Compare it with what the user is asking now.",
    "3. Same task: update the plan. Different task: replace it with a new plan.",
    "4. Edit it with WriteFile or StrReplaceFile; it is the only file you may change.",
  ];
  if (afk) {
    lines.push(
      "5. afk mode: do not call AskUserQuestion; resolve doubts with your best judgement.",
      "",
      "End your turn by calling ExitPlanMode once the plan file is updated.",
    );
  } else {
    lines.push(
      "5. Ask with AskUserQuestion when requirements or preferences are unclear.",
      "",
      "End your turn with AskUserQuestion (to clarify) or ExitPlanMode (to get approval).",
    );
  }
  return lines.join("\n");
}

function secureRandom(): number {
  const buf = new Uint32Array(1);
  crypto.getRandomValues(buf);
  return buf[0] / 0x1_0000_0000;
}
