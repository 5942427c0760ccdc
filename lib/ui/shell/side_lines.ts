/**
 * How the shell shows things that happen beside the conversation: side-question (`/btw`)
 * answers and notifications of finished background work.
 *
 * @module
 */
import type { EventPayload } from "../../wire/messages.ts";
import { style } from "./theme.ts";

/** The line shown when a notification arrives (turn running or idle at the prompt). */
export function notificationLine(n: EventPayload<"Notification">): string {
  const mark = n.severity === "error"
    ? style.error("●")
    : n.severity === "success"
    ? style.ok("●")
    : style.warn("●");
  const sub = n.source_kind === "background_task" ? style.dim(` (task ${n.source_id})`) : "";
  return `${mark} ${n.title}${sub}`;
}

/** The line shown when a side question starts. */
export function btwQuestionLine(question: string): string {
  return style.dim(`💭 btw: ${question}`);
}

/** The answer (markdown-rendered by the caller) or the error of a side question. */
export function btwAnswerLines(
  end: EventPayload<"BtwEnd">,
  render: (markdown: string) => string,
): string {
  if (end.response !== null) return render(end.response);
  return style.error(`Side question failed: ${end.error ?? "No response received."}`);
}
