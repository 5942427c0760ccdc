/**
 * Session lifecycle hooks around the UI run (reference §1.1): `SessionStart` before the UI
 * starts (matcher target `startup`, or `resume` when the session's wire.jsonl already has
 * records) and `SessionEnd` after it stops (each hook capped at 5 seconds).
 *
 * @module
 */
import { WireFile } from "../wire/recorder.ts";
import type { HookEngine } from "./engine.ts";

/** Seconds SessionEnd hooks get at most. */
export const SESSION_END_TIMEOUT_S = 5;

/** `startup` for a fresh session, `resume` when its wire.jsonl already holds records. */
export async function sessionStartSource(wireFilePath: string): Promise<"startup" | "resume"> {
  try {
    return (await new WireFile(wireFilePath).hasRecords()) ? "resume" : "startup";
  } catch {
    return "startup";
  }
}

/** Run the SessionStart hooks (awaited; their verdict changes nothing). Never throws. */
export async function runSessionStart(hooks: HookEngine, wireFilePath: string): Promise<void> {
  if (!hooks.hasHooksFor("SessionStart")) return;
  const source = await sessionStartSource(wireFilePath);
  await hooks.trigger("SessionStart", { target: source, input: { source } }).catch(() => {});
}

/**
 * Let the hooks still running from the session (fire-and-forget ones such as PostToolUse or
 * Notification) finish, then run the SessionEnd hooks, each capped at
 * {@link SESSION_END_TIMEOUT_S}. Never throws.
 */
export async function runSessionEnd(hooks: HookEngine, reason = "exit"): Promise<void> {
  await hooks.settle().catch(() => {});
  if (!hooks.hasHooksFor("SessionEnd")) return;
  await hooks.trigger("SessionEnd", {
    target: reason,
    input: { reason },
    maxTimeoutS: SESSION_END_TIMEOUT_S,
  }).catch(() => {});
}
