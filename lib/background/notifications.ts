/**
 * Telling the root agent that background tasks finished: a queue filled from
 * {@link BackgroundTaskManager.onTerminal} and drained at the start of each root step, each
 * finished task becoming one `<notification ...>` user message (reference §6.2 step 1).
 *
 * @module
 */
import type { BackgroundSettings } from "../tooling/background_settings.ts";
import type { BackgroundTaskManager } from "./task_manager.ts";
import type { TaskRecord } from "./task_record.ts";
import type { EventPayload } from "../wire/messages.ts";

/** Most notifications delivered at the start of one step. */
export const MAX_NOTIFICATIONS_PER_STEP = 4;

/** Title and severity of a finished task's notification. */
export function notificationHeadline(task: TaskRecord): { title: string; severity: string } {
  const reason = task.timed_out ? "timed_out" : task.status;
  const d = task.description;
  switch (reason) {
    case "completed":
      return { title: `Background task completed: ${d}`, severity: "success" };
    case "timed_out":
      return { title: `Background task timed out: ${d}`, severity: "error" };
    case "failed":
      return { title: `Background task failed: ${d}`, severity: "error" };
    case "killed":
      return { title: `Background task stopped: ${d}`, severity: "warning" };
    case "lost":
      return { title: `Background task lost: ${d}`, severity: "warning" };
    default:
      return { title: `Background task updated: ${d}`, severity: "info" };
  }
}

/** The last `lines` lines of `text`, at most `chars` characters (the end kept). */
export function tailText(text: string, lines: number, chars: number): string {
  const trimmed = text.replace(/\n+$/, "");
  if (!trimmed) return "";
  let out = trimmed.split("\n").slice(-Math.max(1, lines)).join("\n");
  if (out.length > chars) out = out.slice(out.length - chars);
  return out;
}

/** The `<notification>` text of a finished task; `tail` is its output tail ("" for none). */
export function formatTaskNotification(
  task: TaskRecord,
  opts: { id: string; tail: string },
): string {
  const reason = task.timed_out ? "timed_out" : task.status;
  const { title, severity } = notificationHeadline(task);
  const body = [
    `Task ID: ${task.id}`,
    `Status: ${task.status}`,
    `Description: ${task.description}`,
  ];
  if (reason !== task.status) body.push(`Terminal reason: ${reason}`);
  if (task.exit_code !== null) body.push(`Exit code: ${task.exit_code}`);
  if (task.failure_reason) body.push(`Failure reason: ${task.failure_reason}`);
  const p = task.kind_payload ?? {};
  const detail = [`Task kind: ${task.kind}`];
  if (typeof p.agent_id === "string") detail.push(`Agent ID: ${p.agent_id}`);
  if (typeof p.subagent_type === "string") detail.push(`Subagent type: ${p.subagent_type}`);
  detail.push("Output tail:", opts.tail || "[no output]");
  return [
    `<notification id="${opts.id}" category="task" type="task.${reason}" ` +
    `source_kind="background_task" source_id="${task.id}">`,
    `Title: ${title}`,
    `Severity: ${severity}`,
    ...body,
    "<task-notification>",
    ...detail,
    "</task-notification>",
    "</notification>",
  ].join("\n");
}

/**
 * The notification id of a finished task: the same for the wire event and the model's
 * `<notification>` message, so clients can match them. Derived from the task's id and end
 * time (FNV-1a, `n` + 8 hex digits), so no table of issued ids is kept.
 */
export function notificationIdFor(task: TaskRecord): string {
  const key = `${task.id}:${task.finished_at ?? ""}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `n${h.toString(16).padStart(8, "0")}`;
}

/** Finished background tasks waiting to be told to the root agent. */
export class TaskNotificationQueue {
  readonly #manager: BackgroundTaskManager;
  readonly #settings: () => BackgroundSettings;
  readonly #pending: TaskRecord[] = [];
  readonly #unsubscribe: () => void;

  /** Start collecting the manager's finished tasks. */
  constructor(manager: BackgroundTaskManager, settings?: () => BackgroundSettings) {
    this.#manager = manager;
    this.#settings = settings ?? (() => manager.settings);
    this.#unsubscribe = manager.onTerminal((task) => this.#pending.push(task));
  }

  /** Number of tasks not yet delivered. */
  get size(): number {
    return this.#pending.length;
  }

  /** Take up to `max` pending notifications (oldest first) as message texts. */
  async drain(max: number = MAX_NOTIFICATIONS_PER_STEP): Promise<string[]> {
    const batch = this.#pending.splice(0, Math.max(0, max));
    const s = this.#settings();
    const out: string[] = [];
    for (const task of batch) {
      let tail = "";
      try {
        const read = await this.#manager.store.readTail(task.id, s.notificationTailChars * 4);
        tail = tailText(read.text, s.notificationTailLines, s.notificationTailChars);
      } catch {
        tail = "";
      }
      out.push(formatTaskNotification(task, { id: notificationIdFor(task), tail }));
    }
    return out;
  }

  /** Stop collecting. */
  close(): void {
    this.#unsubscribe();
  }
}

/**
 * The wire `Notification` event of a finished task (reference §4.10): category `task`, type
 * `task.<reason>`, the headline as title and the output tail in the body.
 */
export function taskNotificationEvent(
  task: TaskRecord,
  opts: { id: string; tail: string; now?: number },
): EventPayload<"Notification"> {
  const reason = task.timed_out ? "timed_out" : task.status;
  const { title, severity } = notificationHeadline(task);
  const body = [`Task ID: ${task.id}`, `Status: ${task.status}`];
  if (task.exit_code !== null) body.push(`Exit code: ${task.exit_code}`);
  if (task.failure_reason) body.push(`Failure reason: ${task.failure_reason}`);
  if (opts.tail) body.push("Output tail:", opts.tail);
  const p = task.kind_payload ?? {};
  return {
    id: opts.id,
    category: "task",
    type: `task.${reason}`,
    source_kind: "background_task",
    source_id: task.id,
    title,
    body: body.join("\n"),
    severity,
    created_at: (opts.now ?? Date.now()) / 1000,
    payload: {
      task_id: task.id,
      kind: task.kind,
      status: task.status,
      description: task.description,
      exit_code: task.exit_code,
      ...(typeof p.agent_id === "string" ? { agent_id: p.agent_id } : {}),
      ...(typeof p.subagent_type === "string" ? { subagent_type: p.subagent_type } : {}),
    },
  };
}

/**
 * Publishes a wire `Notification` for every task of `manager` that finishes; resolves the
 * output tail first. Returns the unsubscribe function.
 */
export function publishTaskNotifications(
  manager: BackgroundTaskManager,
  publish: (payload: EventPayload<"Notification">) => void,
): () => void {
  return manager.onTerminal((task) => {
    void (async () => {
      const s = manager.settings;
      let tail = "";
      try {
        const read = await manager.store.readTail(task.id, s.notificationTailChars * 4);
        tail = tailText(read.text, s.notificationTailLines, s.notificationTailChars);
      } catch {
        tail = "";
      }
      publish(taskNotificationEvent(task, { id: notificationIdFor(task), tail }));
    })();
  });
}
