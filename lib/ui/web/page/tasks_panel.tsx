/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The background tasks of the open session: a header pill with how many run, and a panel that
 * lists them (Shell commands run in the background, background agents) with status, command
 * or description, elapsed time and output tail, with Stop for a running one. The list comes
 * from `GET /api/sessions/{id}/tasks`; it is read again when the session's stream moves (a
 * tool result that started a task, the notification of one that ended) and every two seconds
 * while one runs and the tab is visible (its output grows without wire events).
 *
 * @module
 */
import type { JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, AuthError } from "./api.ts";
import {
  type BackgroundTask,
  durationLabel,
  taskElapsedSeconds,
  type TaskList,
  taskStatusLabel,
} from "./task_list.ts";

/** How often the list is read again while a task runs. */
const RUNNING_REFRESH_MS = 2000;
/** Least time between two reads caused by stream activity. */
const STREAM_REFRESH_MS = 1000;

/** The tasks of a session, kept fresh; `reload` reads them now. */
export interface BackgroundTasksState {
  /** The list (null until first read, or when no session is open). */
  list: TaskList | null;
  /** Why the last read failed, if it did. */
  error: string | null;
  /** Read the list now. */
  reload(): void;
}

/** Follow the background tasks of `sessionId`; `version` moves with its stream. */
export function useBackgroundTasks(
  sessionId: string | null,
  version: number,
  onAuthFailed: () => void,
): BackgroundTasksState {
  const [list, setList] = useState<TaskList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const current = useRef(sessionId);
  current.current = sessionId;
  const pending = useRef<ReturnType<typeof setTimeout> | null>(null);

  const reload = useCallback(() => {
    const id = current.current;
    if (!id) return;
    api<TaskList>("GET", `/api/sessions/${id}/tasks`).then((l) => {
      if (current.current !== id) return; // the user moved on
      setList(l);
      setError(null);
    }, (e: Error) => {
      if (current.current !== id) return;
      if (e instanceof AuthError) onAuthFailed();
      else setError(e.message);
    });
  }, []);

  useEffect(() => {
    setList(null);
    setError(null);
    reload();
  }, [sessionId]);

  // Stream activity: read again, at most once a second.
  useEffect(() => {
    if (!sessionId || pending.current) return;
    pending.current = setTimeout(() => {
      pending.current = null;
      reload();
    }, STREAM_REFRESH_MS);
  }, [version]);
  useEffect(() => () => {
    if (pending.current) clearTimeout(pending.current);
  }, []);

  // A running task's output grows without wire events: read again while the tab is visible,
  // and at once when it becomes visible.
  const running = list?.running ?? 0;
  useEffect(() => {
    if (!sessionId || running === 0) return;
    const timer = setInterval(() => {
      if (!document.hidden) reload();
    }, RUNNING_REFRESH_MS);
    const onVisible = () => {
      if (!document.hidden) reload();
    };
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [sessionId, running]);

  return { list, error, reload };
}

/** The header pill that opens the panel: "Tasks", with how many run. */
export function TasksButton(
  { state, pressed, onToggle }: {
    state: BackgroundTasksState;
    pressed: boolean;
    onToggle: () => void;
  },
): JSX.Element {
  const running = state.list?.running ?? 0;
  return (
    <button
      type="button"
      class={`tasks-pill ${running > 0 ? "active" : ""}`}
      aria-pressed={pressed}
      data-panel="tasks"
      title="Background tasks of this session"
      onClick={onToggle}
    >
      Tasks{running > 0 && <span class="pill-count">{running} running</span>}
    </button>
  );
}

function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now() / 1000);
  useEffect(() => {
    setNow(Date.now() / 1000);
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now() / 1000), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

function TaskItem(
  { task, now, onStop, stopping }: {
    task: BackgroundTask;
    now: number;
    onStop: () => void;
    stopping: boolean;
  },
): JSX.Element {
  const what = task.kind === "bash"
    ? "Shell"
    : task.subagent_type
    ? `Agent · ${task.subagent_type}`
    : "Agent";
  return (
    <li class={`task ${task.running ? "running" : task.status}`} data-task-id={task.task_id}>
      <div class="task-head">
        <span class={`task-status ${task.status}`}>{taskStatusLabel(task)}</span>
        <span class="task-kind">{what}</span>
        <span class="task-elapsed" title="Elapsed time">
          {durationLabel(taskElapsedSeconds(task, now))}
        </span>
      </div>
      <div class="task-desc">{task.description}</div>
      {task.command && <code class="task-command">{task.command}</code>}
      {task.failure_reason && <p class="task-reason">{task.failure_reason}</p>}
      {task.output_tail
        ? (
          <pre class="task-tail" aria-label={`Output of ${task.description}`}>
            {task.output_tail}
          </pre>
        )
        : <p class="muted">No output yet.</p>}
      {task.running && (
        <button
          type="button"
          class="danger"
          disabled={stopping}
          aria-label={`Stop ${task.description}`}
          onClick={onStop}
        >
          {stopping ? "Stopping…" : "Stop"}
        </button>
      )}
    </li>
  );
}

/** The panel: the session's background tasks, newest first. */
export function TasksPanel(
  { sessionId, state }: { sessionId: string; state: BackgroundTasksState },
): JSX.Element {
  const [stopping, setStopping] = useState<Set<string>>(new Set());
  const [stopError, setStopError] = useState<string | null>(null);
  const items = state.list?.items ?? [];
  const now = useNow(items.some((t) => t.running));

  const stop = async (t: BackgroundTask) => {
    setStopError(null);
    setStopping((s) => new Set(s).add(t.task_id));
    try {
      await api("POST", `/api/sessions/${sessionId}/tasks/${t.task_id}/stop`);
    } catch (e) {
      setStopError((e as Error).message);
    } finally {
      setStopping((s) => {
        const next = new Set(s);
        next.delete(t.task_id);
        return next;
      });
      state.reload();
    }
  };

  return (
    <div class="tasks-panel">
      {stopError && <p class="error" role="alert">{stopError}</p>}
      {state.error && <p class="error" role="alert">{state.error}</p>}
      {state.list === null && !state.error && <p class="muted">Loading…</p>}
      {state.list !== null && items.length === 0 && (
        <p class="muted">
          No background tasks in this session. The agent starts one with a Shell command run in the
          background, or a background agent.
        </p>
      )}
      {items.length > 0 && (
        <ul class="task-list" aria-label="Background tasks">
          {items.map((t) => (
            <TaskItem
              key={t.task_id}
              task={t}
              now={now}
              stopping={stopping.has(t.task_id)}
              onStop={() => stop(t)}
            />
          ))}
        </ul>
      )}
    </div>
  );
}
