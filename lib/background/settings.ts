/**
 * The background task settings of a run, from the `background` config section, and the
 * command line of a detached worker for `keep_alive_on_exit`.
 *
 * @module
 */
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import type { BackgroundConfig } from "../config/schema.ts";
import type { BackgroundSettings, WorkerLaunch } from "../tooling/background_settings.ts";
import { pathStatusSync } from "../fs/exists.ts";
import { DENO_V8_FLAGS_ARG } from "../runtime_flags.ts";

/** Settings for the task manager from `background.*`. */
export function backgroundSettings(bg: BackgroundConfig): BackgroundSettings {
  return {
    maxRunningTasks: bg.max_running_tasks,
    readMaxBytes: bg.read_max_bytes,
    notificationTailLines: bg.notification_tail_lines,
    notificationTailChars: bg.notification_tail_chars,
    killGracePeriodMs: bg.kill_grace_period_ms,
    heartbeatIntervalMs: bg.worker_heartbeat_interval_ms,
    controlPollIntervalMs: bg.wait_poll_interval_ms,
    staleAfterMs: bg.worker_stale_after_ms,
    keepAliveWorker: bg.keep_alive_on_exit ? keepAliveWorkerLauncher() : null,
  };
}

/**
 * How to start `kimi __background-task-worker` the way this kimi runs: a compiled `kimi`
 * binary runs itself; `deno run` runs this program's main module again with only the
 * permissions the worker needs (read and write its task folder, run the command's programs).
 * `null` when this run cannot tell where it runs from.
 */
export function keepAliveWorkerLauncher(): ((launch: WorkerLaunch) => string[]) | null {
  let exec: string;
  try {
    exec = Deno.execPath();
  } catch {
    return null;
  }
  if (!/^deno(\.exe)?$/i.test(basename(exec))) return () => [exec];
  const main = Deno.mainModule;
  // The worker's own modules are imported on demand: it may read (or import) where they are.
  const source: string[] = [];
  const readable: string[] = [];
  if (main.startsWith("file:")) {
    const dir = fileURLToPath(new URL(".", main));
    readable.push(dir.replace(/\/$/, ""));
    const file = fileURLToPath(new URL("./deno.json", main));
    if (pathStatusSync(file) === "file") source.push("--config", file);
  } else if (/^https?:/.test(main)) {
    source.push(`--allow-import=${new URL(main).host}`);
  }
  return (launch) => [
    exec,
    "run",
    "--no-prompt",
    DENO_V8_FLAGS_ARG,
    ...source,
    `--allow-read=${[launch.taskDir, ...readable].join(",")}`,
    `--allow-write=${launch.taskDir}`,
    `--allow-run=${launch.programs.join(",")}`,
    main,
  ];
}
