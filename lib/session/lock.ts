/**
 * One session, one writer: a process that appends to a session holds `<session>/session.lock`,
 * a small JSON file naming it (pid, process start time, hostname, since when). The file is
 * created atomically (written aside, then hard-linked into place, which fails when it exists),
 * so a reader never sees a half-written lock. A lock whose process is gone (the pid is not
 * alive, or it is alive but started at another time: a reused pid) is stale and taken over;
 * takeovers are serialized by a second exclusive file so two processes never both win.
 * Read-only uses (listing, export, replay) never take the lock.
 *
 * @module
 */
import { join } from "node:path";

/** Name of the lock file inside a session dir. */
export const LOCK_FILE = "session.lock";

/** What a lock file says about its holder. */
export interface LockHolder {
  /** Process id. */
  pid: number;
  /** Host the process runs on. */
  hostname: string;
  /** Start time of the process (Linux clock ticks since boot), null when unknown. */
  process_start: number | null;
  /** When the lock was taken (ISO 8601). */
  since: string;
}

/** The session is held by another live process. */
export class SessionLockedError extends Error {
  /** The holder, as its lock file says. */
  readonly holder: LockHolder;
  /**
   * Create the error. `lockPath` is named when the holder could not be checked (another host,
   * no process table), so a user can clear a lock whose process is gone.
   */
  constructor(sessionId: string, holder: LockHolder, lockPath?: string) {
    const host = holder.hostname === hostname() ? "" : ` on ${holder.hostname}`;
    super(
      `Session ${sessionId} is in use by another kimi process (pid ${holder.pid}${host}, since ` +
        `${holder.since}). Two processes writing one session would interleave its records. ` +
        "Close the other kimi, start a new session, or pass --wait-for-session to wait for it." +
        (lockPath ? ` If that process no longer exists, delete ${lockPath}.` : ""),
    );
    this.name = "SessionLockedError";
    this.holder = holder;
  }
}

/** Options of {@link SessionLock.acquire}. */
export interface AcquireLockOptions {
  /** Session id, for messages. */
  sessionId: string;
  /** Wait (polling) until the holder lets go instead of failing at once. */
  wait?: boolean;
  /** Poll interval while waiting, in ms. Default 500. */
  pollMs?: number;
  /** Stops waiting (rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** A held session lock. */
export class SessionLock {
  /** Path of the lock file. */
  readonly path: string;
  readonly #holder: LockHolder;
  #released = false;

  private constructor(path: string, holder: LockHolder) {
    this.path = path;
    this.#holder = holder;
  }

  /**
   * Take the lock of the session in `dir`.
   *
   * @throws {SessionLockedError} when another live process holds it (and `wait` is off).
   */
  static async acquire(dir: string, opts: AcquireLockOptions): Promise<SessionLock> {
    const path = join(dir, LOCK_FILE);
    const me = ownHolder();
    for (;;) {
      opts.signal?.throwIfAborted();
      if (await tryCreate(path, me)) return new SessionLock(path, me);
      const holder = await readHolder(path);
      if (holder === "missing") continue; // released meanwhile: try again
      if (holder !== "unreadable" && isStale(holder)) {
        if (await takeOver(path, holder, me)) return new SessionLock(path, me);
        continue;
      }
      if (holder === "unreadable") {
        // Only a crash between our own write and link could leave this; treat an old one as stale.
        if (await olderThan(path, 10_000)) {
          await Deno.remove(path).catch(() => {});
          continue;
        }
      } else if (!opts.wait) {
        const checkable = holder.hostname === hostname() && pidAlive(holder.pid) !== null;
        throw new SessionLockedError(opts.sessionId, holder, checkable ? undefined : path);
      }
      await sleep(opts.pollMs ?? 500, opts.signal);
    }
  }

  /** Let go of the lock (idempotent; only removes the file while it is still ours). */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    const current = await readHolder(this.path);
    if (typeof current === "object" && sameHolder(current, this.#holder)) {
      await Deno.remove(this.path).catch(() => {});
    }
  }
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "localhost";
  }
}

function ownHolder(): LockHolder {
  return {
    pid: Deno.pid,
    hostname: hostname(),
    process_start: processStart(Deno.pid),
    since: new Date().toISOString(),
  };
}

function sameHolder(a: LockHolder, b: LockHolder): boolean {
  return a.pid === b.pid && a.hostname === b.hostname && a.since === b.since;
}

/** Start time of a process from `/proc/<pid>/stat` (field 22), or null when unavailable. */
function processStart(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The command name (field 2) may contain spaces and parentheses: split after its end.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/** Whether `pid` is a live process: null when it cannot be told (no /proc, no permission). */
function pidAlive(pid: number): boolean | null {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      // No such process, unless this system has no /proc at all.
      try {
        Deno.statSync("/proc/self");
        return false;
      } catch {
        return null;
      }
    }
    return null;
  }
}

/**
 * A lock is stale when it names this host and its process is gone, or a different process now
 * has its pid (another start time). A lock of another host, or one whose process cannot be
 * checked, is never stale: failing closed keeps two writers apart.
 */
function isStale(holder: LockHolder): boolean {
  if (holder.hostname !== hostname()) return false;
  if (holder.pid === Deno.pid) return false;
  const alive = pidAlive(holder.pid);
  if (alive === false) return true;
  if (alive === null) return false;
  const start = processStart(holder.pid);
  return holder.process_start !== null && start !== null && start !== holder.process_start;
}

async function tryCreate(path: string, holder: LockHolder): Promise<boolean> {
  const tmp = `${path}.${holder.pid}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(tmp, JSON.stringify(holder) + "\n", { mode: 0o600 });
  try {
    await Deno.link(tmp, path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) return false;
    throw err;
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}

async function readHolder(path: string): Promise<LockHolder | "missing" | "unreadable"> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "missing";
    throw err;
  }
  try {
    const v = JSON.parse(text);
    if (typeof v?.pid === "number" && typeof v?.hostname === "string") {
      return {
        pid: v.pid,
        hostname: v.hostname,
        process_start: typeof v.process_start === "number" ? v.process_start : null,
        since: typeof v.since === "string" ? v.since : "an unknown time",
      };
    }
  } catch {
    // fall through
  }
  return "unreadable";
}

/**
 * Replace a stale lock with ours. Takeovers are serialized by `<lock>.takeover` (created
 * exclusively): the winner re-reads the lock, and only when it is still the same stale holder
 * swaps it for ours. Returns whether we now hold the lock.
 */
async function takeOver(path: string, stale: LockHolder, me: LockHolder): Promise<boolean> {
  const guard = `${path}.takeover`;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(guard, { createNew: true, write: true, mode: 0o600 });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    // Someone else is taking over; a guard left by a crash is cleared after a while.
    if (await olderThan(guard, 10_000)) await Deno.remove(guard).catch(() => {});
    await sleep(50);
    return false;
  }
  file.close();
  try {
    const current = await readHolder(path);
    if (typeof current === "object" && sameHolder(current, stale)) {
      await Deno.remove(path);
    } else if (current !== "missing") {
      return false;
    }
    return await tryCreate(path, me);
  } finally {
    await Deno.remove(guard).catch(() => {});
  }
}

async function olderThan(path: string, ms: number): Promise<boolean> {
  try {
    const { mtime } = await Deno.stat(path);
    return mtime !== null && Date.now() - mtime.getTime() > ms;
  } catch {
    return false;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
