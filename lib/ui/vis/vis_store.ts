/**
 * What `kimi vis` reads: every recorded session of the share dir (`sessions/<work-dir key>/<id>/`)
 * and the imported ones (`imported_sessions/<16 hex>/`), their wire records, context, state,
 * subagents, a summary per session, statistics over all of them, and ZIP export/import.
 * Read-only except import and deleting an imported session (reference Part C).
 *
 * Session addresses come from URLs, so each segment must be a plain name (no `/`, no `..`) and
 * the resolved directory must lie inside its root after symlinks are followed.
 *
 * @module
 */
import { join } from "node:path";
import { unzipSync, zipSync } from "fflate";
import { parseJsonLine, readJsonlLines } from "../../session/jsonl.ts";
import { loadMetadata, workDirKey } from "../../session/metadata.ts";
import { LOCK_FILE } from "../../session/lock.ts";

/** The work-dir hash segment of imported sessions. */
export const IMPORTED_HASH = "imported";
/** Largest ZIP accepted by import (reference: 200 MB). */
export const MAX_IMPORT_BYTES = 200 * 1024 * 1024;
/** Largest total size of an imported ZIP's files once unpacked (a bomb is refused unread). */
export const MAX_IMPORT_UNPACKED_BYTES = 1024 * 1024 * 1024;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** A session found on disk. */
export interface VisSessionRef {
  /** Work-dir hash segment, or {@link IMPORTED_HASH}. */
  hash: string;
  /** Session id (directory name). */
  id: string;
  /** Absolute directory. */
  dir: string;
  /** Whether it was imported. */
  imported: boolean;
}

/** A session as listed by `GET /api/vis/sessions`. */
export interface VisSessionInfo {
  /** Id. */
  session_id: string;
  /** Directory. */
  session_dir: string;
  /** Work dir when known from `kimi.json`. */
  work_dir: string | null;
  /** Work-dir hash segment. */
  work_dir_hash: string;
  /** Title (custom title, else first user text, else `Untitled`). */
  title: string;
  /** Last change, Unix seconds. */
  last_updated: number;
  /** Whether `wire.jsonl` exists. */
  has_wire: boolean;
  /** Whether `context.jsonl` exists. */
  has_context: boolean;
  /** Whether `state.json` exists. */
  has_state: boolean;
  /** Protocol metadata of `wire.jsonl` (its first line), if any. */
  metadata: Record<string, unknown> | null;
  /** Size of `wire.jsonl`. */
  wire_size: number;
  /** Size of `context.jsonl`. */
  context_size: number;
  /** Size of `state.json`. */
  state_size: number;
  /** Number of turns. */
  turns: number;
  /** Whether imported. */
  imported: boolean;
  /** Number of subagent instances. */
  subagent_count: number;
}

/** One wire record. */
export interface VisWireEvent {
  /** 0-based index among the records (metadata excluded). */
  index: number;
  /** Unix seconds. */
  timestamp: number;
  /** Message type. */
  type: string;
  /** Payload. */
  payload: unknown;
}

async function stat(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch {
    return null;
  }
}

async function isDir(path: string): Promise<boolean> {
  return (await stat(path))?.isDirectory ?? false;
}

async function listDirs(path: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(path)) {
      if (e.isDirectory && NAME.test(e.name)) out.push(e.name);
    }
  } catch {
    // Missing.
  }
  return out.sort();
}

/** Every session directory under the share dir, imported ones included. */
export async function findSessions(shareDir: string): Promise<VisSessionRef[]> {
  const refs: VisSessionRef[] = [];
  const root = join(shareDir, "sessions");
  for (const hash of await listDirs(root)) {
    for (const id of await listDirs(join(root, hash))) {
      refs.push({ hash, id, dir: join(root, hash, id), imported: false });
    }
  }
  const imported = join(shareDir, "imported_sessions");
  for (const id of await listDirs(imported)) {
    refs.push({ hash: IMPORTED_HASH, id, dir: join(imported, id), imported: true });
  }
  return refs;
}

/**
 * The session at `hash`/`id`, or null when the names are not plain or the directory is
 * missing or escapes its root (a planted symlink).
 */
export async function resolveSession(
  shareDir: string,
  hash: string,
  id: string,
): Promise<VisSessionRef | null> {
  if (!NAME.test(hash) || !NAME.test(id) || hash === ".." || id === "..") return null;
  const imported = hash === IMPORTED_HASH;
  const root = imported ? join(shareDir, "imported_sessions") : join(shareDir, "sessions", hash);
  const dir = join(root, id);
  if (!(await isDir(dir))) return null;
  try {
    const realRoot = await Deno.realPath(imported ? root : join(shareDir, "sessions"));
    const real = await Deno.realPath(dir);
    if (!real.startsWith(realRoot + "/")) return null;
  } catch {
    return null;
  }
  return { hash, id, dir, imported };
}

/** The records of a JSON-lines file (malformed lines skipped). */
async function readRecords(path: string): Promise<unknown[]> {
  return (await readRecordsCounted(path)).records;
}

/** The records of a JSON-lines file and how many of its lines were not valid JSON. */
async function readRecordsCounted(path: string): Promise<{ records: unknown[]; skipped: number }> {
  const records: unknown[] = [];
  let skipped = 0;
  try {
    for await (const line of readJsonlLines(path)) {
      const v = parseJsonLine(line);
      if (v !== undefined) records.push(v);
      else skipped++;
    }
  } catch {
    // Missing or unreadable: no records.
  }
  return { records, skipped };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The wire records of a session directory, and how many lines were skipped: not valid JSON
 * (malformed, or a torn last line) or not a wire record.
 */
export async function readWire(
  dir: string,
): Promise<{ total: number; skipped: number; events: VisWireEvent[] }> {
  const events: VisWireEvent[] = [];
  const read = await readRecordsCounted(join(dir, "wire.jsonl"));
  let skipped = read.skipped;
  for (const rec of read.records) {
    if (isObj(rec) && rec.type === "metadata") continue;
    if (!isObj(rec) || !isObj(rec.message)) {
      skipped++;
      continue;
    }
    events.push({
      index: events.length,
      timestamp: typeof rec.timestamp === "number" ? rec.timestamp : 0,
      type: String(rec.message.type ?? ""),
      payload: rec.message.payload ?? null,
    });
  }
  return { total: events.length, skipped, events };
}

/** The context messages of a session directory. */
export async function readContext(dir: string): Promise<{ total: number; messages: unknown[] }> {
  const messages = await readRecords(join(dir, "context.jsonl"));
  return { total: messages.length, messages };
}

/** The parsed `state.json` (null when missing or invalid). */
export async function readState(dir: string): Promise<unknown> {
  try {
    return JSON.parse(await Deno.readTextFile(join(dir, "state.json")));
  } catch {
    return null;
  }
}

function userText(input: unknown): string {
  if (typeof input === "string") return input;
  if (Array.isArray(input)) {
    return input.map((p) => isObj(p) && p.type === "text" ? String(p.text ?? "") : "").join(" ")
      .trim();
  }
  return "";
}

/** Per-session figures (reference `/summary`). */
export interface VisSummary {
  /** Turns. */
  turns: number;
  /** Steps. */
  steps: number;
  /** Tool calls. */
  tool_calls: number;
  /** Failed tool results and interrupted steps. */
  errors: number;
  /** Compactions. */
  compactions: number;
  /** Seconds from the first to the last record. */
  duration_sec: number;
  /** Token totals from the StatusUpdate records. */
  tokens: { input: number; output: number };
  /** File sizes. */
  sizes: { wire: number; context: number; state: number };
  /** Tool name → calls. */
  tools: Record<string, { calls: number; errors: number }>;
}

/** Summarize a session's wire records. */
export async function summarize(dir: string): Promise<VisSummary> {
  const { events } = await readWire(dir);
  const s: VisSummary = {
    turns: 0,
    steps: 0,
    tool_calls: 0,
    errors: 0,
    compactions: 0,
    duration_sec: 0,
    tokens: { input: 0, output: 0 },
    sizes: {
      wire: (await stat(join(dir, "wire.jsonl")))?.size ?? 0,
      context: (await stat(join(dir, "context.jsonl")))?.size ?? 0,
      state: (await stat(join(dir, "state.json")))?.size ?? 0,
    },
    tools: {},
  };
  const names = new Map<string, string>();
  for (const e of events) {
    const p = isObj(e.payload) ? e.payload : {};
    switch (e.type) {
      case "TurnBegin":
        s.turns++;
        break;
      case "StepBegin":
        s.steps++;
        break;
      case "StepInterrupted":
        s.errors++;
        break;
      case "CompactionBegin":
        s.compactions++;
        break;
      case "ToolCall": {
        s.tool_calls++;
        const name = isObj(p.function) ? String(p.function.name ?? "?") : "?";
        names.set(String(p.id ?? ""), name);
        (s.tools[name] ??= { calls: 0, errors: 0 }).calls++;
        break;
      }
      case "ToolResult":
        if (isObj(p.return_value) && p.return_value.is_error === true) {
          s.errors++;
          const name = names.get(String(p.tool_call_id ?? "")) ?? "?";
          (s.tools[name] ??= { calls: 0, errors: 0 }).errors++;
        }
        break;
      case "StatusUpdate":
        if (isObj(p.token_usage)) {
          const u = p.token_usage as Record<string, number>;
          s.tokens.input += (u.input_other ?? 0) + (u.input_cache_read ?? 0) +
            (u.input_cache_creation ?? 0);
          s.tokens.output += u.output ?? 0;
        }
        break;
    }
  }
  if (events.length > 1) {
    s.duration_sec = Math.max(0, events[events.length - 1].timestamp - events[0].timestamp);
  }
  return s;
}

/** The subagent instances of a session: id and their `meta.json`. */
export async function listSubagents(
  dir: string,
): Promise<{ agent_id: string; meta: unknown; has_wire: boolean }[]> {
  const root = join(dir, "subagents");
  const out = [];
  for (const id of await listDirs(root)) {
    let meta: unknown = null;
    try {
      meta = JSON.parse(await Deno.readTextFile(join(root, id, "meta.json")));
    } catch {
      // No meta.
    }
    out.push({ agent_id: id, meta, has_wire: (await stat(join(root, id, "wire.jsonl"))) !== null });
  }
  return out;
}

/** The directory of subagent `aid` of a session, or null when absent or not a plain name. */
export async function subagentDir(dir: string, aid: string): Promise<string | null> {
  if (!NAME.test(aid)) return null;
  const sub = join(dir, "subagents", aid);
  return (await isDir(sub)) ? sub : null;
}

/** Describe one session for the list. */
export async function describeSession(
  ref: VisSessionRef,
  workDirs: Map<string, string>,
): Promise<VisSessionInfo> {
  const wire = await stat(join(ref.dir, "wire.jsonl"));
  const context = await stat(join(ref.dir, "context.jsonl"));
  const stateInfo = await stat(join(ref.dir, "state.json"));
  const state = await readState(ref.dir);
  let metadata: Record<string, unknown> | null = null;
  let turns = 0;
  let firstText = "";
  for (const rec of await readRecords(join(ref.dir, "wire.jsonl"))) {
    if (!isObj(rec)) continue;
    if (rec.type === "metadata") {
      metadata = rec;
      continue;
    }
    if (isObj(rec.message) && rec.message.type === "TurnBegin") {
      turns++;
      if (!firstText && isObj(rec.message.payload)) {
        firstText = userText(rec.message.payload.user_input);
      }
    }
  }
  const custom = isObj(state) && typeof state.custom_title === "string" ? state.custom_title : "";
  const mtimes = [wire, context, stateInfo].map((i) => i?.mtime?.getTime() ?? 0);
  let workDir = workDirs.get(ref.hash) ?? null;
  if (ref.imported && isObj(state) && typeof state.work_dir === "string") workDir = state.work_dir;
  return {
    session_id: ref.id,
    session_dir: ref.dir,
    work_dir: workDir,
    work_dir_hash: ref.hash,
    title: custom || firstText.slice(0, 300) || "Untitled",
    last_updated: Math.max(...mtimes) / 1000,
    has_wire: wire !== null,
    has_context: context !== null,
    has_state: stateInfo !== null,
    metadata,
    wire_size: wire?.size ?? 0,
    context_size: context?.size ?? 0,
    state_size: stateInfo?.size ?? 0,
    turns,
    imported: ref.imported,
    subagent_count: (await listDirs(join(ref.dir, "subagents"))).length,
  };
}

/** Work-dir key → path, from `kimi.json`. */
export async function workDirsByKey(shareDir: string): Promise<Map<string, string>> {
  const meta = await loadMetadata(shareDir);
  return new Map(meta.work_dirs.map((wd) => [workDirKey(wd.path, wd.kaos), wd.path]));
}

/** Every session, newest first. */
export async function listSessions(shareDir: string): Promise<VisSessionInfo[]> {
  const workDirs = await workDirsByKey(shareDir);
  const out: VisSessionInfo[] = [];
  for (const ref of await findSessions(shareDir)) out.push(await describeSession(ref, workDirs));
  return out.sort((a, b) => b.last_updated - a.last_updated);
}

/** Totals, tool usage, per-day and per-project figures over every session. */
export async function statistics(shareDir: string): Promise<Record<string, unknown>> {
  const sessions = await listSessions(shareDir);
  const tools = new Map<string, { calls: number; errors: number }>();
  const daily = new Map<string, { sessions: number; turns: number }>();
  const projects = new Map<string, { sessions: number; turns: number }>();
  const totals = {
    sessions: sessions.length,
    turns: 0,
    steps: 0,
    tool_calls: 0,
    errors: 0,
    input_tokens: 0,
    output_tokens: 0,
  };
  for (const info of sessions) {
    const s = await summarize(info.session_dir);
    totals.turns += s.turns;
    totals.steps += s.steps;
    totals.tool_calls += s.tool_calls;
    totals.errors += s.errors;
    totals.input_tokens += s.tokens.input;
    totals.output_tokens += s.tokens.output;
    for (const [name, t] of Object.entries(s.tools)) {
      const cur = tools.get(name) ?? { calls: 0, errors: 0 };
      tools.set(name, { calls: cur.calls + t.calls, errors: cur.errors + t.errors });
    }
    const day = new Date(info.last_updated * 1000).toISOString().slice(0, 10);
    const d = daily.get(day) ?? { sessions: 0, turns: 0 };
    daily.set(day, { sessions: d.sessions + 1, turns: d.turns + s.turns });
    const key = info.imported ? "(imported)" : info.work_dir ?? info.work_dir_hash;
    const p = projects.get(key) ?? { sessions: 0, turns: 0 };
    projects.set(key, { sessions: p.sessions + 1, turns: p.turns + s.turns });
  }
  return {
    totals,
    tool_usage: [...tools].map(([name, t]) => ({ name, count: t.calls, errors: t.errors }))
      .sort((a, b) => b.count - a.count),
    daily: [...daily].map(([date, d]) => ({ date, ...d })).sort((a, b) => a.date < b.date ? -1 : 1),
    per_project: [...projects].map(([work_dir, p]) => ({ work_dir, ...p }))
      .sort((a, b) => b.turns - a.turns),
  };
}

async function collect(dir: string, prefix: string, out: Record<string, Uint8Array>) {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.name.startsWith(LOCK_FILE)) continue;
    if (e.isDirectory) await collect(p, `${prefix}${e.name}/`, out);
    else if (e.isFile) out[`${prefix}${e.name}`] = await Deno.readFile(p);
  }
}

/** A ZIP of a session directory (files at the top level; lock files left out). */
export async function zipSession(dir: string): Promise<Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  await collect(dir, "", files);
  return zipSync(files, { level: 6 });
}

/** A ZIP that cannot be imported; the message says why. */
export class ImportError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "ImportError";
  }
}

/**
 * Import a session ZIP: it must hold `wire.jsonl` or `context.jsonl` at the top level or inside
 * one folder. Stored under `imported_sessions/<16 hex>/`; entries with absolute paths or `..`
 * are refused, and so is an archive whose files unpack to more than `maxUnpackedBytes`
 * (default 1 GB; checked from the ZIP's directory before anything is inflated). Returns the id.
 */
export async function importSessionZip(
  shareDir: string,
  zip: Uint8Array,
  opts: { maxUnpackedBytes?: number } = {},
): Promise<string> {
  const maxUnpacked = opts.maxUnpackedBytes ?? MAX_IMPORT_UNPACKED_BYTES;
  if (zip.byteLength > MAX_IMPORT_BYTES) throw new ImportError("File too large (max 200MB)");
  let entries: Record<string, Uint8Array>;
  let unpacked = 0;
  try {
    entries = unzipSync(zip, {
      filter: (f) => {
        unpacked += f.originalSize;
        if (unpacked > maxUnpacked) {
          throw new ImportError(
            `The ZIP unpacks to more than ${
              Math.round(maxUnpacked / 1024 / 1024)
            } MB; it is not imported.`,
          );
        }
        return true;
      },
    });
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError("Not a valid ZIP file.");
  }
  const names = Object.keys(entries).filter((n) => !n.endsWith("/"));
  let prefix: string | null = null;
  if (names.some((n) => n === "wire.jsonl" || n === "context.jsonl")) prefix = "";
  else {
    const tops = new Set(names.map((n) => n.split("/")[0]));
    if (tops.size === 1) {
      const top = [...tops][0];
      if (names.some((n) => n === `${top}/wire.jsonl` || n === `${top}/context.jsonl`)) {
        prefix = `${top}/`;
      }
    }
  }
  if (prefix === null) {
    throw new ImportError(
      "The ZIP must contain wire.jsonl or context.jsonl at its top level or in one folder.",
    );
  }
  const id = [...crypto.getRandomValues(new Uint8Array(8))]
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const dest = join(shareDir, "imported_sessions", id);
  await Deno.mkdir(dest, { recursive: true });
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const rel = name.slice(prefix.length);
    const parts = rel.split("/");
    if (!rel || rel.startsWith("/") || parts.some((p) => p === ".." || p === "" || p === ".")) {
      continue;
    }
    const target = join(dest, ...parts);
    await Deno.mkdir(join(target, ".."), { recursive: true });
    await Deno.writeFile(target, entries[name], { createNew: true });
  }
  return id;
}

/** Delete an imported session (only imported ones may be deleted). */
export async function deleteImported(ref: VisSessionRef): Promise<void> {
  if (!ref.imported) throw new ImportError("Only imported sessions can be deleted.");
  await Deno.remove(ref.dir, { recursive: true });
}
