/**
 * Background task settings as tools and the task manager see them (`[background]` in config).
 *
 * @module
 */

/** Background task settings. */
export interface BackgroundSettings {
  /** Max tasks running at once. */
  readonly maxRunningTasks: number;
  /** Max bytes TaskOutput returns. */
  readonly readMaxBytes: number;
  /** Lines of output tail in notifications. */
  readonly notificationTailLines: number;
  /** Chars of output tail in notifications. */
  readonly notificationTailChars: number;
  /** Grace period between SIGTERM and SIGKILL. */
  readonly killGracePeriodMs: number;
  /** How often a running task's `runtime.json` heartbeat is refreshed (default 5000 ms). */
  readonly heartbeatIntervalMs?: number;
  /** How often `control.json` is checked for a stop request (default 500 ms). */
  readonly controlPollIntervalMs?: number;
  /** A task whose heartbeat is older than this is no longer running (default 15000 ms). */
  readonly staleAfterMs?: number;
  /**
   * Shell tasks outlive kimi (`background.keep_alive_on_exit`): each runs under a detached
   * `kimi __background-task-worker` whose command line this builds. `null`/absent: tasks run
   * in this process and stop when it exits.
   */
  readonly keepAliveWorker?: ((launch: WorkerLaunch) => string[]) | null;
}

/** What a detached background worker is started for. */
export interface WorkerLaunch {
  /** The task's folder (the worker reads and writes only there). */
  readonly taskDir: string;
  /** The programs the worker may run: what it spawns (the shell or the sandbox wrapping it)
   * and the shell whose `kill` stops the process group. */
  readonly programs: readonly string[];
}
