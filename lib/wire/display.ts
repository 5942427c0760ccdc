/**
 * Display blocks: what a UI shows for a tool call or an approval request.
 *
 * @module
 */
import * as z from "zod";

/** A short one-line summary. */
export const BriefBlockSchema = z.object({ type: z.literal("brief"), text: z.string() });
/** A file change. */
export const DiffBlockSchema = z.object({
  type: z.literal("diff"),
  path: z.string(),
  old_text: z.string(),
  new_text: z.string(),
  old_start: z.number().int().default(1),
  new_start: z.number().int().default(1),
  is_summary: z.boolean().default(false),
});
/** Status of a todo item. */
export const TodoStatusSchema = z.enum(["pending", "in_progress", "done"]);
/** A todo item. */
export const TodoItemSchema = z.object({ title: z.string(), status: TodoStatusSchema });
/** A todo list. */
export const TodoBlockSchema = z.object({
  type: z.literal("todo"),
  items: z.array(TodoItemSchema),
});
/** A shell command. */
export const ShellBlockSchema = z.object({
  type: z.literal("shell"),
  language: z.string(),
  command: z.string(),
});
/** A background task. */
export const BackgroundTaskBlockSchema = z.object({
  type: z.literal("background_task"),
  task_id: z.string(),
  kind: z.string(),
  status: z.string(),
  description: z.string(),
});
/** A block of a type this version does not know. */
export const UnknownBlockSchema = z.object({
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/** Any display block. */
export const DisplayBlockSchema = z.union([
  BriefBlockSchema,
  DiffBlockSchema,
  TodoBlockSchema,
  ShellBlockSchema,
  BackgroundTaskBlockSchema,
  UnknownBlockSchema,
]);
/** Any display block. */
export type DisplayBlock = z.infer<typeof DisplayBlockSchema>;
/** A brief block. */
export type BriefBlock = z.infer<typeof BriefBlockSchema>;
/** A diff block. */
export type DiffBlock = z.infer<typeof DiffBlockSchema>;
/** A todo item. */
export type TodoItem = z.infer<typeof TodoItemSchema>;
/** A todo block. */
export type TodoBlock = z.infer<typeof TodoBlockSchema>;
/** A shell block. */
export type ShellBlock = z.infer<typeof ShellBlockSchema>;

/** Build a brief block. */
export function brief(text: string): BriefBlock {
  return { type: "brief", text };
}
