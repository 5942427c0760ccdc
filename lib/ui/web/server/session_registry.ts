/**
 * Every session of the machine as `kimi web` sees it: found by id across the work dirs of
 * `kimi.json`, listed (search, archive filter, newest first), created, renamed, archived,
 * forked and deleted; and the {@link SessionHost}s of the sessions this process runs.
 *
 * @module
 */
import { join } from "node:path";
import type { KimiApp } from "../../../app/kimi_app.ts";
import type { BackgroundTaskManager } from "../../../background/task_manager.ts";
import { log } from "../../../log.ts";
import { loadMetadata, setLastSessionId } from "../../../session/metadata.ts";
import { Session } from "../../../session/session.ts";
import { loadState, updateState } from "../../../session/state.ts";
import { SessionHost } from "./session_host.ts";
import type { SessionInfo } from "./schemas.ts";
import { forkAtTurn } from "./fork_turn.ts";
import { fallbackTitle } from "./session_title.ts";

/** Sessions untouched this long are archived automatically (unless exempt). */
export const AUTO_ARCHIVE_AGE_MS = 15 * 24 * 3600 * 1000;
/** Auto-archive runs at most this often. */
const AUTO_ARCHIVE_EVERY_MS = 5 * 60 * 1000;

/** Options of {@link SessionRegistry}. */
export interface SessionRegistryOptions {
  /** The share dir. */
  shareDir: string;
  /** Build the agent of a session (`tasks`: its background tasks from an earlier build). */
  buildApp(
    session: Session,
    opts: { resumed: boolean; tasks: BackgroundTaskManager | null },
  ): Promise<KimiApp>;
  /** Tidy up a stopped agent (`final`: the session is closed, its tasks stop too). */
  closeApp(app: KimiApp, opts: { final: boolean }): Promise<void>;
}

/** Query of {@link SessionRegistry.list}. */
export interface ListQuery {
  /** Page size. */
  limit: number;
  /** Page start. */
  offset: number;
  /** Case-insensitive substring of the title or work dir. */
  q?: string;
  /** Archived sessions only (true) or unarchived only (false). */
  archived: boolean;
}

/** A session refused for changes while a turn runs. */
export class SessionBusyError extends Error {
  /** Create the error. */
  constructor() {
    super("Session is busy. Please wait for it to complete before modifying.");
  }
}

/** The sessions of the server. */
export class SessionRegistry {
  readonly #opts: SessionRegistryOptions;
  readonly #hosts = new Map<string, SessionHost>();
  #seq = 0;
  #lastAutoArchive = 0;

  /** Create a registry. */
  constructor(opts: SessionRegistryOptions) {
    this.#opts = opts;
  }

  /** The hosts of this process (running or not). */
  hosts(): SessionHost[] {
    return [...this.#hosts.values()];
  }

  /** Find a session by id across every work dir (null when unknown). */
  async find(id: string): Promise<Session | null> {
    const host = this.#hosts.get(id);
    if (host) {
      const present = await Deno.stat(host.session.contextFile).then(() => true, () => false);
      if (present) return host.session;
      // deleted behind our back (another process, the user)
      this.#hosts.delete(id);
      await host.close().catch(() => {});
      return null;
    }
    const meta = await loadMetadata(this.#opts.shareDir);
    for (const wd of meta.work_dirs) {
      if (wd.kaos !== "local") continue;
      const s = await Session.find({ shareDir: this.#opts.shareDir, workDir: wd.path, id });
      if (s) return s;
    }
    return null;
  }

  /** The host of a session (created on first use). */
  host(session: Session): SessionHost {
    let h = this.#hosts.get(session.id);
    if (!h) {
      h = new SessionHost(session, {
        buildApp: this.#opts.buildApp,
        closeApp: this.#opts.closeApp,
        nextSeq: () => ++this.#seq,
        onFirstPrompt: (s) =>
          setLastSessionId(s.shareDir, s.workDir, s.id).catch((err) =>
            log("WARNING", "web", `could not record the last session: ${err}`)
          ),
      });
      this.#hosts.set(session.id, h);
    }
    return h;
  }

  /** The host of a session if this process has one. */
  existingHost(id: string): SessionHost | null {
    return this.#hosts.get(id) ?? null;
  }

  /** A new session in `workDir` (not started). */
  async create(workDir: string): Promise<Session> {
    const s = await Session.create({ shareDir: this.#opts.shareDir, workDir });
    this.host(s);
    return s;
  }

  /** The listed form of a session. */
  async info(session: Session): Promise<SessionInfo> {
    const state = await loadState(session.dir);
    session.state.custom_title = state.custom_title;
    const host = this.#hosts.get(session.id);
    const updated = await session.updatedAt();
    return {
      session_id: session.id,
      title: state.custom_title || await fallbackTitle(session),
      last_updated: new Date(updated || Date.now()).toISOString(),
      is_running: host?.isRunning ?? false,
      status: host?.status ?? null,
      work_dir: session.workDir,
      session_dir: session.dir,
      archived: state.archived,
      pinned: state.pinned === true,
    };
  }

  /** Sessions matching `query`, newest first. */
  async list(query: ListQuery): Promise<SessionInfo[]> {
    await this.#autoArchive();
    const all = await this.#all();
    const q = query.q?.toLowerCase() ?? "";
    const out: { info: SessionInfo; t: number }[] = [];
    for (const s of all) {
      const info = await this.info(s);
      if (info.archived !== query.archived) continue;
      if (q && !info.title.toLowerCase().includes(q) && !info.work_dir.toLowerCase().includes(q)) {
        continue;
      }
      out.push({ info, t: Date.parse(info.last_updated) });
    }
    out.sort((a, b) => b.t - a.t || (a.info.session_id < b.info.session_id ? -1 : 1));
    return out.slice(query.offset, query.offset + query.limit).map((o) => o.info);
  }

  async #all(): Promise<Session[]> {
    const meta = await loadMetadata(this.#opts.shareDir);
    const seen = new Map<string, Session>();
    for (const wd of meta.work_dirs) {
      if (wd.kaos !== "local") continue;
      for (const s of await Session.list({ shareDir: this.#opts.shareDir, workDir: wd.path })) {
        seen.set(s.id, s);
      }
    }
    // sessions made or opened here, even while still empty
    for (const h of this.#hosts.values()) {
      if (!seen.has(h.session.id)) {
        try {
          await Deno.stat(h.session.contextFile);
          seen.set(h.session.id, h.session);
        } catch {
          // deleted behind our back
        }
      }
    }
    return [...seen.values()];
  }

  async #autoArchive(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastAutoArchive < AUTO_ARCHIVE_EVERY_MS) return;
    this.#lastAutoArchive = now;
    for (const s of await this.#all()) {
      if (s.state.archived || s.state.auto_archive_exempt) continue;
      if (this.#hosts.get(s.id)?.isRunning) continue;
      const updated = await s.updatedAt();
      if (updated && now - updated >= AUTO_ARCHIVE_AGE_MS) {
        await updateState(s.dir, (st) => {
          st.archived = true;
          st.archived_at = now / 1000;
        }).catch(() => {});
      }
    }
  }

  /** Throw {@link SessionBusyError} when a turn runs in the session. */
  assertEditable(session: Session): void {
    if (this.#hosts.get(session.id)?.busy) throw new SessionBusyError();
  }

  /**
   * Rename, (un)archive and/or (un)pin a session. Pinning alone is a list preference and is
   * allowed while a turn runs; a title or archive change is not.
   */
  async update(
    session: Session,
    patch: { title?: string; archived?: boolean; pinned?: boolean },
  ): Promise<void> {
    if (patch.title !== undefined || patch.archived !== undefined) this.assertEditable(session);
    const state = await updateState(session.dir, (st) => {
      if (patch.title !== undefined) {
        st.custom_title = patch.title;
        st.title_generated = true;
      }
      if (patch.archived === true) {
        st.archived = true;
        st.archived_at = Date.now() / 1000;
        st.auto_archive_exempt = false;
      } else if (patch.archived === false) {
        st.archived = false;
        st.archived_at = null;
        st.auto_archive_exempt = true;
      }
      // Written only while true (not a reference field).
      if (patch.pinned === true) st.pinned = true;
      else if (patch.pinned === false) delete st.pinned;
    });
    session.state = { ...session.state, ...pickExternal(state) };
    const running = this.#hosts.get(session.id)?.app?.session;
    if (running && running !== session) {
      running.state = { ...running.state, ...pickExternal(state) };
    }
  }

  /** Stop a session's agent, close its sockets and delete its files. */
  async delete(session: Session): Promise<void> {
    this.assertEditable(session);
    const host = this.#hosts.get(session.id);
    this.#hosts.delete(session.id);
    await host?.close();
    await session.delete();
  }

  /** Fork a session after turn `turnIndex`; resolves with the new session. */
  async fork(session: Session, turnIndex: number): Promise<Session> {
    this.assertEditable(session);
    const fork = await forkAtTurn(session, turnIndex);
    this.host(fork);
    return fork;
  }

  /** Stop every session (server shutdown): turns cancelled, records closed, sockets closed. */
  async shutdown(): Promise<void> {
    const all = [...this.#hosts.values()];
    this.#hosts.clear();
    await Promise.allSettled(all.map((h) => h.close()));
    // sessions created here and never used are not kept
    for (const h of all) {
      if (await h.session.isEmpty().catch(() => false)) await h.session.delete().catch(() => {});
    }
  }
}

function pickExternal(st: Awaited<ReturnType<typeof loadState>>) {
  return {
    custom_title: st.custom_title,
    title_generated: st.title_generated,
    archived: st.archived,
    archived_at: st.archived_at,
    auto_archive_exempt: st.auto_archive_exempt,
    pinned: st.pinned,
  };
}

/** `<session_dir>/uploads`, exported for routes. */
export function sessionUploads(session: Session): string {
  return join(session.dir, "uploads");
}
