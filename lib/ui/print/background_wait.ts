/**
 * After a text-mode print command, wait for the background tasks it started (reference §11):
 * re-enter the agent when finished tasks have news for it, give up at a ceiling, kill what is
 * left and let the agent summarise.
 *
 * @module
 */
import type { KimiApp } from "../../app/kimi_app.ts";

/** Prompt used to hand finished tasks back to the agent. */
export const BACKGROUND_DONE_PROMPT =
  "<system-reminder>Background tasks have completed. Process their results.</system-reminder>";

/** Options of {@link waitForBackgroundTasks}. */
export interface BackgroundWaitOptions {
  /** Run one agent turn with this input (the print UI's turn runner). */
  runTurn(input: string): Promise<void>;
  /** Cancelled by the user. */
  signal: AbortSignal;
  /** Writes to stderr. */
  warn?: (line: string) => void;
  /** Poll interval (ms). */
  pollMs?: number;
}

/** Outcome: `done` (all tasks ended) or `timed_out` (tasks were killed). */
export type BackgroundWaitResult = "done" | "timed_out";

/** Wait as §11 describes; resolves with how it ended. */
export async function waitForBackgroundTasks(
  app: KimiApp,
  opts: BackgroundWaitOptions,
): Promise<BackgroundWaitResult> {
  const bg = app.config.background;
  if (bg.keep_alive_on_exit) return "done";
  const manager = app.tasks;
  const notes = app.taskNotifications;
  const active = await manager.list({ activeOnly: true, limit: 1000 });
  if (active.length === 0 && (notes?.size ?? 0) === 0) return "done";
  const timeouts = active.map((t) => t.timeout_s ?? bg.agent_task_timeout_s);
  const capS = active.length > 0
    ? Math.min(Math.max(...timeouts), bg.print_wait_ceiling_s)
    : bg.print_wait_ceiling_s;
  const deadline = Date.now() + capS * 1000;
  const pollMs = opts.pollMs ?? 1000;
  while (!opts.signal.aborted) {
    if ((notes?.size ?? 0) > 0) {
      await opts.runTurn(BACKGROUND_DONE_PROMPT);
      continue;
    }
    if (manager.activeCount === 0) {
      if ((notes?.size ?? 0) > 0) continue;
      return "done";
    }
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  if (opts.signal.aborted) return "done";
  const left = await manager.list({ activeOnly: true, limit: 1000 });
  const killed = await manager.stopAll("print_wait_timeout");
  (opts.warn ?? ((l) => console.error(l)))(
    `timed out waiting for background tasks (${capS}s), killed ${killed.length} tasks`,
  );
  const lines = left.map((t) =>
    `  - ${t.id}: ${t.description} ${killed.includes(t.id) ? "(killed)" : "(kill failed)"}`
  ).join("\n");
  try {
    await opts.runTurn(
      `<system-reminder>\nBackground tasks exceeded the ${capS}s wait limit and were ` +
        `terminated:\n${lines}\nSummarize progress and inform the user, then conclude.\n` +
        "</system-reminder>",
    );
  } catch {
    // the follow-up turn is best effort; the run still fails
  }
  return "timed_out";
}
