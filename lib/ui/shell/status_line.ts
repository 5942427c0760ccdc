/**
 * The status line under the prompt: model, context usage and the yolo / afk / plan flags.
 *
 * @module
 */
import { style } from "./theme.ts";

/** What the status line shows. */
export interface StatusState {
  /** Model name ("" when no model is set). */
  model: string;
  /** Context usage as a fraction 0..1, or null when unknown. */
  contextUsage: number | null;
  /** Yolo flag. */
  yolo: boolean;
  /** Afk flag. */
  afk: boolean;
  /** Plan mode. */
  plan: boolean;
  /** Raw shell-command mode (Ctrl-X). */
  shellMode?: boolean;
  /** A turn is running (the keys shown are the type-ahead ones). */
  busy?: boolean;
}

/** The status line text. */
export function formatStatusLine(s: StatusState): string {
  const parts = [s.model ? `model: ${s.model}` : "model: not set (run /setup)"];
  parts.push(`context: ${s.contextUsage === null ? "0" : (s.contextUsage * 100).toFixed(0)}%`);
  const flags: string[] = [];
  if (s.yolo) flags.push("yolo");
  if (s.afk) flags.push("afk");
  if (s.plan) flags.push("plan");
  if (s.shellMode) flags.push("shell mode");
  if (flags.length > 0) parts.push(flags.join(" "));
  const keys = s.busy
    ? "enter: queue · ctrl-s: steer · esc: interrupt"
    : s.shellMode
    ? "ctrl-x: agent mode"
    : "ctrl-x: shell mode · ctrl-j: newline";
  return style.dim(`${parts.join(" · ")}  ${keys}`);
}
