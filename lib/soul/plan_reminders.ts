/**
 * Plan mode's `<system-reminder>` texts and schedule: a full reminder on activation, then one
 * every {@link PLAN_REMINDER_INTERVAL} assistant turns, every {@link PLAN_FULL_EVERY}th of them
 * full again; a re-entry reminder when the plan file already exists.
 *
 * @module
 */
import { extractText, type NormalizedMessage } from "../llm/message.ts";

/** Assistant turns between two plan reminders. */
export const PLAN_REMINDER_INTERVAL = 5;
/** Every Nth plan reminder is the full one (the others are short). */
export const PLAN_FULL_EVERY = 5;

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
