/**
 * A native walker for Glob's `**`: GNU `find` lists a whole subtree, with each entry's type, in
 * one pass (about as fast as `rg --files`), where reading it through Deno's `readDir` costs a
 * JavaScript object and an op per entry. {@link pathGlob} then matches the listings in
 * JavaScript exactly as it matches what `readDir` returns, so the results are the same either
 * way; whenever the walker cannot give the same listings (not allowed to run, missing, failed,
 * too big a tree) the caller falls back to the `readDir` walk.
 *
 * @module
 */

/** One entry of a directory listing: the fields of `Deno.DirEntry` the glob walk reads. */
export type ListingEntry = Pick<Deno.DirEntry, "name" | "isFile" | "isDirectory" | "isSymlink">;

/** Options of one {@link SubtreeWalker} call. */
export interface SubtreeWalkOptions {
  /**
   * List only directories and the entries whose name matches this `find -name` pattern (only
   * given when it matches exactly the names the glob's last segment matches).
   */
  readonly name?: string;
  /** Stops the walk: the child is killed and the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * Lists every directory below the given absolute directories (not following symlinks below
 * them; a start that is a symlink to a directory is followed), keyed by absolute path, each
 * start included. `null` when the listing cannot be had (the caller walks with `readDir`).
 */
export type SubtreeWalker = (
  starts: readonly string[],
  opts: SubtreeWalkOptions,
) => Promise<Map<string, ListingEntry[]> | null>;

/**
 * Where GNU find is looked for: system directories only, never `PATH` (which the agent's
 * commands may change), like the `rg` binary Grep runs from kimi's own dependencies.
 */
export const FIND_CANDIDATES: readonly string[] = ["/usr/bin/find", "/bin/find"];

/**
 * Most entries listed by one walk. Past it the child is killed and the caller falls back to the
 * `readDir` walk (which would keep as much in memory); 2,000,000 entries hold some 200 MB.
 */
export const MAX_WALK_ENTRIES = 2_000_000;

/**
 * The `find` binary to run: the first of {@link FIND_CANDIDATES} that is a regular executable
 * file owned by root and writable by no one else. `null` when there is none (or it cannot be
 * inspected in this run).
 */
export function findFindBinary(candidates: readonly string[] = FIND_CANDIDATES): string | null {
  for (const path of candidates) {
    try {
      const st = Deno.statSync(path);
      if (!st.isFile || st.uid !== 0 || st.mode === null) continue;
      if ((st.mode & 0o022) !== 0 || (st.mode & 0o111) === 0) continue;
      return path;
    } catch {
      // Not there, or not readable in this run: try the next.
    }
  }
  return null;
}

function entryOf(type: string, name: string): ListingEntry {
  return {
    name,
    isFile: type === "f",
    isDirectory: type === "d",
    isSymlink: type === "l",
  };
}

/**
 * Whether this run may read every path (then `readDir` can be refused nowhere); otherwise each
 * listed directory is checked as `readDir` would check it.
 */
function readsEverything(): boolean {
  const st = Deno.permissions.querySync({ name: "read" });
  return st.state === "granted" && !st.partial;
}

function readDirOrEmpty(path: string): ListingEntry[] {
  try {
    return Array.from(Deno.readDirSync(path));
  } catch {
    return [];
  }
}

/**
 * Make the listings what `Deno.readDirSync` would have returned: a directory this run may not
 * read lists nothing, and a directory whose path was not valid UTF-8 (decoded with U+FFFD,
 * which `readDir` cannot open either) is read through `readDir` itself.
 */
function asReadDirWould(listings: Map<string, ListingEntry[]>): void {
  const all = readsEverything();
  for (const dir of listings.keys()) {
    if (dir.includes("\uFFFD")) {
      listings.set(dir, readDirOrEmpty(dir));
    } else if (
      !all && Deno.permissions.querySync({ name: "read", path: dir }).state !== "granted"
    ) {
      listings.set(dir, []);
    }
  }
}

/**
 * A {@link SubtreeWalker} running GNU find at `findPath` (`find -H <starts> -mindepth 1
 * [( -type d -o -name <name> )] -printf '%y%p\0'`, in the C locale, with no other environment),
 * reading its NUL-separated output as it streams. Any failure (it cannot start, its exit status
 * is not 0 (an unreadable directory included), or it lists more than `maxEntries`, by default
 * {@link MAX_WALK_ENTRIES}) gives `null`. An abort kills it.
 */
export function findWalker(
  findPath: string,
  limits: { maxEntries?: number } = {},
): SubtreeWalker {
  const maxEntries = limits.maxEntries ?? MAX_WALK_ENTRIES;
  return async (starts, opts) => {
    opts.signal?.throwIfAborted();
    if (starts.length === 0) return new Map();
    if (starts.some((s) => !s.startsWith("/"))) return null;
    const args = ["-H", ...starts, "-mindepth", "1"];
    if (opts.name !== undefined) args.push("(", "-type", "d", "-o", "-name", opts.name, ")");
    args.push("-printf", "%y%p\\0");
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(findPath, {
        args,
        clearEnv: true,
        env: { LC_ALL: "C" },
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).spawn();
    } catch {
      return null; // missing, or not allowed after all
    }
    const kill = () => {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    };
    opts.signal?.addEventListener("abort", kill, { once: true });
    const listings = new Map<string, ListingEntry[]>();
    for (const s of starts) listings.set(s, []);
    let count = 0;
    let complete = true;
    const decoder = new TextDecoder();
    let carry = "";
    const take = (record: string) => {
      const path = record.slice(1);
      const slash = path.lastIndexOf("/");
      const parent = slash === 0 ? "/" : path.slice(0, slash);
      const entry = entryOf(record[0], path.slice(slash + 1));
      let list = listings.get(parent);
      if (list === undefined) {
        list = [];
        listings.set(parent, list);
      }
      list.push(entry);
      if (entry.isDirectory && !listings.has(path)) listings.set(path, []);
    };
    const reader = child.stdout.getReader();
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        const text = carry + decoder.decode(value, { stream: true });
        const records = text.split("\0");
        carry = records.pop()!;
        count += records.length;
        if (count > maxEntries) {
          complete = false;
          kill();
          await reader.cancel();
          break;
        }
        for (const r of records) take(r);
      }
    } catch {
      complete = false; // the child was killed mid-read
    } finally {
      reader.releaseLock();
      const status = await child.status;
      opts.signal?.removeEventListener("abort", kill);
      complete &&= status.success && carry + decoder.decode() === "";
    }
    opts.signal?.throwIfAborted();
    if (!complete) return null;
    asReadDirWould(listings);
    return listings;
  };
}
