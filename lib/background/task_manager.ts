/**
 * Background tasks of one session: shell commands started by `Shell(run_in_background=true)`
 * and in-process work such as `Agent(run_in_background=true)` subagents
 * ({@link BackgroundTaskManager.startInProcess}), which outlive the turn that started them,
 * are inspected with TaskList/TaskOutput and stopped with TaskStop.
 *
 * Each task runs in this process as the leader of its own process group; its output is
 * appended to `<sessionDir>/tasks/<id>/output` and its state kept in
 * `<sessionDir>/tasks/<id>/task.json` (see {@link TaskStore}).
 *
 * The soul gets the manager of a session with {@link getTaskManager} (one per session dir
 * per process), subscribes to {@link BackgroundTaskManager.onTerminal} to publish completion
 * notifications, and calls {@link BackgroundTaskManager.stopAll} on shutdown (or
 * {@link closeTaskManager}).
 *
 * @module
 */
import { resolve } from "node:path";
import type { BackgroundSettings } from "../tooling/tool.ts";
import {
  exitCodeOf,
  type ShellOutcome,
  type ShellProcess,
  startShellProcess,
} from "../process/shell_process.ts";
import type { ShellInfo } from "../process/shell_info.ts";
import { OutputSink } from "./output_sink.ts";
import {
  isTerminalStatus,
  newTaskRecord,
  nowSeconds,
  TASK_ID_PATTERN,
  type TaskRecord,
} from "./task_record.ts";
import { TaskStore } from "./task_store.ts";

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

/** How an in-process task's body ended (an abort is judged by the manager). */
export type InProcessOutcome = { ok: true } | { ok: false; reason: string };

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
  /** The shell process (`bash` tasks), or null for in-process tasks. */
  proc: ShellProcess | null;
  /** Cancels an in-process task, or null for shell tasks. */
  abort: AbortController | null;
  sink: OutputSink;
  finished: Promise<TaskRecord>;
  persisted: Promise<void>;
}

const LOST_REASON = "The process running this task belonged to an earlier run and is gone.";

/** How a shell task ended, as record fields. */
function shellVerdict(rec: TaskRecord, outcome: ShellOutcome): Partial<TaskRecord> {
  if (outcome.kind === "timeout") {
    return {
      status: "failed",
      interrupted: true,
      timed_out: true,
      exit_code: exitCodeOf(outcome),
      failure_reason: `Command timed out after ${rec.timeout_s}s`,
    };
  }
  if (outcome.kind === "terminated" || rec.kill_reason !== null) {
    return {
      status: "killed",
      interrupted: true,
      exit_code: exitCodeOf(outcome),
      failure_reason: rec.kill_reason ?? "Killed",
    };
  }
  const code = exitCodeOf(outcome);
  return code === 0 ? { exit_code: code, status: "completed" } : {
    exit_code: code,
    status: "failed",
    failure_reason: `Command failed with exit code ${code}`,
  };
}

/** How an in-process task ended, as record fields. */
function inProcessVerdict(
  rec: TaskRecord,
  timedOut: boolean,
  outcome: InProcessOutcome,
): Partial<TaskRecord> {
  if (timedOut) {
    const label = rec.kind === "agent" ? "Agent task" : "Task";
    return {
      status: "failed",
      interrupted: true,
      timed_out: true,
      failure_reason: `${label} timed out after ${rec.timeout_s}s`,
    };
  }
  if (rec.kill_reason !== null) {
    return { status: "killed", interrupted: true, failure_reason: rec.kill_reason };
  }
  return outcome.ok
    ? { status: "completed" }
    : { status: "failed", failure_reason: outcome.reason };
}

/** The background tasks of one session. */
export class BackgroundTaskManager {
  /** Where task files live. */
  readonly store: TaskStore;
  #settings: BackgroundSettings;
  readonly #live = new Map<string, LiveTask>();
  #starting = 0;
  readonly #listeners = new Set<(task: TaskRecord) => void>();

  /** A manager for the session at `sessionDir`. Prefer {@link getTaskManager}. */
  constructor(sessionDir: string, settings: BackgroundSettings) {
    this.store = new TaskStore(sessionDir);
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

  /**
   * Start a command as a background task. Throws {@link TaskLimitError} at the running-task
   * limit, or the spawn error (the task is then recorded as failed).
   */
  async start(opts: StartTaskOptions): Promise<TaskRecord> {
    const limit = this.#settings.maxRunningTasks;
    if (this.activeCount + this.#starting >= limit) throw new TaskLimitError(limit);
    this.#starting++;
    try {
      return await this.#start(opts);
    } finally {
      this.#starting--;
    }
  }

  async #start(opts: StartTaskOptions): Promise<TaskRecord> {
    const record = newTaskRecord({
      kind: "bash",
      description: opts.description,
      status: "pending",
      command: opts.command,
      cwd: opts.cwd,
      timeoutS: opts.timeoutS,
      toolCallId: opts.toolCallId,
    });
    await this.store.create(record);
    const sink = await OutputSink.open(this.store.outputPath(record.id));
    let proc: ShellProcess;
    try {
      proc = startShellProcess({
        command: opts.command,
        cwd: opts.cwd,
        env: opts.env,
        shell: opts.shell,
        timeoutMs: opts.timeoutS ? opts.timeoutS * 1000 : undefined,
        killGraceMs: this.#settings.killGracePeriodMs,
        onData: (chunk) => sink.write(chunk),
      });
    } catch (e) {
      await sink.close();
      const t = nowSeconds();
      Object.assign(record, {
        status: "failed",
        failure_reason: `Failed to start the command: ${e instanceof Error ? e.message : e}`,
        finished_at: t,
        updated_at: t,
      });
      await this.store.write(record);
      throw e;
    }
    const started = nowSeconds();
    Object.assign(record, {
      status: "running",
      pid: proc.pid,
      shell_path: proc.shell.path,
      started_at: started,
      updated_at: started,
    });
    const live: LiveTask = {
      record,
      proc,
      abort: null,
      sink,
      persisted: Promise.resolve(),
      finished: Promise.resolve(record),
    };
    this.#live.set(record.id, live);
    live.finished = proc.done.then((outcome) => this.#finish(live, outcome));
    await this.#persist(live);
    return { ...record };
  }

  #persist(live: LiveTask): Promise<void> {
    const snapshot = { ...live.record };
    live.persisted = live.persisted.then(() => this.store.write(snapshot)).catch(() => {});
    return live.persisted;
  }

  async #finish(live: LiveTask, outcome: ShellOutcome): Promise<TaskRecord> {
    await live.sink.close();
    return await this.#settle(live, shellVerdict(live.record, outcome));
  }

  /**
   * The one way a task ends (shell or in-process): apply the verdict, note an output write
   * failure, stamp the finish time, persist, tell `onSettled` and the listeners.
   */
  async #settle(
    live: LiveTask,
    verdict: Partial<TaskRecord>,
    onSettled?: (task: TaskRecord) => void | Promise<void>,
  ): Promise<TaskRecord> {
    const rec = live.record;
    Object.assign(rec, verdict);
    if (live.sink.error && !rec.failure_reason) {
      rec.failure_reason = `Could not write output: ${String(live.sink.error)}`;
    }
    const t = nowSeconds();
    rec.finished_at = t;
    rec.updated_at = t;
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
   * same record and output file as shell tasks. TaskStop and the timeout abort `io.signal`.
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
        description: opts.description,
        status: "running",
        timeoutS: opts.timeoutS,
        toolCallId: opts.toolCallId,
        payload: opts.payload,
      });
      await this.store.create(record);
      const sink = await OutputSink.open(this.store.outputPath(record.id));
      live = {
        record,
        proc: null,
        abort: new AbortController(),
        sink,
        persisted: Promise.resolve(),
        finished: Promise.resolve(record),
      };
      this.#live.set(record.id, live);
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
        write: (text) => live.sink.write(encoder.encode(text)),
      });
    } catch (e) {
      outcome = { ok: false, reason: e instanceof Error ? e.message : String(e) };
    } finally {
      clearTimeout(timer);
    }
    await live.sink.close();
    return await this.#settle(live, inProcessVerdict(rec, timedOut, outcome), opts.onSettled);
  }

  /** A task's record, or `null` when unknown. Tasks of an earlier run are marked `lost`. */
  async get(taskId: string): Promise<TaskRecord | null> {
    const live = this.#live.get(taskId);
    if (live) return { ...live.record };
    const rec = await this.store.read(taskId);
    return rec ? await this.#reconcile(rec) : null;
  }

  async #reconcile(rec: TaskRecord): Promise<TaskRecord> {
    if (isTerminalStatus(rec.status) || this.#live.has(rec.id)) return rec;
    const t = nowSeconds();
    const lost: TaskRecord = {
      ...rec,
      status: "lost",
      failure_reason: rec.failure_reason ?? LOST_REASON,
      finished_at: t,
      updated_at: t,
    };
    await this.store.write(lost).catch(() => {});
    return lost;
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
   * A task's state and output tail, optionally after waiting for it to finish.
   * Throws {@link TaskNotFoundError}.
   */
  async output(taskId: string, opts: TaskOutputOptions = {}): Promise<TaskOutputSnapshot> {
    let task = await this.get(taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    const live = this.#live.get(taskId);
    if (opts.block && live && !isTerminalStatus(task.status)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        live.finished,
        new Promise<void>((
          res,
        ) => (timer = setTimeout(res, Math.max(0, opts.timeoutS ?? 30) * 1000))),
        new Promise<void>((res) => {
          if (!opts.signal) return;
          if (opts.signal.aborted) return res();
          onAbort = () => res();
          opts.signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
      task = { ...live.record };
    }
    if (live) await live.sink.flush();
    const finished = isTerminalStatus(task.status);
    const retrievalStatus: RetrievalStatus = finished
      ? "success"
      : opts.block
      ? "timeout"
      : "not_ready";
    const maxBytes = opts.maxBytes ?? this.#settings.readMaxBytes;
    const tail = await this.store.readTail(taskId, maxBytes);
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

  /**
   * Stop a task (its whole process group) and wait until it has ended. A finished task is
   * returned unchanged. Throws {@link TaskNotFoundError}.
   */
  async stop(taskId: string, reason = "Stopped"): Promise<TaskRecord> {
    const live = this.#live.get(taskId);
    if (!live) {
      const rec = await this.get(taskId);
      if (!rec) throw new TaskNotFoundError(taskId);
      return rec;
    }
    if (isTerminalStatus(live.record.status)) return { ...live.record };
    if (live.record.kill_reason === null) {
      live.record.kill_reason = reason;
      live.record.updated_at = nowSeconds();
      await this.#persist(live);
    }
    if (live.proc) await live.proc.terminate(reason);
    else live.abort?.abort(new Error(reason));
    return await live.finished;
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

const MANAGERS = new Map<string, BackgroundTaskManager>();

/**
 * The task manager of the session at `sessionDir`, created on first use; later calls return
 * the same instance (with `settings` applied), so tasks stay visible across turns and tools.
 */
export function getTaskManager(
  sessionDir: string,
  settings: BackgroundSettings,
): BackgroundTaskManager {
  const key = resolve(sessionDir);
  let m = MANAGERS.get(key);
  if (m) {
    m.updateSettings(settings);
  } else {
    m = new BackgroundTaskManager(key, settings);
    MANAGERS.set(key, m);
  }
  return m;
}

/** Stop every task of a session's manager and forget it (session shutdown). */
export async function closeTaskManager(sessionDir: string, reason?: string): Promise<void> {
  const key = resolve(sessionDir);
  const m = MANAGERS.get(key);
  if (!m) return;
  MANAGERS.delete(key);
  await m.stopAll(reason);
}
