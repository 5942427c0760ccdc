/**
 * `kimi __background-task-worker`: runs one background shell task detached from kimi, so it
 * outlives the kimi process that started it (`background.keep_alive_on_exit`), as the
 * reference's worker does. It reads the task's `spec.json`, takes the exact argument vector and
 * environment its parent prepared (already sandboxed) as JSON on stdin, appends the command's
 * output to `output.log`, refreshes the heartbeat in `runtime.json`, obeys a stop request in
 * `control.json` (SIGTERM to the group, SIGKILL after the grace period) and writes the final
 * state. It touches nothing outside the task's folder.
 *
 * @module
 */
import { basename, dirname } from "node:path";
import { startShellProcess } from "../process/shell_process.ts";
import { OutputSink } from "./output_sink.ts";
import { isTerminalStatus, nowSeconds, type TaskRecord } from "./task_record.ts";
import { TaskStore } from "./task_store.ts";
import { shellVerdict } from "./task_verdict.ts";

/** The worker's flags. */
export interface WorkerFlags {
  /** `--task-dir`. */
  taskDir: string;
  /** `--heartbeat-interval-ms` (default 5000). */
  heartbeatIntervalMs: number;
  /** `--control-poll-interval-ms` (default 500). */
  controlPollIntervalMs: number;
  /** `--kill-grace-period-ms` (default 2000). */
  killGracePeriodMs: number;
}

/** Parse the worker's flags; throws with a usage message on bad input. */
export function parseWorkerFlags(args: readonly string[]): WorkerFlags {
  const flags: WorkerFlags = {
    taskDir: "",
    heartbeatIntervalMs: 5000,
    controlPollIntervalMs: 500,
    killGracePeriodMs: 2000,
  };
  const numeric: Record<string, keyof WorkerFlags> = {
    "--heartbeat-interval-ms": "heartbeatIntervalMs",
    "--control-poll-interval-ms": "controlPollIntervalMs",
    "--kill-grace-period-ms": "killGracePeriodMs",
  };
  for (let i = 0; i < args.length; i++) {
    const name = args[i];
    const value = args[i + 1];
    if (value === undefined) throw new Error(`Option '${name}' requires an argument.`);
    i++;
    if (name === "--task-dir") flags.taskDir = value;
    else if (name in numeric) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new Error(`Invalid value for '${name}': ${value}`);
      (flags[numeric[name]] as number) = n;
    } else throw new Error(`No such option: ${name}`);
  }
  if (!flags.taskDir) throw new Error("Missing option '--task-dir'.");
  return flags;
}

interface WorkerInput {
  argv: string[];
  env: Record<string, string>;
}

async function readInput(): Promise<WorkerInput> {
  const text = await new Response(Deno.stdin.readable).text();
  const data = JSON.parse(text) as Partial<WorkerInput>;
  if (!Array.isArray(data.argv) || data.argv.length === 0 || typeof data.env !== "object") {
    throw new Error("the worker expects {argv, env} as JSON on stdin");
  }
  return { argv: data.argv.map(String), env: data.env as Record<string, string> };
}

/** Run the worker; resolves with its exit code. */
export async function runWorker(args: readonly string[]): Promise<number> {
  let flags: WorkerFlags;
  try {
    flags = parseWorkerFlags(args);
  } catch (e) {
    console.error(`__background-task-worker: ${e instanceof Error ? e.message : e}`);
    return 2;
  }
  const id = basename(flags.taskDir);
  const store = new TaskStore(dirname(dirname(flags.taskDir)));
  const rec = await store.read(id);
  if (!rec) {
    console.error(`__background-task-worker: no task spec in ${flags.taskDir}`);
    return 1;
  }
  const write = (patch: Partial<TaskRecord>) => {
    Object.assign(rec, patch, { updated_at: nowSeconds() });
    return store.writeRuntime(rec).catch(() => {});
  };
  const started = nowSeconds();
  await write({
    status: "starting",
    worker_pid: Deno.pid,
    started_at: started,
    heartbeat_at: started,
  });
  const early = await store.readControl(id);
  if (early.kill_requested_at !== null) {
    Object.assign(rec, early);
    await write({
      status: "killed",
      interrupted: true,
      finished_at: nowSeconds(),
      failure_reason: early.kill_reason ?? "Killed before command start",
    });
    return 0;
  }
  let input: WorkerInput;
  try {
    input = await readInput();
  } catch (e) {
    await write({
      status: "failed",
      finished_at: nowSeconds(),
      failure_reason: `Background worker got no command: ${e instanceof Error ? e.message : e}`,
    });
    return 1;
  }
  const sink = await OutputSink.open(store.outputPath(id));
  let proc;
  try {
    proc = startShellProcess({
      command: rec.command ?? "",
      cwd: rec.cwd ?? Deno.cwd(),
      env: input.env,
      argv: input.argv,
      shell: {
        name: rec.shell_name === "sh" ? "sh" : "bash",
        program: rec.shell_path ?? "/bin/sh",
        path: rec.shell_path ?? "/bin/sh",
      },
      timeoutMs: rec.timeout_s ? rec.timeout_s * 1000 : undefined,
      killGraceMs: flags.killGracePeriodMs,
      onData: (chunk) => sink.write(chunk),
    });
  } catch (e) {
    await sink.close();
    await write({
      status: "failed",
      finished_at: nowSeconds(),
      failure_reason: `Failed to start the command: ${e instanceof Error ? e.message : e}`,
    });
    return 1;
  }
  const now = nowSeconds();
  await write({
    status: "running",
    child_pid: proc.pid,
    child_pgid: Deno.build.os === "windows" ? null : proc.pid,
    heartbeat_at: now,
  });
  let stopping = false;
  const heartbeat = setInterval(() => {
    if (!isTerminalStatus(rec.status)) void write({ heartbeat_at: nowSeconds() });
  }, flags.heartbeatIntervalMs);
  const control = setInterval(async () => {
    if (stopping) return;
    const c = await store.readControl(id);
    if (c.kill_requested_at === null) return;
    stopping = true;
    Object.assign(rec, c);
    void proc.terminate(c.kill_reason ?? "Killed");
  }, flags.controlPollIntervalMs);
  const outcome = await proc.done;
  clearInterval(heartbeat);
  clearInterval(control);
  await sink.close();
  Object.assign(rec, await store.readControl(id));
  const verdict = shellVerdict(rec, outcome);
  if (sink.error && !verdict.failure_reason) {
    verdict.failure_reason = `Could not write output: ${String(sink.error)}`;
  }
  const end = nowSeconds();
  await write({ ...verdict, finished_at: end, heartbeat_at: end });
  return 0;
}
