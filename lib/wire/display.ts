/**
 * Display blocks: what a UI shows for a tool call or an approval request.
 *
 * The block schemas validate wire input and recorded files; they are built on first use (see
 * `lib/lazy_record.ts`), so a run that only produces blocks never builds them.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lazy_record.ts";

/** Status of a todo item. */
export const TodoStatusSchema = z.enum(["pending", "in_progress", "done"]);

/** The display block schemas, by block, and `block` for any display block. */
export const displaySchemas = lazyValue(() => {
  /** A short one-line summary. */
  const brief = z.object({ type: z.literal("brief"), text: z.string() });
  /** A file change. */
  const diff = z.object({
    type: z.literal("diff"),
    path: z.string(),
    old_text: z.string(),
    new_text: z.string(),
    old_start: z.number().int().default(1),
    new_start: z.number().int().default(1),
    is_summary: z.boolean().default(false),
  });
  /** A todo item. */
  const todoItem = z.object({ title: z.string(), status: TodoStatusSchema });
  /** A todo list. */
  const todo = z.object({ type: z.literal("todo"), items: z.array(todoItem) });
  /** A shell command. */
  const shell = z.object({
    type: z.literal("shell"),
    language: z.string(),
    command: z.string(),
  });
  /** A background task. */
  const backgroundTask = z.object({
    type: z.literal("background_task"),
    task_id: z.string(),
    kind: z.string(),
    status: z.string(),
    description: z.string(),
  });
  /** A block of a type this version does not know. */
  const unknown = z.object({ type: z.string(), data: z.record(z.string(), z.unknown()) });
  const block = z.union([brief, diff, todo, shell, backgroundTask, unknown]);
  return { brief, diff, todoItem, todo, shell, backgroundTask, unknown, block };
});

type DisplaySchemas = ReturnType<typeof displaySchemas>;

/** Any display block. */
export type DisplayBlock = z.infer<DisplaySchemas["block"]>;
/** A brief block. */
export type BriefBlock = z.infer<DisplaySchemas["brief"]>;
/** A diff block. */
export type DiffBlock = z.infer<DisplaySchemas["diff"]>;
/** A todo item. */
export type TodoItem = z.infer<DisplaySchemas["todoItem"]>;
/** A todo block. */
export type TodoBlock = z.infer<DisplaySchemas["todo"]>;
/** A shell block. */
export type ShellBlock = z.infer<DisplaySchemas["shell"]>;
/** A background task block. */
export type BackgroundTaskBlock = z.infer<DisplaySchemas["backgroundTask"]>;

/** Build a brief block. */
export function brief(text: string): BriefBlock {
  return { type: "brief", text };
}
