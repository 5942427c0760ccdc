/**
 * `/task`: browse the session's background tasks — a list with status, then a task's details
 * and output tail, and stopping it. Also `/task <id>` and `/task stop <id>` directly.
 *
 * @module
 */
import { tailText } from "../../../background/notifications.ts";
import type { BackgroundTaskManager } from "../../../background/task_manager.ts";
import { isTerminalStatus, type TaskRecord } from "../../../background/task_record.ts";
import type { ShellContext } from "../shell_context.ts";
import { style } from "../theme.ts";
import { select } from "../widgets.ts";
import type { ShellCommand } from "./command.ts";

/** Lines of output shown for a task. */
const TAIL_LINES = 20;
/** Characters of output shown for a task. */
const TAIL_CHARS = 4000;

function statusMark(t: TaskRecord): string {
  switch (t.status) {
    case "completed":
      return "✓";
    case "failed":
    case "lost":
      return "✗";
    case "killed":
      return "■";
    default:
      return "▶";
  }
}

function row(t: TaskRecord): string {
  const code = t.exit_code !== null ? ` (exit ${t.exit_code})` : "";
  return `${statusMark(t)} ${t.id}  ${t.status}${code}  ${t.description}`;
}

/** A task's details and output tail. */
export async function taskDetails(tasks: BackgroundTaskManager, t: TaskRecord): Promise<string> {
  const lines = [style.bold(row(t)), `  kind: ${t.kind}`];
  if (t.command) lines.push(`  command: ${t.command}`);
  if (t.failure_reason) lines.push(`  reason: ${t.failure_reason}`);
  let tail = "";
  try {
    tail = tailText(
      (await tasks.store.readTail(t.id, TAIL_CHARS * 4)).text,
      TAIL_LINES,
      TAIL_CHARS,
    );
  } catch {
    tail = "";
  }
  lines.push(`  output (last ${TAIL_LINES} lines):`);
  lines.push(tail ? tail.split("\n").map((l) => `  │ ${l}`).join("\n") : "  │ [no output]");
  return lines.join("\n");
}

async function stopTask(ctx: ShellContext, tasks: BackgroundTaskManager, id: string) {
  const t = await tasks.get(id);
  if (!t) {
    ctx.print(`No background task ${id} in this session. /task lists them.`);
    return;
  }
  if (isTerminalStatus(t.status)) {
    ctx.print(`Task ${id} has already finished (${t.status}).`);
    return;
  }
  const stopped = await tasks.stop(id, "Stopped by the user");
  ctx.print(`Stopped task ${id} (${stopped.status}).`);
}

/** `/task`. */
export const taskCommand: ShellCommand = {
  name: "task",
  aliases: ["tasks"],
  description: "Browse background tasks: status, output, stop (/task [id] | /task stop <id>)",
  async run(ctx, args) {
    const tasks = ctx.app.tasks;
    if (!tasks) {
      ctx.print("Background tasks are not available in this session.");
      return;
    }
    const [verb, arg] = args.trim().split(/\s+/, 2);
    if (verb === "stop") {
      if (!arg) ctx.print("Usage: /task stop <task id>");
      else await stopTask(ctx, tasks, arg);
      return;
    }
    if (verb) {
      const t = await tasks.get(verb);
      ctx.print(t ? await taskDetails(tasks, t) : `No background task ${verb} in this session.`);
      return;
    }
    const all = await tasks.list({ activeOnly: false, limit: 50 });
    if (all.length === 0) {
      ctx.print("No background tasks in this session.");
      return;
    }
    const picked = await select(ctx.term, {
      title: [style.bold("Background tasks"), style.dim("Enter: details · Esc: close")],
      options: all.map((t) => ({ label: row(t) })),
    });
    if (picked === null) return;
    const chosen = (await tasks.get(all[picked[0]].id)) ?? all[picked[0]];
    ctx.print(await taskDetails(tasks, chosen));
    if (isTerminalStatus(chosen.status)) return;
    const action = await select(ctx.term, {
      title: [style.bold(`Task ${chosen.id} is ${chosen.status}`)],
      options: [{ label: "Stop it" }, { label: "Leave it running" }],
      initial: 1,
    });
    if (action?.[0] === 0) await stopTask(ctx, tasks, chosen.id);
  },
};
