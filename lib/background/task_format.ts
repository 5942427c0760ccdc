/**
 * The key/value text the model reads about background tasks (TaskList, TaskOutput, TaskStop
 * and the background Shell result).
 *
 * @module
 */
import type { BackgroundTaskBlock } from "../wire/display.ts";
import type { TaskOutputSnapshot } from "./task_manager.ts";
import type { TaskRecord } from "./task_record.ts";

/** Lines of the ReadFile page suggested for the full log. */
export const TASK_OUTPUT_READ_HINT_LINES = 300;

/** One task as `key: value` lines. */
export function formatTask(task: TaskRecord, opts: { includeCommand?: boolean } = {}): string {
  const lines = [
    `task_id: ${task.id}`,
    `kind: ${task.kind}`,
    `status: ${task.status}`,
    `description: ${task.description}`,
  ];
  if (opts.includeCommand && task.command) lines.push(`command: ${task.command}`);
  lines.push(...payloadLines(task));
  if (task.exit_code !== null) lines.push(`exit_code: ${task.exit_code}`);
  if (task.failure_reason) lines.push(`reason: ${task.failure_reason}`);
  return lines.join("\n");
}

/** `agent_id`/`subagent_type` lines of an agent task. */
function payloadLines(task: TaskRecord): string[] {
  const p = task.kind_payload ?? {};
  const out: string[] = [];
  if (typeof p.agent_id === "string") out.push(`agent_id: ${p.agent_id}`);
  if (typeof p.subagent_type === "string") out.push(`subagent_type: ${p.subagent_type}`);
  return out;
}

/** A list of tasks under an `active_background_tasks: N` / `background_tasks: N` header. */
export function formatTaskList(
  tasks: readonly TaskRecord[],
  opts: { activeOnly?: boolean; includeCommand?: boolean } = {},
): string {
  const header = (opts.activeOnly ?? true) ? "active_background_tasks" : "background_tasks";
  if (tasks.length === 0) return `${header}: 0\n[no tasks]`;
  const lines = [`${header}: ${tasks.length}`, ""];
  tasks.forEach((t, i) => {
    lines.push(`[${i + 1}]`, formatTask(t, { includeCommand: opts.includeCommand ?? true }), "");
  });
  return lines.join("\n").trimEnd();
}

/** The TaskOutput report: status fields, output file facts, then the tail after `[output]`. */
export function formatTaskOutput(snap: TaskOutputSnapshot): string {
  const t = snap.task;
  const lines = [
    `retrieval_status: ${snap.retrievalStatus}`,
    `task_id: ${t.id}`,
    `kind: ${t.kind}`,
    `status: ${t.status}`,
    `description: ${t.description}`,
  ];
  if (t.command) lines.push(`command: ${t.command}`);
  lines.push(...payloadLines(t));
  lines.push(
    `interrupted: ${t.interrupted}`,
    `timed_out: ${t.timed_out}`,
    `terminal_reason: ${t.timed_out ? "timed_out" : t.status}`,
  );
  if (t.exit_code !== null) lines.push(`exit_code: ${t.exit_code}`);
  if (t.failure_reason) lines.push(`reason: ${t.failure_reason}`);
  const hint = snap.outputAvailable
    ? `full_output_hint: Page through the whole log with ReadFile(path="${snap.outputPath}", ` +
      `line_offset=1, n_lines=${TASK_OUTPUT_READ_HINT_LINES}); raise line_offset for the next page.`
    : "full_output_hint: This task has no output file yet.";
  lines.push(
    "",
    `output_path: ${snap.outputPath}`,
    `output_size_bytes: ${snap.outputSizeBytes}`,
    `output_preview_bytes: ${snap.previewBytes}`,
    `output_truncated: ${snap.truncated}`,
    "",
    `full_output_available: ${snap.outputAvailable}`,
    "full_output_tool: ReadFile",
    hint,
  );
  let body = snap.previewText || "[no output available]";
  if (snap.truncated) body = `[Truncated. Full output: ${snap.outputPath}]\n\n${body}`;
  return [...lines, "", "[output]", body].join("\n");
}

/** The `background_task` display block of a task. */
export function taskDisplayBlock(task: TaskRecord): BackgroundTaskBlock {
  return {
    type: "background_task",
    task_id: task.id,
    kind: task.kind,
    status: task.status,
    description: task.description,
  };
}
