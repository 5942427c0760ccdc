/**
 * Sessions of a work dir, stored under `<share>/sessions/<work-dir-key>/<session-id>/`
 * (`context.jsonl`, `wire.jsonl`, `state.json`): create, find, continue, list, title,
 * emptiness and deletion.
 *
 * @module
 */
import { pathStatus } from "../fs/exists.ts";
import { join } from "node:path";
import { extractText } from "../llm/message.ts";
import { UserInputSchema } from "../wire/messages.ts";
import { parseJsonLine, readJsonlLines } from "./jsonl.ts";
import {
  canonicalWorkDir,
  ensureWorkDir,
  findWorkDir,
  loadMetadata,
  saveMetadata,
  sessionsDirFor,
  setLastSessionId,
  updateMetadata,
} from "./metadata.ts";
import {
  defaultState,
  loadState,
  saveState,
  type SessionState,
  stateFilePath,
  updateState,
} from "./state.ts";
import { shortenTitle } from "./title.ts";

/** A session-store problem the user can act on (no previous session, bad id). */
export class SessionError extends Error {
  /** Create a session error with a user-facing message. */
  constructor(message: string) {
    super(message);
    this.name = "SessionError";
  }
}

/** Identifies a work dir in a share dir. */
export interface WorkDirRef {
  /** The share dir. */
  shareDir: string;
  /** The work dir (made absolute and normalized). */
  workDir: string;
}

/** Options of {@linkcode Session.create}. */
export interface CreateSessionOptions extends WorkDirRef {
  /** Session id to use (e.g. from `--session ID`); a new uuid4 when omitted. */
  id?: string;
}

/** Options of {@linkcode Session.find}. */
export interface FindSessionOptions extends WorkDirRef {
  /** The session id. */
  id: string;
}

const TITLE_WIDTH = 50;
const UNTITLED = "Untitled";

/** One session of a work dir. */
export class Session {
  /** Session id (a uuid4 unless given by the user). */
  readonly id: string;
  /** Canonical absolute work dir. */
  readonly workDir: string;
  /** The share dir the session lives in. */
  readonly shareDir: string;
  /** The session directory. */
  readonly dir: string;
  /** `context.jsonl`: the message history. */
  readonly contextFile: string;
  /** `wire.jsonl`: the recorded wire messages. */
  readonly wireFile: string;
  /** `state.json`. */
  readonly stateFile: string;
  /** The session state as loaded (persist changes with {@linkcode Session.saveState}). */
  state: SessionState;

  private constructor(ref: WorkDirRef, id: string, state: SessionState) {
    this.id = id;
    this.shareDir = ref.shareDir;
    this.workDir = canonicalWorkDir(ref.workDir);
    this.dir = join(sessionsDirFor(ref.shareDir, this.workDir), id);
    this.contextFile = join(this.dir, "context.jsonl");
    this.wireFile = join(this.dir, "wire.jsonl");
    this.stateFile = stateFilePath(this.dir);
    this.state = state;
  }

  /**
   * Create a session: registers the work dir in `kimi.json`, creates the session dir and an
   * empty `context.jsonl` (truncating an existing one). The state starts at its defaults and
   * is not written until saved.
   *
   * @throws {SessionError} when `id` is not a safe directory name.
   */
  static async create(opts: CreateSessionOptions): Promise<Session> {
    const id = opts.id ?? crypto.randomUUID();
    assertValidId(id);
    const metadata = await loadMetadata(opts.shareDir);
    const known = Boolean(findWorkDir(metadata, opts.workDir));
    ensureWorkDir(metadata, opts.workDir);
    const session = new Session(opts, id, defaultState());
    await Deno.mkdir(session.dir, { recursive: true });
    await Deno.writeTextFile(session.contextFile, "");
    // `kimi.json` changes only for a new work dir (no synced rewrite of an unchanged file).
    if (!known) await saveMetadata(opts.shareDir, metadata);
    return session;
  }

  /**
   * Find an existing session of the work dir: `null` when the work dir was never used, the id
   * is unknown or invalid, or the session has no `context.jsonl`. A legacy
   * `sessions/<key>/<id>.jsonl` is moved into the session dir first.
   */
  static async find(opts: FindSessionOptions): Promise<Session | null> {
    if (!isValidId(opts.id)) return null;
    const metadata = await loadMetadata(opts.shareDir);
    if (!findWorkDir(metadata, opts.workDir)) return null;
    const sessionsDir = sessionsDirFor(opts.shareDir, opts.workDir);
    await migrateLegacyContextFile(sessionsDir, opts.id);
    const dir = join(sessionsDir, opts.id);
    if (!((await pathStatus(dir)) === "directory")) return null;
    if (!((await pathStatus(join(dir, "context.jsonl"))) === "file")) return null;
    return new Session(opts, opts.id, await loadState(dir));
  }

  /**
   * The work dirs (other than `workDir`) that hold a session with this id, from `kimi.json`.
   */
  static async workDirsWith(opts: FindSessionOptions): Promise<string[]> {
    if (!isValidId(opts.id)) return [];
    const metadata = await loadMetadata(opts.shareDir);
    const here = canonicalWorkDir(opts.workDir);
    const found: string[] = [];
    for (const wd of metadata.work_dirs) {
      if (wd.path === here || wd.kaos !== "local") continue;
      const dir = join(sessionsDirFor(opts.shareDir, wd.path), opts.id);
      if ((await pathStatus(join(dir, "context.jsonl"))) === "file") found.push(wd.path);
    }
    return found;
  }

  /**
   * The session `--continue` resumes: the work dir's `last_session_id` in `kimi.json` (the
   * session of the last clean exit) when it still holds something, else the work dir's newest
   * session with content (see {@link list}) — a run that failed, or one whose last session was
   * empty, leaves no usable id behind.
   *
   * @throws {SessionError} `No previous session found for the working directory`.
   */
  static async continue(opts: WorkDirRef): Promise<Session> {
    const metadata = await loadMetadata(opts.shareDir);
    const last = findWorkDir(metadata, opts.workDir)?.last_session_id ?? null;
    const session = last === null ? null : await Session.find({ ...opts, id: last });
    if (session && !(await session.isEmpty())) return session;
    const [newest] = await Session.list(opts);
    if (newest) return newest;
    if (!session) throw new SessionError("No previous session found for the working directory");
    return session;
  }

  /**
   * The non-empty sessions of a work dir that have a `context.jsonl`, most recently updated
   * (`context.jsonl` mtime) first; ties by id. Empty when the work dir was never used.
   */
  static async list(opts: WorkDirRef): Promise<Session[]> {
    const metadata = await loadMetadata(opts.shareDir);
    if (!findWorkDir(metadata, opts.workDir)) return [];
    const sessionsDir = sessionsDirFor(opts.shareDir, opts.workDir);
    const ids = new Set<string>();
    try {
      for await (const entry of Deno.readDir(sessionsDir)) {
        if (entry.isDirectory) ids.add(entry.name);
        else if (entry.isFile && entry.name.endsWith(".jsonl")) ids.add(entry.name.slice(0, -6));
      }
    } catch {
      return [];
    }
    const found: { session: Session; mtime: number }[] = [];
    for (const id of ids) {
      if (!isValidId(id)) continue;
      await migrateLegacyContextFile(sessionsDir, id);
      const dir = join(sessionsDir, id);
      const contextFile = join(dir, "context.jsonl");
      if (
        !((await pathStatus(dir)) === "directory") || !((await pathStatus(contextFile)) === "file")
      ) continue;
      const session = new Session(opts, id, await loadState(dir));
      if (await session.isEmpty()) continue;
      found.push({ session, mtime: await mtimeOf(contextFile) });
    }
    found.sort((a, b) => b.mtime - a.mtime || (a.session.id < b.session.id ? -1 : 1));
    return found.map((f) => f.session);
  }

  /**
   * Whether the session holds nothing worth keeping: no custom title, no record in
   * `wire.jsonl` besides the metadata header, and no `context.jsonl` line whose role does not
   * start with `_`. An unreadable or malformed context counts as non-empty (never deleted).
   */
  async isEmpty(): Promise<boolean> {
    if (this.state.custom_title) return false;
    if (await wireHasRecords(this.wireFile)) return false;
    try {
      for await (const line of readJsonlLines(this.contextFile)) {
        const record = parseJsonLine(line);
        if (record === null || typeof record !== "object") return false;
        const role = (record as Record<string, unknown>).role;
        if (typeof role === "string" && !role.startsWith("_")) return false;
      }
    } catch (err) {
      return err instanceof Deno.errors.NotFound;
    }
    return true;
  }

  /**
   * Display title: the custom title, else the first prompt (see {@link firstPrompt}) shortened
   * to 50 characters, else `Untitled`.
   */
  async title(): Promise<string> {
    if (this.state.custom_title) return this.state.custom_title;
    const first = await this.firstPrompt();
    return first === null ? UNTITLED : shortenTitle(first, TITLE_WIDTH);
  }

  /**
   * The first `TurnBegin` user text of `wire.jsonl` that is not a slash command (a `/plan` or
   * `/compact` says nothing about what the session is about), or null.
   */
  async firstPrompt(): Promise<string | null> {
    try {
      for await (const line of readJsonlLines(this.wireFile)) {
        const record = parseJsonLine(line) as
          | { message?: { type?: unknown; payload?: { user_input?: unknown } } }
          | undefined;
        if (record?.message?.type !== "TurnBegin") continue;
        const input = UserInputSchema.safeParse(record.message.payload?.user_input);
        if (!input.success) continue;
        const text = typeof input.data === "string" ? input.data : extractText(input.data, " ");
        if (text.trim().startsWith("/") || !text.trim()) continue;
        return text;
      }
    } catch {
      // missing or unreadable wire file
    }
    return null;
  }

  /** Last update time (ms since epoch): the `context.jsonl` mtime, 0 when unknown. */
  async updatedAt(): Promise<number> {
    return await mtimeOf(this.contextFile);
  }

  /**
   * Persist `state`, keeping the title and archive fields another process may have changed on
   * disk (they are reloaded into `state` first).
   */
  async saveState(): Promise<void> {
    await saveState(this.dir, this.state);
  }

  /**
   * Set the custom title (`/title`) and persist it. The title is one of the fields
   * {@linkcode Session.saveState} takes from disk, so it is written through
   * {@linkcode updateState}, which keeps every other field as it is on disk.
   */
  async setTitle(title: string): Promise<void> {
    const saved = await updateState(this.dir, (state) => {
      state.custom_title = title;
    });
    this.state.custom_title = saved.custom_title;
  }

  /** Record this session as the work dir's `last_session_id` in `kimi.json`. */
  async setLastSession(): Promise<void> {
    await setLastSessionId(this.shareDir, this.workDir, this.id);
  }

  /**
   * Delete the session dir (no error when already gone) and clear `last_session_id` in
   * `kimi.json` when it points at this session.
   */
  async delete(): Promise<void> {
    try {
      await Deno.remove(this.dir, { recursive: true });
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    const metadata = await loadMetadata(this.shareDir);
    if (findWorkDir(metadata, this.workDir)?.last_session_id === this.id) {
      await updateMetadata(this.shareDir, (m) => {
        const entry = findWorkDir(m, this.workDir);
        if (entry?.last_session_id === this.id) entry.last_session_id = null;
      });
    }
  }
}

/** Whether `id` can name a session dir (no separators, not `.`/`..`). */
export function isValidId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id) && id.length <= 128;
}

function assertValidId(id: string): void {
  if (!isValidId(id)) {
    throw new SessionError(
      `Invalid session ID ${JSON.stringify(id)}: use letters, digits, "-", "_" or "." ` +
        "(starting with a letter or digit).",
    );
  }
}

async function wireHasRecords(path: string): Promise<boolean> {
  try {
    for await (const line of readJsonlLines(path)) {
      if (!isWireMetadataLine(line)) return true;
    }
  } catch (err) {
    return !(err instanceof Deno.errors.NotFound);
  }
  return false;
}

function isWireMetadataLine(line: string): boolean {
  const record = parseJsonLine(line);
  if (record === null || typeof record !== "object" || Array.isArray(record)) return false;
  const r = record as Record<string, unknown>;
  return typeof r.protocol_version === "string" && (r.type === undefined || r.type === "metadata");
}

async function migrateLegacyContextFile(sessionsDir: string, id: string): Promise<void> {
  const legacy = join(sessionsDir, `${id}.jsonl`);
  const target = join(sessionsDir, id, "context.jsonl");
  if (!((await pathStatus(legacy)) === "file") || ((await pathStatus(target)) === "file")) return;
  await Deno.mkdir(join(sessionsDir, id), { recursive: true });
  await Deno.rename(legacy, target);
}

async function mtimeOf(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).mtime?.getTime() ?? 0;
  } catch {
    return 0;
  }
}
