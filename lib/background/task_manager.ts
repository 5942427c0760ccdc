/**
 * Background tasks of one session: shell commands started by `Shell(run_in_background=true)`
 * and in-process work such as `Agent(run_in_background=true)` subagents
 * ({@link BackgroundTaskManager.startInProcess}), which outlive the turn that started them,
 * are inspected with TaskList/TaskOutput and stopped with TaskStop.
 *
 * Files follow the reference's layout (see {@link TaskStore}): `spec.json`, `runtime.json`,
 * `control.json`, `consumer.json` and `output.log` under `<sessionDir>/tasks/<id>/`.
 *
 * A shell task runs as the leader of its own process group, supervised by this process (which
 * refreshes the `runtime.json` heartbeat and obeys a stop request written to `control.json`
 * by anyone) or, with `background.keep_alive_on_exit`, by a detached
 * `kimi __background-task-worker` that outlives kimi. A task whose supervisor is gone (its
 * process died, or its heartbeat is older than `worker_stale_after_ms`) is marked `lost` (or
 * `killed` when a stop had been asked for) the next time it is looked at.
 *
 * A manager belongs to one session: the host of the session (the CLI run, an ACP session)
 * creates it once and hands it to each app it builds for that session, so its tasks outlive a
 * rebuild of the app and are never seen by another session. The app subscribes to
 * {@link BackgroundTaskManager.onTerminal} to publish completion notifications; the host calls
 * {@link BackgroundTaskManager.stopAll} when the session ends.
 *
 * @module
 */
import { basename, resolve } from "node:path";
import type { BackgroundSettings } from "../tooling/background_settings.ts";
import { type ShellProcess, startShellProcess } from "../process/shell_process.ts";
import { resolveShell, type ShellInfo } from "../process/shell_info.ts";
import { type CommandWrapper, wrapCommand } from "../process/command_wrapper.ts";
import { log } from "../log.ts";
import { OutputSink } from "./output_sink.ts";
import {
  isTerminalStatus,
  newTaskRecord,
  nowSeconds,
  TASK_ID_PATTERN,
  type TaskRecord,
} from "./task_record.ts";
import { TaskStore } from "./task_store.ts";
import { type InProcessOutcome, inProcessVerdict, shellVerdict } from "./task_verdict.ts";

export type { InProcessOutcome } from "./task_verdict.ts";

/** Options of {@link BackgroundTaskManager.start}. */
export interface StartTaskOptions {
  /** Shell command line. */
  readonly command: string;
  /** Short description shown in lists. */
  readonly description: string;
  /** Working directory. */
  readonly cwd: string;
  /** Complete child environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Kill the task after this many seconds (`null`/omitted: no limit). */
  readonly timeoutS?: number | null;
  /** Id of the tool call that started the task. */
  readonly toolCallId?: string | null;
  /** Shell to use (resolved when omitted). */
  readonly shell?: ShellInfo;
  /** The session's command wrapper (its sandbox): how the command is spawned. */
  readonly wrapper: CommandWrapper;
}

/** What an in-process task's body gets. */
export interface InProcessTaskIO {
  /** The task's id. */
  readonly taskId: string;
  /** Aborted by TaskStop, the task timeout or shutdown. */
  readonly signal: AbortSignal;
  /** Append text to the task's output file. */
  write(text: string): void;
}

/** Options of {@link BackgroundTaskManager.startInProcess}. */
export interface StartInProcessTaskOptions {
  /** Task kind (the id prefix), e.g. `agent`. */
  readonly kind: string;
  /** Short description shown in lists. */
  readonly description: string;
  /** Abort the task after this many seconds (`null`/omitted: no limit). */
  readonly timeoutS?: number | null;
  /** Id of the tool call that started the task. */
  readonly toolCallId?: string | null;
  /** Kind-specific facts stored in the record (`kind_payload`). */
  readonly payload?: Record<string, unknown> | null;
  /** Called with the final record before listeners hear of it (e.g. to update other state). */
  readonly onSettled?: (task: TaskRecord) => Promise<void> | void;
  /** The work; it should stop soon after `io.signal` aborts. */
  readonly run: (io: InProcessTaskIO) => Promise<InProcessOutcome>;
}

/** Options of {@link BackgroundTaskManager.list}. */
export interface ListTasksOptions {
  /** Only tasks that have not finished (default true). */
  readonly activeOnly?: boolean;
  /** At most this many, newest first (default 20). */
  readonly limit?: number;
}

/** Options of {@link BackgroundTaskManager.output}. */
export interface TaskOutputOptions {
  /** Wait for the task to finish (default false). */
  readonly block?: boolean;
  /** Longest wait when blocking, in seconds (default 30). */
  readonly timeoutS?: number;
  /** Bytes of output tail to return (default `readMaxBytes`). */
  readonly maxBytes?: number;
  /** Stops a blocking wait early. */
  readonly signal?: AbortSignal;
}

/** `success` when the task has finished, else `not_ready` (no wait) or `timeout` (waited). */
export type RetrievalStatus = "success" | "not_ready" | "timeout";

/** What {@link BackgroundTaskManager.output} returns. */
export interface TaskOutputSnapshot {
  /** Whether the task had finished. */
  readonly retrievalStatus: RetrievalStatus;
  /** The task's state. */
  readonly task: TaskRecord;
  /** Absolute path of the output file. */
  readonly outputPath: string;
  /** Whether the output file exists. */
  readonly outputAvailable: boolean;
  /** Size of the output file in bytes. */
  readonly outputSizeBytes: number;
  /** Tail of the output (trailing newlines removed). */
  readonly previewText: string;
  /** Bytes in the tail. */
  readonly previewBytes: number;
  /** Whether the tail leaves out the start of the output. */
  readonly truncated: boolean;
}

/** No task with that id in this session. */
export class TaskNotFoundError extends Error {
  /** The id asked for. */
  readonly taskId: string;
  /** Create the error. */
  constructor(taskId: string) {
    super(`Task not found: ${taskId}`);
    this.name = "TaskNotFoundError";
    this.taskId = taskId;
  }
}

/** `max_running_tasks` reached. */
export class TaskLimitError extends Error {
  /** Create the error for a limit. */
  constructor(limit: number) {
    super(
      `Too many background tasks are already running (limit: ${limit}, set by ` +
        "background.max_running_tasks). Wait for one to finish or stop one with TaskStop.",
    );
    this.name = "TaskLimitError";
  }
}

interface LiveTask {
  record: TaskRecord;
  /** The shell process (`bash` tasks run here), or null. */
  proc: ShellProcess | null;
  /** Cancels an in-process task, or null. */
  abort: AbortController | null;
  /** Where output goes (null when a detached worker writes it). */
  sink: OutputSink | null;
  /** Run by a detached worker process (keep-alive). */
  detached: boolean;
  /** Resolves a detached task's `finished` once its runtime file says it ended. */
  settleDetached?: (rec: TaskRecord) => void;
  finished: Promise<TaskRecord>;
  persisted: Promise<void>;
}

const DEFAULT_HEARTBEAT_MS = 5000;
const DEFAULT_CONTROL_POLL_MS = 500;
const DEFAULT_STALE_AFTER_MS = 15000;

/**
 * Whether process `pid` is gone: `true` when it certainly no longer exists, `false` when it
 * does, `null` when this run cannot tell (no `/proc`, or no permission to look).
 */
function processGone(pid: number): boolean | null {
  if (pid === Deno.pid) return false;
  if (Deno.build.os !== "linux") return null;
  try {
    Deno.statSync(`/proc/${pid}`);
    return false;
  } catch (e) {
    return e instanceof Deno.errors.NotFound ? true : null;
  }
}

/** The background tasks of one session. */
export class BackgroundTaskManager {
  /** Where task files live. */
  readonly store: TaskStore;
  readonly #sessionId: string;
  #settings: BackgroundSettings;
  readonly #live = new Map<string, LiveTask>();
  #starting = 0;
  readonly #listeners = new Set<(task: TaskRecord) => void>();
  #supervisor: ReturnType<typeof setInterval> | null = null;
  #supervising = false;
  #warnedNoWorker = false;

  /** The manager of the session at `sessionDir` (create one per session and keep it). */
  constructor(sessionDir: string, settings: BackgroundSettings) {
    this.store = new TaskStore(sessionDir);
    this.#sessionId = basename(resolve(sessionDir));
    this.#settings = settings;
  }

  /** Current settings. */
  get settings(): BackgroundSettings {
    return this.#settings;
  }

  /** Replace the settings (limits apply to later calls). */
  updateSettings(settings: BackgroundSettings): void {
    this.#settings = settings;
  }

  /** Number of tasks of this process that have not finished. */
  get activeCount(): number {
    let n = 0;
    for (const t of this.#live.values()) if (!isTerminalStatus(t.record.status)) n++;
    return n;
  }

  /** Absolute path of a task's output file. */
  outputPath(taskId: string): string {
    return this.store.outputPath(taskId);
  }

  /** Call `listener` with the final record whenever a task of this manager finishes. */
  onTerminal(listener: (task: TaskRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get #heartbeatMs(): number {
    return this.#settings.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS;
  }

  get #pollMs(): number {
    return this.#settings.controlPollIntervalMs ?? DEFAULT_CONTROL_POLL_MS;
  }

  get #staleAfterS(): number {
    return (this.#settings.staleAfterMs ?? DEFAULT_STALE_AFTER_MS) / 1000;
  }

  /**
   * Start a command as a background task. Throws {@link TaskLimitError} at the running-task
   * limit, or the spawn error (the task is then recorded as failed).
   */
  async start(opts: StartTaskOptions): Promise<TaskRecord> {
    const limit = this.#settings.maxRunningTasks;
    if (this.activeCount + this.#starting >= limit) throw new TaskLimitError(limit);
    this.#starting++;
    try {
      const worker = this.#settings.keepAliveWorker;
      return worker ? await this.#startDetached(opts, worker) : await this.#start(opts);
    } finally {
      this.#starting--;
    }
  }

  #newShellRecord(opts: StartTaskOptions, shell: ShellInfo): TaskRecord {
    const record = newTaskRecord({
      kind: "bash",
      sessionId: this.#sessionId,
      description: opts.description,
      status: "starting",
      command: opts.command,
      cwd: opts.cwd,
      timeoutS: opts.timeoutS,
      toolCallId: opts.toolCallId,
    });
    record.shell_name = shell.name;
    record.shell_path = shell.path;
    return record;
  }

  async #failStart(record: TaskRecord, e: unknown): Promise<never> {
    const t = nowSeconds();
    Object.assign(record, {
      status: "failed",
      failure_reason: `Failed to start the command: ${e instanceof Error ? e.message : e}`,
      finished_at: t,
      updated_at: t,
    });
    await this.store.writeRuntime(record);
    throw e;
  }

  async #start(opts: StartTaskOptions): Promise<TaskRecord> {
    const record = this.#newShellRecord(opts, opts.shell ?? resolveShell(opts.env.PATH));
    await this.store.create(record);
    const sink = await OutputSink.open(this.store.outputPath(record.id));
    let proc: ShellProcess;
    try {
      proc = startShellProcess({
        command: opts.command,
        cwd: opts.cwd,
        env: opts.env,
        shell: opts.shell,
        wrapper: opts.wrapper,
        timeoutMs: opts.timeoutS ? opts.timeoutS * 1000 : undefined,
        killGraceMs: this.#settings.killGracePeriodMs,
        onData: (chunk) => sink.write(chunk),
      });
    } catch (e) {
      await sink.close();
      return await this.#failStart(record, e);
    }
    const started = nowSeconds();
    Object.assign(record, {
      status: "running",
      worker_pid: Deno.pid,
      child_pid: proc.pid,
      child_pgid: Deno.build.os === "windows" ? null : proc.pid,
      shell_name: proc.shell.name,
      shell_path: proc.shell.path,
      started_at: started,
      heartbeat_at: started,
      updated_at: started,
    });
    const live = this.#track(record, { proc, sink });
    live.finished = proc.done.then(async (outcome) => {
      await sink.close();
      return await this.#settle(live, shellVerdict(live.record, outcome));
    });
    await this.#persist(live);
    return { ...record };
  }

  /** Run the command under a detached worker that outlives this process (keep-alive). */
  async #startDetached(
    opts: StartTaskOptions,
    worker: NonNullable<BackgroundSettings["keepAliveWorker"]>,
  ): Promise<TaskRecord> {
    const shell = opts.shell ?? resolveShell(opts.env.PATH);
    const record = this.#newShellRecord(opts, shell);
    const argv = wrapCommand(opts.wrapper, [shell.program, "-c", opts.command], {
      cwd: opts.cwd,
      env: opts.env,
    });
    await this.store.create(record);
    const taskDir = this.store.taskDir(record.id);
    const cmd = [
      ...worker({ taskDir, programs: [...new Set([argv[0], shell.path])] }),
      "__background-task-worker",
      "--task-dir",
      taskDir,
      "--heartbeat-interval-ms",
      String(this.#heartbeatMs),
      "--control-poll-interval-ms",
      String(this.#pollMs),
      "--kill-grace-period-ms",
      String(this.#settings.killGracePeriodMs),
    ];
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(cmd[0], {
        args: cmd.slice(1),
        cwd: taskDir,
        env: { ...opts.env },
        clearEnv: true,
        stdin: "piped",
        stdout: "null",
        stderr: "null",
        detached: true,
      }).spawn();
    } catch (e) {
      if (!(e instanceof Deno.errors.NotCapable) && !(e instanceof Deno.errors.NotFound)) {
        return await this.#failStart(record, e);
      }
      // No permission to start a worker: run it here (it then stops when kimi exits).
      if (!this.#warnedNoWorker) {
        this.#warnedNoWorker = true;
        log(
          "WARNING",
          "background",
          `background.keep_alive_on_exit: cannot start a detached worker (${
            e instanceof Error ? e.message : e
          }); background tasks run inside kimi and stop when it exits`,
        );
      }
      await Deno.remove(taskDir, { recursive: true }).catch(() => {});
      return await this.#start(opts);
    }
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify({ argv, env: opts.env })));
    await writer.close().catch(() => {});
    child.unref();
    const live = this.#track(record, { detached: true });
    live.finished = new Promise<TaskRecord>((res) => (live.settleDetached = res));
    return { ...record };
  }

  #track(
    record: TaskRecord,
    parts: { proc?: ShellProcess; sink?: OutputSink; abort?: AbortController; detached?: boolean },
  ): LiveTask {
    const live: LiveTask = {
      record,
      proc: parts.proc ?? null,
      abort: parts.abort ?? null,
      sink: parts.sink ?? null,
      detached: parts.detached ?? false,
      persisted: Promise.resolve(),
      finished: Promise.resolve(record),
    };
    this.#live.set(record.id, live);
    this.#ensureSupervisor();
    return live;
  }

  #persist(live: LiveTask): Promise<void> {
    const snapshot = { ...live.record };
    live.persisted = live.persisted.then(() => this.store.writeRuntime(snapshot)).catch(() => {});
    return live.persisted;
  }

  /** Keep heartbeats fresh, obey stop requests and follow detached workers while tasks run. */
  #ensureSupervisor(): void {
    if (this.#supervisor !== null) return;
    const timer = setInterval(() => void this.#supervise(), this.#pollMs);
    Deno.unrefTimer(timer);
    this.#supervisor = timer;
  }

  async #supervise(): Promise<void> {
    if (this.#supervising) return;
    this.#supervising = true;
    try {
      const now = nowSeconds();
      let running = 0;
      for (const live of this.#live.values()) {
        const rec = live.record;
        if (isTerminalStatus(rec.status)) continue;
        running++;
        if (live.detached) {
          await this.#followDetached(live);
          continue;
        }
        if (now - (rec.heartbeat_at ?? 0) >= this.#heartbeatMs / 1000) {
          rec.heartbeat_at = now;
          rec.updated_at = now;
          void this.#persist(live);
        }
        if (rec.kill_requested_at === null) {
          const control = await this.store.readControl(rec.id);
          if (control.kill_requested_at !== null) {
            void this.stop(rec.id, control.kill_reason ?? "Killed", control.kill_requested_at);
          }
        }
      }
      if (running === 0 && this.#supervisor !== null) {
        clearInterval(this.#supervisor);
        this.#supervisor = null;
      }
    } finally {
      this.#supervising = false;
    }
  }

  /** Read a detached task's runtime; settle it when it ended or its worker is gone. */
  async #followDetached(live: LiveTask): Promise<void> {
    const runtime = await this.store.readRuntime(live.record.id);
    if (runtime) Object.assign(live.record, runtime);
    const control = await this.store.readControl(live.record.id);
    Object.assign(live.record, control);
    if (!isTerminalStatus(live.record.status)) {
      const dead = this.#deadVerdict(live.record);
      if (!dead) return;
      Object.assign(live.record, dead);
      await this.store.writeRuntime(live.record).catch(() => {});
    }
    this.#live.delete(live.record.id);
    live.settleDetached?.(this.#notify({ ...live.record }));
  }

  /**
   * The one way a task run here ends (shell or in-process): apply the verdict, note an output
   * write failure, stamp the finish time, persist, tell `onSettled` and the listeners.
   */
  async #settle(
    live: LiveTask,
    verdict: Partial<TaskRecord>,
    onSettled?: (task: TaskRecord) => void | Promise<void>,
  ): Promise<TaskRecord> {
    const rec = live.record;
    Object.assign(rec, verdict);
    if (live.sink?.error && !rec.failure_reason) {
      rec.failure_reason = `Could not write output: ${String(live.sink.error)}`;
    }
    const t = nowSeconds();
    rec.finished_at = t;
    rec.updated_at = t;
    rec.heartbeat_at = t;
    await this.#persist(live);
    try {
      await onSettled?.({ ...rec });
    } catch {
      // the task's state is already final
    }
    return this.#notify({ ...rec });
  }

  #notify(final: TaskRecord): TaskRecord {
    for (const l of this.#listeners) {
      try {
        l(final);
      } catch {
        // a listener's failure is not the task's
      }
    }
    return final;
  }

  /**
   * Start work that runs inside this process (e.g. a background subagent) as a task with the
   * same files as shell tasks. TaskStop and the timeout abort `io.signal`.
   * Throws {@link TaskLimitError} at the running-task limit.
   */
  async startInProcess(opts: StartInProcessTaskOptions): Promise<TaskRecord> {
    const limit = this.#settings.maxRunningTasks;
    if (this.activeCount + this.#starting >= limit) throw new TaskLimitError(limit);
    this.#starting++;
    let live: LiveTask;
    try {
      const record = newTaskRecord({
        kind: opts.kind,
        sessionId: this.#sessionId,
        description: opts.description,
        status: "running",
        timeoutS: opts.timeoutS,
        toolCallId: opts.toolCallId,
        payload: opts.payload,
      });
      record.worker_pid = Deno.pid;
      await this.store.create(record);
      const sink = await OutputSink.open(this.store.outputPath(record.id));
      live = this.#track(record, { sink, abort: new AbortController() });
      await this.#persist(live);
    } finally {
      this.#starting--;
    }
    live.finished = this.#runInProcess(live, opts);
    return { ...live.record };
  }

  async #runInProcess(live: LiveTask, opts: StartInProcessTaskOptions): Promise<TaskRecord> {
    const rec = live.record;
    const abort = live.abort!;
    const sink = live.sink!;
    let timedOut = false;
    const timer = opts.timeoutS
      ? setTimeout(() => {
        timedOut = true;
        abort.abort(new Error("timeout"));
      }, opts.timeoutS * 1000)
      : undefined;
    const encoder = new TextEncoder();
    let outcome: InProcessOutcome;
    try {
      outcome = await opts.run({
        taskId: rec.id,
        signal: abort.signal,
        write: (text) => sink.write(encoder.encode(text)),
      });
    } catch (e) {
      outcome = { ok: false, reason: e instanceof Error ? e.message : String(e) };
    } finally {
      clearTimeout(timer);
    }
    await sink.close();
    return await this.#settle(live, inProcessVerdict(rec, timedOut, outcome), opts.onSettled);
  }

  /** A task's record, or `null` when unknown. A task whose supervisor is gone is settled. */
  async get(taskId: string): Promise<TaskRecord | null> {
    const live = this.#live.get(taskId);
    if (live) return { ...live.record };
    const rec = await this.store.read(taskId);
    return rec ? await this.#reconcile(rec) : null;
  }

  /**
   * How a task not run by this process ended, if its supervisor is gone: `null` while it may
   * still be running (its worker is alive and its heartbeat fresh).
   */
  #deadVerdict(rec: TaskRecord): Partial<TaskRecord> | null {
    const now = nowSeconds();
    let reason: string;
    if (rec.kind !== "bash") {
      // In-process work (a background subagent) cannot outlive the process that ran it.
      if (rec.worker_pid === Deno.pid) return null;
      reason = "In-process background agent is no longer running";
    } else {
      const gone = rec.worker_pid !== null ? processGone(rec.worker_pid) : null;
      const last = rec.heartbeat_at ?? rec.started_at ?? (rec.updated_at || rec.created_at);
      const stale = now - last > this.#staleAfterS;
      if (gone === false && !stale) return null;
      if (gone === null && !stale) return null;
      reason = gone === true
        ? `Background worker (pid ${rec.worker_pid}) is no longer running`
        : rec.heartbeat_at === null
        ? "Background worker never heartbeat after startup"
        : "Background worker heartbeat expired";
    }
    return rec.kill_requested_at !== null
      ? {
        status: "killed",
        interrupted: true,
        failure_reason: rec.kill_reason ?? "Killed during recovery",
        finished_at: now,
        updated_at: now,
      }
      : { status: "lost", failure_reason: reason, finished_at: now, updated_at: now };
  }

  async #reconcile(rec: TaskRecord): Promise<TaskRecord> {
    if (isTerminalStatus(rec.status) || this.#live.has(rec.id)) return rec;
    const dead = this.#deadVerdict(rec);
    if (!dead) return rec;
    const settled: TaskRecord = { ...rec, ...dead };
    await this.store.writeRuntime(settled).catch(() => {});
    return settled;
  }

  /** Tasks of this session, newest first. */
  async list(opts: ListTasksOptions = {}): Promise<TaskRecord[]> {
    const activeOnly = opts.activeOnly ?? true;
    const limit = opts.limit ?? 20;
    const out: TaskRecord[] = [];
    for (const stored of await this.store.list()) {
      const live = this.#live.get(stored.id);
      const rec = live ? { ...live.record } : await this.#reconcile(stored);
      if (activeOnly && isTerminalStatus(rec.status)) continue;
      out.push(rec);
    }
    return out.slice(0, Math.max(0, limit));
  }

  /**
   * A task's state and output tail, optionally after waiting for it to finish; records what
   * the reader has seen in `consumer.json`. Throws {@link TaskNotFoundError}.
   */
  async output(taskId: string, opts: TaskOutputOptions = {}): Promise<TaskOutputSnapshot> {
    let task = await this.get(taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    const timeoutMs = Math.max(0, opts.timeoutS ?? 30) * 1000;
    if (opts.block && !isTerminalStatus(task.status)) {
      task = await this.#waitFor(taskId, timeoutMs, opts.signal) ?? task;
    }
    const live = this.#live.get(taskId);
    if (live?.sink) await live.sink.flush();
    const finished = isTerminalStatus(task.status);
    const retrievalStatus: RetrievalStatus = finished
      ? "success"
      : opts.block
      ? "timeout"
      : "not_ready";
    const maxBytes = opts.maxBytes ?? this.#settings.readMaxBytes;
    const tail = await this.store.readTail(taskId, maxBytes);
    await this.store.writeConsumer(taskId, {
      last_seen_output_size: tail.sizeBytes,
      last_viewed_at: nowSeconds(),
    }).catch(() => {});
    return {
      retrievalStatus,
      task,
      outputPath: resolve(this.store.outputPath(taskId)),
      outputAvailable: tail.exists,
      outputSizeBytes: tail.sizeBytes,
      previewText: tail.text.replace(/\n+$/, ""),
      previewBytes: tail.readBytes,
      truncated: tail.sizeBytes > tail.readBytes,
    };
  }

  /** Wait until a task has ended, the time is up or `signal` aborts; the latest record. */
  async #waitFor(
    taskId: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<TaskRecord | null> {
    const live = this.#live.get(taskId);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const polling = { on: true };
    const finished = live ? live.finished.then(() => {}) : (async () => {
      // Another process runs it: follow its files.
      while (polling.on) {
        const rec = await this.get(taskId);
        if (!rec || isTerminalStatus(rec.status)) return;
        await new Promise((r) => setTimeout(r, this.#pollMs));
      }
    })();
    await Promise.race([
      finished,
      new Promise<void>((res) => (timer = setTimeout(res, timeoutMs))),
      new Promise<void>((res) => {
        if (!signal) return;
        if (signal.aborted) return res();
        onAbort = () => res();
        signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    polling.on = false;
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
    return await this.get(taskId);
  }

  /**
   * Stop a task (its whole process group) and wait until it has ended. A finished task is
   * returned unchanged. The request is written to `control.json` first, so a task run by
   * another process (a keep-alive worker) stops too. Throws {@link TaskNotFoundError}.
   */
  async stop(taskId: string, reason = "Stopped", requestedAt?: number): Promise<TaskRecord> {
    const live = this.#live.get(taskId);
    const rec = live ? live.record : await this.get(taskId);
    if (!rec) throw new TaskNotFoundError(taskId);
    if (isTerminalStatus(rec.status)) return { ...rec };
    if (rec.kill_requested_at === null) {
      rec.kill_requested_at = requestedAt ?? nowSeconds();
      rec.kill_reason = reason;
      rec.updated_at = nowSeconds();
      await this.store.writeControl(rec).catch(() => {});
      if (live) await this.#persist(live);
    }
    if (live?.proc) {
      await live.proc.terminate(reason);
      return await live.finished;
    }
    if (live?.abort) {
      live.abort.abort(new Error(reason));
      return await live.finished;
    }
    // A worker process runs it: it polls control.json; give it the grace period to obey.
    const waitMs = this.#settings.killGracePeriodMs + 4 * this.#pollMs + 1000;
    return await this.#waitFor(taskId, waitMs) ?? rec;
  }

  /** Stop every running task of this manager; returns their ids. */
  async stopAll(reason = "Session ended"): Promise<string[]> {
    const ids = [...this.#live.values()]
      .filter((t) => !isTerminalStatus(t.record.status))
      .map((t) => t.record.id);
    await Promise.all(ids.map((id) => this.stop(id, reason).catch(() => null)));
    return ids;
  }

  /** Whether `id` has the shape of a task id. */
  static isTaskId(id: string): boolean {
    return TASK_ID_PATTERN.test(id);
  }
}
