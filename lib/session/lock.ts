/**
 * One session, one writer: a process that appends to a session holds an exclusive lock on the
 * open file `<session>/session.lock` (`flock`, through `Deno.FsFile.tryLock`), and writes into
 * it who it is (pid, process start time, hostname, since when) for the messages of the others.
 *
 * The kernel holds the lock for the open file, not for a pid: it is released when its holder
 * lets go or dies, however it dies, and it is seen by every process on the machine, in any pid
 * namespace (a sandboxed or containerized kimi whose pid means nothing here). No process ever
 * guesses from a pid whether a holder is alive, so a live lock is never taken over or deleted.
 * The holder removes the file when it lets go; a process that locked a file which was removed
 * meanwhile (it lost that race) notices that the path now names another file and tries again.
 * Read-only uses (listing, export, replay) never take the lock.
 *
 * @module
 */
import { join } from "node:path";

/** Name of the lock file inside a session dir. */
export const LOCK_FILE = "session.lock";

/** What a lock file says about its holder. */
export interface LockHolder {
  /** Process id (in the holder's pid namespace). */
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
  /** The holder, as its lock file says (null when it has not written it yet). */
  readonly holder: LockHolder | null;

  /** Create the error. */
  constructor(sessionId: string, holder: LockHolder | null) {
    const who = holder === null
      ? ""
      : ` (pid ${holder.pid}${
        holder.hostname === hostname() ? "" : ` on ${holder.hostname}`
      }, since ${holder.since})`;
    super(
      `Session ${sessionId} is in use by another kimi process${who}. Two processes writing ` +
        "one session would interleave its records. Close the other kimi, start a new " +
        "session, or pass --wait-for-session to wait for it.",
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
  readonly #file: Deno.FsFile;
  #released = false;

  private constructor(path: string, file: Deno.FsFile) {
    this.path = path;
    this.#file = file;
  }

  /**
   * Take the lock of the session in `dir`.
   *
   * @throws {SessionLockedError} when another process holds it (and `wait` is off).
   */
  static async acquire(dir: string, opts: AcquireLockOptions): Promise<SessionLock> {
    const path = join(dir, LOCK_FILE);
    for (;;) {
      opts.signal?.throwIfAborted();
      const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
      let locked = false;
      try {
        locked = await file.tryLock(true);
        if (locked && await sameFile(file, path)) {
          const me = ownHolder();
          await file.truncate(0);
          await writeAll(file, new TextEncoder().encode(JSON.stringify(me) + "\n"));
          return new SessionLock(path, file);
        }
      } catch (err) {
        file.close();
        throw err;
      }
      // Held by another process, or we locked a file its holder had just removed.
      file.close();
      if (locked) continue;
      if (!opts.wait) throw new SessionLockedError(opts.sessionId, await readHolder(path));
      await sleep(opts.pollMs ?? 500, opts.signal);
    }
  }

  /** Let go of the lock (idempotent): the file is removed while still locked, then unlocked. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    try {
      if (await sameFile(this.#file, this.path)) await Deno.remove(this.path).catch(() => {});
    } finally {
      this.#file.close(); // closing the file releases the lock
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

/** Whether `path` still names the open `file` (same device and inode). */
async function sameFile(file: Deno.FsFile, path: string): Promise<boolean> {
  try {
    const [open, named] = await Promise.all([file.stat(), Deno.stat(path)]);
    // Without inode numbers (Windows) the path is taken to name the file still.
    if (open.ino === null || named.ino === null) return true;
    return open.ino === named.ino && open.dev === named.dev;
  } catch {
    return false;
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await file.write(bytes.subarray(done));
}

/**
 * The holder a lock file names, for messages. It writes the file right after locking it: an
 * empty or half-written file is read again a few times before giving up (null).
 */
async function readHolder(path: string): Promise<LockHolder | null> {
  for (let attempt = 0; attempt < 20; attempt++) {
    let text = "";
    try {
      text = await Deno.readTextFile(path);
    } catch {
      return null;
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
      // not written yet
    }
    await sleep(25);
  }
  return null;
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
