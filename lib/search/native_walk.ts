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

import {
  emptyListing,
  type EntryKind,
  KIND_DIR,
  type Listing,
  readListingSync,
} from "./listing.ts";

/** Options of one {@link SubtreeWalker} call. */
export interface SubtreeWalkOptions {
  /**
   * List only directories and the entries whose name matches this `find -name` pattern (only
   * given when it matches exactly the names the glob's last segment matches).
   */
  readonly name?: string;
  /** Stops the walk: the child is killed and the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * Receive the entries as they stream instead of listings: the walk then returns an empty
   * map when it listed everything (`null` as always when it could not: what the sink got so
   * far is then to be thrown away). See {@link EntrySink}.
   */
  readonly sink?: EntrySink;
}

/**
 * Receives one listed entry: `text.slice(start + 1, end)` is its absolute path (below a start,
 * or a start's own entry), `text.charCodeAt(start)` its {@link EntryKind}; `named`: find
 * listed it under the walk's `name` pattern, so that, unless it is a directory, its name
 * matches the pattern (an entry the walker read itself is not `named`). A directory comes
 * before its entries; the entries below one start come in the order one find lists them
 * (those below different starts may interleave). Nothing is made what `readDir` would have
 * returned (a directory this run may not read, a path not valid UTF-8): that is the sink's to
 * do.
 */
export type EntrySink = (text: string, start: number, end: number, named: boolean) => void;

/**
 * Lists every directory below the given absolute directories (not following symlinks below
 * them; a start that is a symlink to a directory is followed), keyed by absolute path, each
 * start included. `null` when the listing cannot be had (the caller walks with `readDir`).
 */
export type SubtreeWalker = (
  starts: readonly string[],
  opts: SubtreeWalkOptions,
) => Promise<Map<string, Listing> | null>;

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

/**
 * Whether this run may read every path (then `readDir` can be refused nowhere); otherwise each
 * listed directory is checked as `readDir` would check it.
 */
export function readsEverything(): boolean {
  const st = Deno.permissions.querySync({ name: "read" });
  return st.state === "granted" && !st.partial;
}

/**
 * Make the listings what `Deno.readDirSync` would have returned: a directory this run may not
 * read lists nothing, and a directory whose path was not valid UTF-8 (decoded with U+FFFD,
 * which `readDir` cannot open either) is read through `readDir` itself.
 */
function asReadDirWould(listings: Map<string, Listing>): void {
  const all = readsEverything();
  for (const dir of listings.keys()) {
    if (dir.includes("\uFFFD")) {
      listings.set(dir, readListingSync(dir));
    } else if (
      !all && Deno.permissions.querySync({ name: "read", path: dir }).state !== "granted"
    ) {
      listings.set(dir, emptyListing());
    }
  }
}

/** Where one walk's finds put what they list (shared by the finds of one walk). */
interface WalkSink {
  readonly listings: Map<string, Listing>;
  /** Entries listed so far, by all finds of the walk. */
  count: number;
  readonly maxEntries: number;
}

/**
 * Run one find over `starts` into `sink`; whether it listed them completely. `stop` kills it
 * (an abort, or another find of the walk failing).
 */
async function runFind(
  findPath: string,
  starts: readonly string[],
  name: string | undefined,
  sink: WalkSink,
  stop: AbortSignal,
  entries: EntrySink | undefined,
): Promise<boolean> {
  const args = ["-H", ...starts, "-mindepth", "1"];
  if (name !== undefined) args.push("(", "-type", "d", "-o", "-name", name, ")");
  args.push("-printf", "%y%p\\0");
  if (stop.aborted) return false;
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
    return false; // missing, or not allowed after all
  }
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  };
  stop.addEventListener("abort", kill, { once: true });
  const { listings } = sink;
  if (!entries) {
    for (const s of starts) if (!listings.has(s)) listings.set(s, emptyListing());
  }
  let complete = true;
  const decoder = new TextDecoder();
  let carry = "";
  // A record is the type letter and the absolute path, ended by a NUL. Records are read in
  // place from the decoded text (only the name, and a directory's path, are cut out of it).
  // Records of one directory come in a row: its listing is looked up again only when the
  // directory changes.
  let parent = "\0"; // no directory (every path starts with "/")
  let list: Listing = emptyListing();
  const named = name !== undefined;
  /** Take the record `text[start, end)` (into the sink given, or the listings). */
  const take: EntrySink = entries ?? ((text: string, start: number, end: number) => {
    const slash = text.lastIndexOf("/", end - 1);
    if (slash - start !== parent.length + 1 || !text.startsWith(parent, start + 1)) {
      parent = slash === start + 1 ? "/" : text.slice(start + 1, slash);
      let known = listings.get(parent);
      if (known === undefined) {
        known = emptyListing();
        listings.set(parent, known);
      }
      list = known;
    }
    const kind = text.charCodeAt(start);
    list.names.push(text.slice(slash + 1, end));
    list.kinds.push(kind);
    if (kind === KIND_DIR) {
      const path = text.slice(start + 1, end);
      if (!listings.has(path)) listings.set(path, emptyListing());
    }
  });
  const reader = child.stdout.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      // The record cut by the chunk before is completed on its own (the chunk's text is not
      // copied into one with it).
      let start = 0;
      let end = text.indexOf("\0");
      if (carry !== "" && end !== -1) {
        const record = carry + text.slice(0, end);
        carry = "";
        start = end + 1;
        end = text.indexOf("\0", start);
        if (++sink.count > sink.maxEntries) end = -2;
        else take(record, 0, record.length, named);
      }
      for (; end >= 0; end = text.indexOf("\0", start)) {
        if (++sink.count > sink.maxEntries) {
          end = -2;
          break;
        }
        take(text, start, end, named);
        start = end + 1;
      }
      if (end === -2) {
        complete = false;
        kill();
        await reader.cancel();
        break;
      }
      carry = carry + (start === 0 ? text : text.slice(start));
    }
  } catch {
    complete = false; // killed mid-read
  } finally {
    reader.releaseLock();
    const status = await child.status;
    stop.removeEventListener("abort", kill);
    complete &&= status.success && carry + decoder.decode() === "";
  }
  return complete;
}

/**
 * Share the subdirectories `subs` among at most `processes` finds so that each gets about the
 * same work: the largest first, each to the find with the least so far. A directory's size is
 * guessed from its link count (2 + its subdirectories on most file systems; 1 where the file
 * system does not count them, which makes every guess equal): a directory of 10,000 symlinks
 * and one holding 100 directories of files are then not taken for the same work, as a
 * round-robin over the listing's order took them (one find could get most of a tree).
 */
export function shareSubtrees(subs: readonly string[], processes: number): string[][] {
  const groups: string[][] = Array.from({ length: Math.min(processes, subs.length) }, () => []);
  if (groups.length === 0) return groups;
  const weighed = subs.map((path) => {
    let nlink = 1;
    try {
      nlink = Deno.lstatSync(path).nlink ?? 1;
    } catch {
      // gone or unreadable: find will say so
    }
    return { path, weight: Math.max(1, nlink) };
  });
  weighed.sort((a, b) => b.weight - a.weight || (a.path < b.path ? -1 : 1));
  const loads = groups.map(() => 0);
  for (const { path, weight } of weighed) {
    let least = 0;
    for (let i = 1; i < loads.length; i++) if (loads[i] < loads[least]) least = i;
    groups[least].push(path);
    loads[least] += weight;
  }
  return groups;
}

/** Give `sink` the entry at `path` of kind `kind` (an entry the walker read itself). */
function sinkEntry(sink: EntrySink, kind: EntryKind, path: string): void {
  const record = String.fromCharCode(kind === 0 ? 0x3f : kind) + path;
  sink(record, 0, record.length, false);
}

/** Finds one walk runs at once: one per core, at most 4. */
function defaultProcesses(): number {
  return Math.max(1, Math.min(4, navigator.hardwareConcurrency ?? 1));
}

/**
 * A {@link SubtreeWalker} running GNU find at `findPath` (`find -H <starts> -mindepth 1
 * [( -type d -o -name <name> )] -printf '%y%p\0'`, in the C locale, with no other environment),
 * reading its NUL-separated output as it streams. A walk from one directory reads that
 * directory itself and shares its subdirectories among `processes` finds running at once (as
 * `rg` walks in parallel threads; default one per core, at most 4). Any failure (a find cannot
 * start, its exit status is not 0 (an unreadable directory included), or the walk lists more
 * than `maxEntries`, by default {@link MAX_WALK_ENTRIES}) gives `null` and kills the other
 * finds; an abort kills them all.
 */
export function findWalker(
  findPath: string,
  limits: { maxEntries?: number; processes?: number } = {},
): SubtreeWalker {
  const maxEntries = limits.maxEntries ?? MAX_WALK_ENTRIES;
  const processes = limits.processes ?? defaultProcesses();
  return async (starts, opts) => {
    opts.signal?.throwIfAborted();
    if (starts.some((s) => !s.startsWith("/"))) return null;
    const sink: WalkSink = { listings: new Map(), count: 0, maxEntries };
    let groups: string[][] = [[...starts]];
    if (processes > 1 && starts.length === 1) {
      // The start's own listing is read here, so its subdirectories can be walked at once.
      const top = starts[0];
      const listing = readListingSync(top);
      const subs: string[] = [];
      listing.names.forEach((name, i) => {
        const path = top === "/" ? `/${name}` : `${top}/${name}`;
        if (opts.sink) sinkEntry(opts.sink, listing.kinds[i], path);
        if (listing.kinds[i] === KIND_DIR && !name.includes("\uFFFD")) subs.push(path);
      });
      if (!opts.sink) sink.listings.set(top, listing);
      groups = shareSubtrees(subs, processes);
    }
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    let complete: boolean[];
    try {
      complete = await Promise.all(
        groups.filter((g) => g.length > 0).map(async (g) => {
          const ok = await runFind(findPath, g, opts.name, sink, stop.signal, opts.sink);
          if (!ok) stop.abort();
          return ok;
        }),
      );
    } finally {
      opts.signal?.removeEventListener("abort", onAbort);
    }
    opts.signal?.throwIfAborted();
    if (complete.includes(false)) return null;
    if (!opts.sink) asReadDirWould(sink.listings);
    return sink.listings;
  };
}
