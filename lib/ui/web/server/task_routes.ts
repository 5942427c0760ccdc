/**
 * The background tasks of a session for the page's tasks panel (Kimi-TS §B3 "tasks
 * (list/read/:cancel)"): `GET /api/sessions/{id}/tasks` lists them — Shell commands run in the
 * background and background agents — with status, command or description, times and output
 * tail; `POST /api/sessions/{id}/tasks/{task_id}/stop` stops a running one, as the shell's
 * `/task stop` does. The wire protocol has no call for either, so they are REST routes; the
 * page learns that something changed from the wire events it already gets.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import * as z from "zod";
import { tailText } from "../../../background/notifications.ts";
import { backgroundSettings } from "../../../background/settings.ts";
import { BackgroundTaskManager } from "../../../background/task_manager.ts";
import {
  isTerminalStatus,
  TASK_ID_PATTERN,
  type TaskRecord,
} from "../../../background/task_record.ts";
import type { Session } from "../../../session/session.ts";
import { HttpError, validate } from "./http_errors.ts";
import type { RouteDoc } from "./openapi.ts";
import type { WebContext } from "./web_context.ts";

/** Lines of output shown per task. */
export const TASK_TAIL_LINES = 12;
/** Characters of output shown per task. */
export const TASK_TAIL_CHARS = 2000;
/** Most tasks listed. */
export const MAX_LISTED_TASKS = 100;

/** A task id in a path. */
export const TaskIdSchema = z.string().regex(TASK_ID_PATTERN).meta({
  description: "Background task id (`bash-1a2b3c4d`, `agent-…`)",
});

/** Query of the task list. */
export const ListTasksQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_LISTED_TASKS).optional(),
});

/** One background task as the page shows it. */
export const TaskViewSchema = z.object({
  task_id: z.string(),
  kind: z.string(),
  status: z.string(),
  description: z.string(),
  command: z.string().nullable(),
  subagent_type: z.string().nullable(),
  created_at: z.number().meta({ description: "Unix seconds" }),
  started_at: z.number().nullable(),
  finished_at: z.number().nullable(),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  failure_reason: z.string().nullable(),
  output_tail: z.string(),
  output_bytes: z.number().int(),
  running: z.boolean(),
}).meta({ id: "BackgroundTask" });
/** One background task as the page shows it. */
export type TaskView = z.infer<typeof TaskViewSchema>;

/** The task list. */
export const TaskListSchema = z.object({
  items: z.array(TaskViewSchema),
  running: z.number().int(),
});

/** What the routes need from the application that mounts them. */
export interface TaskRoutesOptions {
  /** The server's shared state. */
  ctx: WebContext;
  /** Register a route in the API document. */
  doc(d: RouteDoc): void;
  /** The session of the request's `:id` (404 when unknown). */
  findSession(c: Context): Promise<Session>;
}

/** The view of one task record with its output tail. */
export async function taskView(
  tasks: BackgroundTaskManager,
  rec: TaskRecord,
): Promise<TaskView> {
  let tail = { text: "", sizeBytes: 0 };
  try {
    tail = await tasks.store.readTail(rec.id, TASK_TAIL_CHARS * 4);
  } catch {
    // unreadable output: shown as none
  }
  const p = rec.kind_payload ?? {};
  return {
    task_id: rec.id,
    kind: rec.kind,
    status: rec.status,
    description: rec.description,
    command: rec.command,
    subagent_type: typeof p.subagent_type === "string" ? p.subagent_type : null,
    created_at: rec.created_at,
    started_at: rec.started_at,
    finished_at: rec.finished_at,
    exit_code: rec.exit_code,
    timed_out: rec.timed_out,
    failure_reason: rec.failure_reason,
    output_tail: tailText(tail.text, TASK_TAIL_LINES, TASK_TAIL_CHARS),
    output_bytes: tail.sizeBytes,
    running: !isTerminalStatus(rec.status),
  };
}

/** Mount the task routes on `app`. */
// deno-lint-ignore no-explicit-any
export function mountTaskRoutes(app: Hono<any>, opts: TaskRoutesOptions): void {
  const { ctx, doc, findSession } = opts;
  const managerOf = (s: Session): BackgroundTaskManager =>
    ctx.registry.host(s).backgroundTasks(() =>
      new BackgroundTaskManager(s.dir, backgroundSettings(ctx.config.current().background))
    );

  doc({
    method: "get",
    path: "/api/sessions/{id}/tasks",
    summary: "The session's background tasks, newest first, with their output tails",
    query: ListTasksQuerySchema,
    response: TaskListSchema,
    errors: [404, 422],
  });
  app.get("/api/sessions/:id/tasks", async (c) => {
    const s = await findSession(c);
    const q = validate(ListTasksQuerySchema, c.req.query(), "query");
    const tasks = managerOf(s);
    const records = await tasks.list({ activeOnly: false, limit: q.limit ?? 50 });
    const items = await Promise.all(records.map((r) => taskView(tasks, r)));
    return c.json({ items, running: items.filter((t) => t.running).length });
  });

  doc({
    method: "post",
    path: "/api/sessions/{id}/tasks/{task_id}/stop",
    summary: "Stop a running background task (its whole process group) and wait for its end",
    response: TaskViewSchema,
    errors: [404, 409, 422],
  });
  app.post("/api/sessions/:id/tasks/:task_id/stop", async (c) => {
    const s = await findSession(c);
    const taskId = validate(TaskIdSchema, c.req.param("task_id"), "path");
    const tasks = managerOf(s);
    const rec = await tasks.get(taskId);
    if (!rec) {
      throw new HttpError(404, `No background task ${taskId} in this session; list them again.`);
    }
    if (isTerminalStatus(rec.status)) {
      throw new HttpError(409, `Task ${taskId} has already finished (${rec.status}).`);
    }
    const stopped = await tasks.stop(taskId, "Stopped by the user");
    return c.json(await taskView(tasks, stopped));
  });
}
