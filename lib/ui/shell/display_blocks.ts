/**
 * Text of display blocks for the terminal: coloured unified diffs, todo checklists, shell
 * commands and briefs.
 *
 * @module
 */
import { structuredPatch } from "diff";
import type { DiffBlock, DisplayBlock, TodoItem } from "../../wire/display.ts";
import { style } from "./theme.ts";

const MAX_DIFF_LINES = 40;

/**
 * A diff block as coloured lines with line numbers (long diffs are cut); `context` unchanged
 * lines around each change (0: only the changed lines).
 */
export function formatDiff(
  block: DiffBlock,
  context = 2,
  maxLines: number = MAX_DIFF_LINES,
): string[] {
  const patch = structuredPatch(block.path, block.path, block.old_text, block.new_text, "", "", {
    context,
  });
  const out: string[] = [style.dim(`  ${block.path}`)];
  let count = 0;
  for (const hunk of patch.hunks) {
    let oldNo = hunk.oldStart + block.old_start - 1;
    let newNo = hunk.newStart + block.new_start - 1;
    if (out.length > 1) out.push(style.dim("  ⋮"));
    for (const line of hunk.lines) {
      if (line.startsWith("\\")) continue;
      if (++count > maxLines) {
        out.push(style.dim(`  … (diff truncated)`));
        return out;
      }
      const body = line.slice(1);
      if (line[0] === "+") {
        out.push(style.added(`  ${pad(newNo++)} + ${body}`));
      } else if (line[0] === "-") {
        out.push(style.removed(`  ${pad(oldNo++)} - ${body}`));
      } else {
        out.push(style.dim(`  ${pad(newNo)}   `) + body);
        oldNo++;
        newNo++;
      }
    }
  }
  if (block.is_summary) out.push(style.dim("  (summary)"));
  return out;
}

function pad(n: number): string {
  return String(n).padStart(4, " ");
}

/** A todo list as a checklist. */
export function formatTodos(items: TodoItem[]): string[] {
  return items.map((t) => {
    if (t.status === "done") return `  ${style.ok("✔")} ${style.dim(t.title)}`;
    if (t.status === "in_progress") return `  ${style.accent("◐")} ${style.bold(t.title)}`;
    return `  ☐ ${t.title}`;
  });
}

/** Lines for any display block except briefs (shown inline by the caller). */
export function formatBlock(
  block: DisplayBlock,
  diffContext = 2,
  opts: { full?: boolean } = {},
): string[] {
  switch (block.type) {
    case "diff":
      return formatDiff(block as DiffBlock, diffContext, opts.full ? Infinity : MAX_DIFF_LINES);
    case "todo":
      return formatTodos((block as { items: TodoItem[] }).items);
    case "shell": {
      const b = block as { command: string };
      return b.command.split("\n").map((l, i) => `  ${i === 0 ? "$" : " "} ${style.accent(l)}`);
    }
    case "background_task": {
      const b = block as { task_id: string; status: string; description: string };
      return [style.dim(`  task ${b.task_id} (${b.status}): ${b.description}`)];
    }
    case "brief":
      return [];
    default:
      return [];
  }
}

/** The brief text of a block list (first brief block), or "". */
export function briefOf(blocks: DisplayBlock[]): string {
  const b = blocks.find((x) => x.type === "brief") as { text: string } | undefined;
  return b?.text ?? "";
}
