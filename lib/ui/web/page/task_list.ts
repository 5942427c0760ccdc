/**
 * The background tasks of the page's tasks panel: their shape as `GET /api/sessions/{id}/tasks`
 * answers, and how long each has run as a short label.
 *
 * @module
 */

/** One background task (the server's `BackgroundTask`). */
export interface BackgroundTask {
  /** Task id. */
  task_id: string;
  /** `bash` (a Shell command) or `agent` (a background subagent). */
  kind: string;
  /** Status: `starting`, `running`, `completed`, `failed`, `killed`, `lost`. */
  status: string;
  /** What it is for. */
  description: string;
  /** The command of a Shell task. */
  command: string | null;
  /** The agent type of a background agent. */
  subagent_type: string | null;
  /** Created (unix seconds). */
  created_at: number;
  /** Started (unix seconds). */
  started_at: number | null;
  /** Finished (unix seconds). */
  finished_at: number | null;
  /** Exit code of a finished command. */
  exit_code: number | null;
  /** Whether it ran out of time. */
  timed_out: boolean;
  /** Why it failed. */
  failure_reason: string | null;
  /** The last lines of its output. */
  output_tail: string;
  /** Size of its whole output. */
  output_bytes: number;
  /** Whether it still runs. */
  running: boolean;
}

/** The task list answer. */
export interface TaskList {
  /** Tasks, newest first. */
  items: BackgroundTask[];
  /** How many still run. */
  running: number;
}

/** Seconds a task has run: until it finished, else until `nowS`. */
export function taskElapsedSeconds(t: BackgroundTask, nowS: number): number {
  const start = t.started_at ?? t.created_at;
  const end = t.finished_at ?? (t.running ? nowS : start);
  return Math.max(0, Math.floor(end - start));
}

/** A duration as `42s`, `3m 04s`, `2h 05m`. */
export function durationLabel(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const p = (n: number) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${p(s % 60)}s`;
  return `${Math.floor(s / 3600)}h ${p(Math.floor((s % 3600) / 60))}m`;
}

/** The status line of a task: status, exit code or reason. */
export function taskStatusLabel(t: BackgroundTask): string {
  if (t.timed_out) return "timed out";
  if (t.exit_code !== null && !t.running) return `${t.status} (exit ${t.exit_code})`;
  return t.status;
}
