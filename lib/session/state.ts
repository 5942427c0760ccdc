/**
 * `state.json` of a session: approval settings, extra dirs, title, plan mode, archive flags, the
 * todo list and the goal (with its queue and undo log). A missing or corrupt file yields the defaults.
 *
 * @module
 */
import { join } from "node:path";
import * as z from "zod";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { GoalLogEntrySchema, GoalSchema } from "./goal_state.ts";

/** File name of the session state inside a session dir. */
export const STATE_FILE_NAME = "state.json";
const LEGACY_METADATA_FILE_NAME = "metadata.json";

/** Persisted approval settings. */
export const ApprovalStateSchema = z.object({
  yolo: z.boolean().default(false),
  afk: z.boolean().default(false),
  auto_approve_actions: z.array(z.string()).default([]).transform((a) => [...new Set(a)]),
  session_rules: z.array(z.object({ pattern: z.string(), checkpoint: z.number().int() }))
    .default([]),
});
/** Persisted approval settings. */
export type ApprovalState = z.infer<typeof ApprovalStateSchema>;

/** A todo item of the session's todo list. */
export const TodoItemStateSchema = z.object({
  title: z.string(),
  status: z.enum(["pending", "in_progress", "done"]),
});
/** A todo item. */
export type TodoItemState = z.infer<typeof TodoItemStateSchema>;

/** The session state document. */
export const SessionStateSchema = z.object({
  version: z.number().int().default(1),
  approval: ApprovalStateSchema.prefault({}),
  additional_dirs: z.array(z.string()).default([]),
  custom_title: z.string().nullable().default(null),
  title_generated: z.boolean().default(false),
  title_generate_attempts: z.number().int().default(0),
  plan_mode: z.boolean().default(false),
  plan_session_id: z.string().nullable().default(null),
  plan_slug: z.string().nullable().default(null),
  wire_mtime: z.number().nullable().default(null),
  archived: z.boolean().default(false),
  archived_at: z.number().nullable().default(null),
  auto_archive_exempt: z.boolean().default(false),
  todos: z.array(TodoItemStateSchema).default([]),
  goal: GoalSchema.nullable().default(null),
  goal_queue: z.array(z.string()).default([]),
  goal_log: z.array(GoalLogEntrySchema).default([]),
  /**
   * Created by a `--print` run (session pickers mark it). Not a reference field: written only
   * when true, so other sessions' state.json stays as the reference writes it.
   */
  print_run: z.boolean().optional(),
  /**
   * Pinned in `kimi web`'s session list. Not a reference field: written only when true, so
   * other sessions' state.json stays as the reference writes it.
   */
  pinned: z.boolean().optional(),
});
/** The session state. */
export type SessionState = z.infer<typeof SessionStateSchema>;

/** Fields other processes (title generation, archiving, pinning) may change behind a running session. */
const EXTERNAL_FIELDS = [
  "custom_title",
  "title_generated",
  "title_generate_attempts",
  "archived",
  "archived_at",
  "auto_archive_exempt",
  "pinned",
] as const;

/** A fresh default state. */
export function defaultState(): SessionState {
  return SessionStateSchema.parse({});
}

/** Path of `state.json` in a session dir. */
export function stateFilePath(sessionDir: string): string {
  return join(sessionDir, STATE_FILE_NAME);
}

/**
 * Load the state of a session dir. Missing, unreadable or invalid → defaults. A legacy
 * `metadata.json` in the dir is merged in once (then saved and removed).
 */
export async function loadState(sessionDir: string): Promise<SessionState> {
  const state = await readStateFile(sessionDir);
  await migrateLegacyMetadata(sessionDir, state);
  return state;
}

/** Options of {@linkcode saveState}. */
export interface SaveStateOptions {
  /**
   * Take the title and archive fields from the file on disk instead of from `state`, so a
   * concurrent change to them is not overwritten. Default `true`; pass `false` to write those
   * fields from `state` (e.g. when setting the title).
   */
  keepExternalFields?: boolean;
}

/**
 * Write the state atomically. By default the title and archive fields are first reloaded from
 * disk into `state` (mutating it), then the whole state is written.
 */
export async function saveState(
  sessionDir: string,
  state: SessionState,
  opts: SaveStateOptions = {},
): Promise<void> {
  if (opts.keepExternalFields ?? true) {
    const fresh = await readStateFileText(sessionDir);
    for (const key of EXTERNAL_FIELDS) {
      (state as Record<string, unknown>)[key] = fresh.state[key];
    }
    // Unchanged state is not rewritten (one synced write less per start-up).
    await writeStateFile(sessionDir, state, fresh.text);
    return;
  }
  await writeStateFile(sessionDir, state);
}

/**
 * Load the state from disk, let `update` change it and write it back (all fields, including
 * title and archive ones).
 */
export async function updateState(
  sessionDir: string,
  update: (state: SessionState) => void,
): Promise<SessionState> {
  const state = await loadState(sessionDir);
  update(state);
  await writeStateFile(sessionDir, state);
  return state;
}

async function readStateFile(sessionDir: string): Promise<SessionState> {
  return (await readStateFileText(sessionDir)).state;
}

/** The state on disk, and the file's text (`null` when it could not be read). */
async function readStateFileText(
  sessionDir: string,
): Promise<{ state: SessionState; text: string | null }> {
  let text: string;
  try {
    text = await Deno.readTextFile(stateFilePath(sessionDir));
  } catch {
    return { state: defaultState(), text: null };
  }
  try {
    const parsed = SessionStateSchema.safeParse(JSON.parse(text));
    return { state: parsed.success ? parsed.data : defaultState(), text };
  } catch {
    return { state: defaultState(), text };
  }
}

/** Write the state atomically, unless `onDisk` (the file's current text) already is it. */
async function writeStateFile(
  sessionDir: string,
  state: SessionState,
  onDisk: string | null = null,
): Promise<void> {
  const normalized = SessionStateSchema.parse(state);
  const text = JSON.stringify(normalized, null, 2);
  if (text === onDisk) return;
  await Deno.mkdir(sessionDir, { recursive: true });
  await atomicWriteText(stateFilePath(sessionDir), text);
}

async function migrateLegacyMetadata(sessionDir: string, state: SessionState): Promise<void> {
  const legacyPath = join(sessionDir, LEGACY_METADATA_FILE_NAME);
  let data: Record<string, unknown>;
  try {
    const parsed = JSON.parse(await Deno.readTextFile(legacyPath));
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return;
    data = parsed as Record<string, unknown>;
  } catch {
    return; // missing or unreadable: leave it for a later attempt
  }
  let changed = false;
  const title = data.title;
  if (state.custom_title === null && typeof title === "string" && title && title !== "Untitled") {
    state.custom_title = title;
    changed = true;
  }
  if (!state.title_generated && data.title_generated === true) {
    state.title_generated = true;
    changed = true;
  }
  const attempts = data.title_generate_attempts;
  if (
    state.title_generate_attempts === 0 && typeof attempts === "number" &&
    Number.isInteger(attempts) && attempts > 0
  ) {
    state.title_generate_attempts = attempts;
    changed = true;
  }
  if (!state.archived && data.archived === true) {
    state.archived = true;
    changed = true;
  }
  if (state.archived_at === null && typeof data.archived_at === "number") {
    state.archived_at = data.archived_at;
    changed = true;
  }
  if (!state.auto_archive_exempt && data.auto_archive_exempt === true) {
    state.auto_archive_exempt = true;
    changed = true;
  }
  if (state.wire_mtime === null && typeof data.wire_mtime === "number") {
    state.wire_mtime = data.wire_mtime;
    changed = true;
  }
  try {
    if (changed) await writeStateFile(sessionDir, state);
    await Deno.remove(legacyPath);
  } catch {
    // best effort; retried on the next load
  }
}
