/**
 * The persisted state of one background task (`<sessionDir>/tasks/<id>/task.json`).
 *
 * @module
 */
import { z } from "zod";

/** Lifecycle states. `lost` marks a task whose process belonged to an earlier run. */
export const TaskStatusSchema = z.enum([
  "pending",
  "running",
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

/** Contents of `task.json`. Times are Unix seconds (fractional). */
export const TaskRecordSchema = z.object({
  version: z.literal(1).default(1),
  id: z.string(),
  kind: z.string().default("bash"),
  description: z.string(),
  command: z.string().nullable().default(null),
  cwd: z.string().nullable().default(null),
  shell_path: z.string().nullable().default(null),
  timeout_s: z.number().nullable().default(null),
  tool_call_id: z.string().nullable().default(null),
  status: TaskStatusSchema,
  pid: z.number().int().nullable().default(null),
  exit_code: z.number().int().nullable().default(null),
  interrupted: z.boolean().default(false),
  timed_out: z.boolean().default(false),
  failure_reason: z.string().nullable().default(null),
  kill_reason: z.string().nullable().default(null),
  created_at: z.number(),
  started_at: z.number().nullable().default(null),
  finished_at: z.number().nullable().default(null),
  updated_at: z.number(),
  /** Kind-specific facts, e.g. `agent_id`/`subagent_type` of an `agent` task. */
  kind_payload: z.record(z.string(), z.unknown()).nullable().default(null),
});
/** A task record. */
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

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
  /** What the task is for. */
  description: string;
  /** Initial status: `pending` until a process is spawned, or `running`. */
  status: "pending" | "running";
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
    description: fields.description,
    command: fields.command ?? null,
    cwd: fields.cwd ?? null,
    shell_path: null,
    timeout_s: fields.timeoutS ?? null,
    tool_call_id: fields.toolCallId ?? null,
    status: fields.status,
    pid: null,
    exit_code: null,
    interrupted: false,
    timed_out: false,
    failure_reason: null,
    kill_reason: null,
    created_at: now,
    started_at: fields.status === "running" ? now : null,
    finished_at: null,
    updated_at: now,
    kind_payload: fields.payload ?? null,
  };
}
