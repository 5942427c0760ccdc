/**
 * The persisted state of one background task, in the reference's layout
 * (`<sessionDir>/tasks/<id>/`): `spec.json` (what to run, written once), `runtime.json` (status,
 * pids, exit code, timestamps and heartbeat, rewritten as the task runs), `control.json` (a kill
 * request, which any process may write), `consumer.json` (how much output a reader has seen)
 * and `output.log`. In memory a task is one flat {@link TaskRecord}: the spec, runtime and
 * control fields side by side.
 *
 * @module
 */
import * as z from "zod";

/** Lifecycle states (the reference's). `lost`: the process running the task is gone. */
export const TaskStatusSchema = z.enum([
  "created",
  "starting",
  "running",
  "awaiting_approval",
  "completed",
  "failed",
  "killed",
  "lost",
]);
/** A task status. */
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** Statuses after which a task never changes again. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ["completed", "failed", "killed", "lost"];

/** Whether a status is terminal. */
export function isTerminalStatus(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

const nullableNumber = z.number().nullable().default(null);
const nullableInt = z.number().int().nullable().default(null);
const nullableString = z.string().nullable().default(null);

/** `spec.json`: what the task is and runs. Times are Unix seconds (fractional). */
export const TaskSpecSchema = z.object({
  version: z.number().int().default(1),
  id: z.string(),
  kind: z.string(),
  session_id: z.string().default(""),
  description: z.string(),
  tool_call_id: z.string().default(""),
  owner_role: z.string().default("root"),
  created_at: z.number(),
  command: nullableString,
  shell_name: nullableString,
  shell_path: nullableString,
  cwd: nullableString,
  timeout_s: nullableNumber,
  /** Kind-specific facts, e.g. `agent_id`/`subagent_type` of an `agent` task. */
  kind_payload: z.record(z.string(), z.unknown()).nullable().default(null),
});
/** Contents of `spec.json`. */
export type TaskSpec = z.infer<typeof TaskSpecSchema>;

/** `runtime.json`: how the task is doing. */
export const TaskRuntimeSchema = z.object({
  status: TaskStatusSchema.default("created"),
  worker_pid: nullableInt,
  child_pid: nullableInt,
  child_pgid: nullableInt,
  started_at: nullableNumber,
  heartbeat_at: nullableNumber,
  updated_at: z.number().default(0),
  finished_at: nullableNumber,
  exit_code: nullableInt,
  interrupted: z.boolean().default(false),
  timed_out: z.boolean().default(false),
  failure_reason: nullableString,
});
/** Contents of `runtime.json`. */
export type TaskRuntime = z.infer<typeof TaskRuntimeSchema>;

/** `control.json`: a request to stop the task. */
export const TaskControlSchema = z.object({
  kill_requested_at: nullableNumber,
  kill_reason: nullableString,
  force: z.boolean().default(false),
});
/** Contents of `control.json`. */
export type TaskControl = z.infer<typeof TaskControlSchema>;

/** `consumer.json`: what a reader of the output has seen. */
export const TaskConsumerSchema = z.object({
  last_seen_output_size: z.number().int().default(0),
  last_viewed_at: nullableNumber,
});
/** Contents of `consumer.json`. */
export type TaskConsumer = z.infer<typeof TaskConsumerSchema>;

/** A task in memory: its spec, runtime and control fields, flat. */
export type TaskRecord = TaskSpec & TaskRuntime & TaskControl;

/** The three files a record is written as. */
export interface TaskFiles {
  /** `spec.json`. */
  spec: TaskSpec;
  /** `runtime.json`. */
  runtime: TaskRuntime;
  /** `control.json`. */
  control: TaskControl;
}

/** Split a record into its files. */
export function recordFiles(rec: TaskRecord): TaskFiles {
  return {
    spec: TaskSpecSchema.parse(pick(rec, TaskSpecSchema.keyof().options)),
    runtime: TaskRuntimeSchema.parse(pick(rec, TaskRuntimeSchema.keyof().options)),
    control: TaskControlSchema.parse(pick(rec, TaskControlSchema.keyof().options)),
  };
}

/** A record from its files. */
export function recordFromFiles(files: TaskFiles): TaskRecord {
  return { ...files.control, ...files.runtime, ...files.spec };
}

function pick(rec: TaskRecord, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = (rec as Record<string, unknown>)[k];
  return out;
}

/** Task ids look like `bash-1a2b3c4d` or `agent-1a2b3c4d`. */
export const TASK_ID_PATTERN: RegExp = /^[a-z]+-[0-9a-z]{8}$/;

/** A new task id of the given kind: `<kind>-<8 hex>`. */
export function newTaskId(kind = "bash"): string {
  return `${kind}-${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

/** Current time in Unix seconds. */
export function nowSeconds(): number {
  return Date.now() / 1000;
}

/** What differs between new task records; everything else starts empty. */
export interface NewTaskFields {
  /** Task kind (`bash`, `agent`, …); also the id prefix. */
  kind: string;
  /** Session the task belongs to. */
  sessionId: string;
  /** What the task is for. */
  description: string;
  /** Initial status: `starting` until a process is spawned, or `running`. */
  status: "starting" | "running";
  /** Shell command (`bash` tasks). */
  command?: string | null;
  /** Working directory (`bash` tasks). */
  cwd?: string | null;
  /** Timeout in seconds. */
  timeoutS?: number | null;
  /** Tool call that started the task. */
  toolCallId?: string | null;
  /** Kind-specific facts. */
  payload?: Record<string, unknown> | null;
}

/** A fresh record for a new task (a new id, created now; started now when `running`). */
export function newTaskRecord(fields: NewTaskFields): TaskRecord {
  const now = nowSeconds();
  return {
    version: 1,
    id: newTaskId(fields.kind),
    kind: fields.kind,
    session_id: fields.sessionId,
    description: fields.description,
    tool_call_id: fields.toolCallId ?? "",
    owner_role: "root",
    created_at: now,
    command: fields.command ?? null,
    shell_name: null,
    shell_path: null,
    cwd: fields.cwd ?? null,
    timeout_s: fields.timeoutS ?? null,
    kind_payload: fields.payload ?? null,
    status: fields.status,
    worker_pid: null,
    child_pid: null,
    child_pgid: null,
    started_at: fields.status === "running" ? now : null,
    heartbeat_at: fields.status === "running" ? now : null,
    updated_at: now,
    finished_at: null,
    exit_code: null,
    interrupted: false,
    timed_out: false,
    failure_reason: null,
    kill_requested_at: null,
    kill_reason: null,
    force: false,
  };
}
