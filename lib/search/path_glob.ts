/**
 * Glob matching with Python `pathlib.Path.glob` semantics (Python 3.13, POSIX): `*`, `?` and
 * `[...]` within one path segment, hidden files matched, `**` as a whole segment matching zero or
 * more directories without following symlinked directories, a pattern ending in `**` yielding
 * files and directories, and a trailing `/` selecting directories only.
 *
 * @module
 */
import { isPresent, pathStatusSync } from "../fs/exists.ts";
import { join } from "node:path";
import { type EntrySink, readsEverything, type SubtreeWalker } from "./native_walk.ts";
import {
  type EntryKind,
  KIND_DIR,
  KIND_FILE,
  KIND_LINK,
  type Listing,
  readListingSync,
} from "./listing.ts";

/** Options of {@link pathGlob}. */
export interface PathGlobOptions {
  /** Stops the walk (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Return regular files only (symlinks count by their target, like `Path.is_file()`). */
  filesOnly?: boolean;
  /**
   * Filled with the results whose last component is a symlink, or not known from the walk to
   * be none (the others are plain entries of their directory as it was listed).
   */
  linked?: Set<string>;
  /**
   * Filled with the absolute paths of the directories a `**` descended into below its start:
   * each was listed by its parent's listing as a directory that is no symlink, so its real path
   * is its parent's real path with its name, as far as the walk could see (the same trust the
   * results' plain entries get, see {@link linked}).
   */
  plainDirs?: Set<string>;
  /**
   * Lists the subtrees a `**` walks in one pass (a native walker); when absent, or when it
   * gives nothing, the directories are read one by one with `Deno.readDirSync`. The results
   * are the same either way.
   */
  walker?: SubtreeWalker;
  /**
   * Judges each result as it is found (instead of the caller filtering the list after): a
   * refused result is left out of the list. Plain entries (listed as no symlink) of a
   * directory are judged together, once per directory.
   */
  judge?: ResultJudge;
  /**
   * Collects the results instead of the list returned (which is then empty): a
   * {@link FirstPaths} keeps only the first ones in path order as they are found, so that a
   * walk of a big tree leaves none to sort when it ends.
   */
  into?: PathCollector;
}

/** Where {@link pathGlob} puts its results (see {@link PathGlobOptions.into}). */
export interface PathCollector {
  /** Paths collected so far. */
  readonly length: number;
  /** Collect one result. */
  push(path: string): void;
  /** Forget every result collected (a walk that failed is redone another way). */
  clear(): void;
}

/** How {@link pathGlob} asks the caller which results to keep (see {@link PathGlobOptions}). */
export interface ResultJudge {
  /**
   * Whether every plain entry of the absolute directory `dir` (an entry its listing showed as
   * no symlink) is kept as it is. Asked at most once per directory holding such a result.
   */
  plainEntriesOk(dir: string): boolean;
  /**
   * Whether to keep the result `rel` (relative to the root) that the directory's answer did
   * not cover: `plainEntry` tells whether the walk listed its last component as no symlink.
   */
  keep(rel: string, plainEntry: boolean): boolean;
}

/** Translate one fnmatch segment (`*`, `?`, `[seq]`, `[!seq]`) to an anchored RegExp. */
export function fnmatchToRegExp(pattern: string): RegExp {
  let re = "";
  let i = 0;
  const n = pattern.length;
  while (i < n) {
    const c = pattern[i++];
    if (c === "*") {
      if (!re.endsWith(".*")) re += ".*";
    } else if (c === "?") {
      re += ".";
    } else if (c === "[") {
      let j = i;
      if (j < n && pattern[j] === "!") j++;
      if (j < n && pattern[j] === "]") j++;
      while (j < n && pattern[j] !== "]") j++;
      if (j >= n) {
        re += "\\[";
      } else {
        let stuff = pattern.slice(i, j).replaceAll("\\", "\\\\");
        i = j + 1;
        if (stuff.startsWith("!")) stuff = "^" + stuff.slice(1);
        else if (stuff.startsWith("^") || stuff.startsWith("[")) stuff = "\\" + stuff;
        re += `[${stuff}]`;
      }
    } else {
      re += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    }
  }
  return new RegExp(`^(?:${re})$`, "s");
}

function hasMagic(segment: string): boolean {
  return /[*?[]/.test(segment);
}

/**
 * A directory's entries (none when it cannot be read). Read synchronously: one call per
 * directory instead of one round trip per entry, which made the walk ten times slower than
 * `rg --files`; the walk yields to the event loop every {@link YIELD_EVERY} directories.
 */
const readDirUncached: (path: string) => Listing = readListingSync;

/** Directories read between two yields to the event loop (so an abort is seen promptly). */
const YIELD_EVERY = 64;
/** The same for directories already listed (by a native walker, or read before). */
const LISTED_YIELD_EVERY = 1024;

function entryIsDir(parent: string, name: string, kind: EntryKind): boolean {
  if (kind === KIND_DIR) return true;
  return kind === KIND_LINK ? pathStatusSync(join(parent, name)) === "directory" : false;
}

/**
 * The `find -name` pattern that matches exactly the names `segment` matches, or undefined. Only
 * printable ASCII with `*` as the one wildcard qualifies: `?`, `[...]` and `\\` differ between
 * Python's fnmatch and fnmatch(3) (locale, `[^...]`, escapes), and a non-ASCII literal could
 * meet a name that is not valid UTF-8. (`*` matches a leading `.` in both.)
 */
export function findNameFilter(segment: string): string | undefined {
  if (!/^[\x20-\x7e]+$/.test(segment) || /[?[\]\\]/.test(segment)) return undefined;
  return segment.includes("*") && !/^\**$/.test(segment) ? segment : undefined;
}

function rel(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/**
 * All paths below `root` matching `pattern`, relative to `root`, without duplicates, in walk
 * order. Throws for absolute or empty patterns (as pathlib does).
 */
export async function pathGlob(
  root: string,
  pattern: string,
  opts: PathGlobOptions = {},
): Promise<string[]> {
  if (pattern.startsWith("/")) throw new Error("Non-relative patterns are unsupported");
  const dirOnly = pattern.endsWith("/");
  const parts: string[] = [];
  for (const p of pattern.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "**" && parts[parts.length - 1] === "**") continue;
    parts.push(p);
  }
  if (parts.length === 0) throw new Error(`Unacceptable pattern: '${pattern}'`);

  // (Joined by hand where `join` has nothing to normalize: once per directory of a big tree.)
  const base = root.endsWith("/") ? root : root + "/";
  const abs = (r: string) => (r === "" ? root : r.includes("..") ? join(root, r) : base + r);
  const listings = new Map<string, Listing>();
  let reads = 0;
  let hits = 0;
  const readDir = async (path: string) => {
    let hit = listings.get(path);
    if (hit && ++hits % LISTED_YIELD_EVERY === 0) {
      await new Promise((r) => setTimeout(r, 0));
      opts.signal?.throwIfAborted();
    }
    if (!hit) {
      if (++reads % YIELD_EVERY === 0) {
        await new Promise((r) => setTimeout(r, 0));
        opts.signal?.throwIfAborted();
      }
      hit = readDirUncached(path);
      listings.set(path, hit);
    }
    return hit;
  };
  const list: string[] = [];
  const results: PathCollector = opts.into ?? {
    get length() {
      return list.length;
    },
    push: (path) => list.push(path),
    clear: () => list.length = 0,
  };
  const seen = new Set<string>();
  // Only a last `**` (walked from directories that may nest) can meet a path twice; else a
  // path is a directory's entry, unique, unless two names not valid UTF-8 decode alike.
  const dedupeAll = parts[parts.length - 1] === "**";
  const judge = opts.judge;
  /**
   * Per directory (relative): whether its plain entries are kept as they are (asked of the
   * judge once, when the first such entry matches; the last answer is kept at hand, as the
   * entries of a directory mostly come in a row).
   */
  let judgedDir: string | null = null;
  let judgedOk = false;
  const judgedDirs = new Map<string, boolean>();
  const plainOk = (dir: string) => {
    if (dir !== judgedDir) {
      let ok = judgedDirs.get(dir);
      if (ok === undefined) {
        ok = judge!.plainEntriesOk(abs(dir));
        judgedDirs.set(dir, ok);
      }
      judgedDir = dir;
      judgedOk = ok;
    }
    return judgedOk;
  };
  /**
   * Record a match; `kind` (the kind of an entry of the directory `dir` (relative) as listed,
   * when known) saves a stat for `filesOnly`.
   */
  const emit = (r: string, kind?: EntryKind, dir?: string) => {
    if (r === "") return;
    const dedupe = dedupeAll || r.includes("\uFFFD");
    if (dedupe && seen.has(r)) return;
    const plain = kind !== undefined && kind !== KIND_LINK;
    if (opts.filesOnly) {
      const file = plain ? kind === KIND_FILE : pathStatusSync(abs(r)) === "file";
      if (!file) return;
    }
    if (!plain) opts.linked?.add(r);
    if (dedupe) seen.add(r);
    if (
      judge && !(plain && dir !== undefined && plainOk(dir)) && !judge.keep(r, plain)
    ) return;
    results.push(r);
  };

  // The subtrees a native walker listed (absolute), and the name filter it may apply: only
  // when a single `**` is followed by one last segment, which alone reads its listings.
  const walked = new Set<string>();
  const stars = parts.filter((p) => p === "**").length;
  const nameFilter = stars === 1 && parts[parts.length - 2] === "**"
    ? findNameFilter(parts[parts.length - 1])
    : undefined;
  const isWalked = (a: string) => {
    for (let i = a.length; i > 0; i = a.lastIndexOf("/", i - 1)) {
      if (walked.has(i === a.length ? a : a.slice(0, i))) return true;
    }
    return walked.has("/");
  };
  /** Let the walker list the subtrees below `starts` (relative) that no walk listed yet. */
  const walkNatively = async (starts: string[]) => {
    // (A path decoded with U+FFFD cannot be opened by find either: `readDir` tries it.)
    const roots = [...new Set(starts.map(abs))]
      .filter((a) => !isWalked(a) && !a.includes("\uFFFD"))
      .sort();
    const top = new Set<string>();
    const fresh = roots.filter((a) => {
      for (let i = a.lastIndexOf("/"); i > 0; i = a.lastIndexOf("/", i - 1)) {
        if (top.has(a.slice(0, i))) return false;
      }
      if (top.has("/") && a !== "/") return false;
      top.add(a);
      return true;
    });
    if (fresh.length === 0) return;
    const got = await opts.walker!(fresh, { name: nameFilter, signal: opts.signal });
    if (got === null) return;
    for (const [path, entries] of got) {
      if (!listings.has(path)) listings.set(path, entries);
    }
    for (const a of fresh) walked.add(a);
  };

  /**
   * A `**` from `starts` followed by the last segment `last` (with a wildcard) in one pass:
   * the walker's entries are matched against `last` as they stream, with no listing kept,
   * giving what the walk over the listings gives (the same entries reached, matched and
   * judged; only their order differs, and the results are sorted). A directory this run may
   * not read lists nothing, as with `readDir`; a directory whose path is not valid UTF-8 is
   * left to the `readDir` walk, as the listings leave it: those are returned, to be walked
   * from. `null` when the starts overlap
   * (a path could be met twice: nothing was done), `false` when the walker failed (nothing
   * was emitted).
   */
  const streamLast = async (starts: string[], last: string): Promise<string[] | false | null> => {
    const absStarts = starts.map(abs);
    const set = new Set(absStarts);
    if (set.size !== absStarts.length) return null;
    for (const a of absStarts) {
      if (a.includes("\uFFFD") || (a !== "/" && set.has("/"))) return null;
      for (let i = a.lastIndexOf("/"); i > 0; i = a.lastIndexOf("/", i - 1)) {
        if (set.has(a.slice(0, i))) return null;
      }
    }
    // A match's relative path is cut from the entry's absolute one where that is the root's
    // path, a slash and the relative path (no `..` to normalize).
    const sliced = starts.every((d, i) => absStarts[i] === (d === "" ? root : base + d));
    const re = fnmatchToRegExp(last);
    const all = readsEverything();
    const readable = (dir: string) =>
      all || Deno.permissions.querySync({ name: "read", path: dir }).state === "granted";
    /** A directory reached, and whether its entries are (`open`: readable as `readDir` reads). */
    interface Reached {
      readonly rel: string;
      readonly open: boolean;
    }
    const closed: Reached = { rel: "", open: false };
    const reached = new Map<string, Reached>();
    starts.forEach((d, i) => reached.set(absStarts[i], { rel: d, open: readable(absStarts[i]) }));
    // A plain entry of a directory whose plain entries are all kept goes straight into the
    // results (nothing else to undo should the walk fail, and nothing was found before the
    // last segment); the others, which the judge is asked about one by one, wait for the walk
    // to succeed.
    if (results.length !== 0) return null;
    const filesOnly = opts.filesOnly === true;
    const found: string[] = [];
    const foundKinds: EntryKind[] = [];
    const foundIn: string[] = [];
    const dirsAdded: string[] = [];
    const left: string[] = [];
    let parentAbs = "\0"; // no directory (every path starts with "/")
    let parent: Reached | undefined;
    // Whether the text of the records may hold a U+FFFD (scanned once per text, not per record).
    let lastText = "";
    let textOdd = false;
    const sink: EntrySink = (text, start, end, named) => {
      if (text !== lastText) {
        lastText = text;
        textOdd = text.includes("\uFFFD");
      }
      const slash = text.lastIndexOf("/", end - 1);
      if (slash - start !== parentAbs.length + 1 || !text.startsWith(parentAbs, start + 1)) {
        parentAbs = slash === start + 1 ? "/" : text.slice(start + 1, slash);
        parent = reached.get(parentAbs);
      }
      const kind = text.charCodeAt(start);
      if (parent === undefined || !parent.open) {
        if (kind === KIND_DIR) reached.set(text.slice(start + 1, end), closed);
        return;
      }
      let r: string | undefined;
      if (kind === KIND_DIR) {
        const name = text.slice(slash + 1, end);
        const path = text.slice(start + 1, end);
        r = rel(parent.rel, name);
        if (opts.plainDirs && !opts.plainDirs.has(path)) {
          opts.plainDirs.add(path);
          dirsAdded.push(path);
        }
        if (textOdd && path.includes("\uFFFD")) {
          left.push(r);
          reached.set(path, closed);
        } else {
          reached.set(path, { rel: r, open: readable(path) });
        }
        if (!re.test(name) || (dirOnly && !entryIsDir(parentAbs, name, kind))) return;
      } else if (!named || dirOnly) {
        // (Other entries find listed by `-name` match already: nothing to cut or test.)
        const name = text.slice(slash + 1, end);
        if (!re.test(name) || (dirOnly && !entryIsDir(parentAbs, name, kind))) return;
        if (!sliced) r = rel(parent.rel, name);
      }
      if (filesOnly && kind !== KIND_FILE && kind !== KIND_LINK) return;
      r ??= sliced
        ? text.slice(start + 1 + base.length, end)
        : rel(parent.rel, text.slice(slash + 1, end));
      if (
        kind !== KIND_LINK && (judge === undefined || plainOk(parent.rel)) &&
        !(textOdd && r.includes("\uFFFD"))
      ) {
        results.push(r);
      } else {
        found.push(r);
        foundKinds.push(kind);
        foundIn.push(parent.rel);
      }
    };
    const got = await opts.walker!(absStarts, { name: nameFilter, signal: opts.signal, sink });
    if (got === null) {
      results.clear();
      for (const p of dirsAdded) opts.plainDirs?.delete(p);
      return false;
    }
    for (let i = 0; i < found.length; i++) emit(found[i], foundKinds[i], foundIn[i]);
    return left;
  };

  let dirs: string[] = [""];
  for (let k = 0; k < parts.length; k++) {
    opts.signal?.throwIfAborted();
    const seg = parts[k];
    const last = k === parts.length - 1;
    const next: string[] = [];
    const nextSeen = new Set<string>();
    const addDir = (r: string) => {
      if (!nextSeen.has(r)) {
        nextSeen.add(r);
        next.push(r);
      }
    };
    if (seg === "**") {
      let native = opts.walker !== undefined;
      if (native && stars === 1 && k === parts.length - 2 && hasMagic(parts[k + 1])) {
        const left = await streamLast(dirs, parts[k + 1]);
        if (left !== null) {
          // Done but for the directories left to `readDir`, walked as usual; or the walker
          // failed (it would fail again listing the same tree): all is walked with `readDir`.
          if (left !== false) dirs = left;
          native = false;
        }
      }
      if (native) await walkNatively(dirs);
      for (const d of dirs) {
        if (last) emit(d);
        else addDir(d);
        const stack = [d];
        while (stack.length > 0) {
          opts.signal?.throwIfAborted();
          const cur = stack.pop()!;
          const { names, kinds } = await readDir(abs(cur));
          for (let i = 0; i < names.length; i++) {
            const kind = kinds[i];
            if (kind === KIND_DIR) {
              const r = rel(cur, names[i]);
              stack.push(r);
              opts.plainDirs?.add(abs(r));
              if (last) emit(r, kind, cur);
              else addDir(r);
            } else if (last && (!dirOnly || entryIsDir(abs(cur), names[i], kind))) {
              emit(rel(cur, names[i]), kind, cur);
            }
          }
        }
      }
    } else if (hasMagic(seg)) {
      const re = fnmatchToRegExp(seg);
      for (const d of dirs) {
        const { names, kinds } = await readDir(abs(d));
        for (let i = 0; i < names.length; i++) {
          const name = names[i];
          if (!re.test(name)) continue;
          const r = rel(d, name);
          if (last) {
            if (!dirOnly || entryIsDir(abs(d), name, kinds[i])) emit(r, kinds[i], d);
          } else if (entryIsDir(abs(d), name, kinds[i])) {
            addDir(r);
          }
        }
      }
    } else {
      for (const d of dirs) {
        const r = rel(d, seg);
        if (last) {
          if (
            dirOnly
              ? pathStatusSync(abs(r)) === "directory"
              : isPresent(pathStatusSync(abs(r), { noFollow: true }))
          ) emit(r);
        } else if (pathStatusSync(abs(r)) === "directory") {
          addDir(r);
        }
      }
    }
    dirs = next;
  }
  return list;
}

/**
 * Compare two relative paths segment by segment (like sorting `pathlib` paths): the same order
 * as comparing the `/`-split parts, computed without splitting (a `/` sorts before any other
 * character, and a path sorts before the paths it is a prefix of).
 */
export function comparePathParts(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    if (ca === SLASH) return -1;
    if (cb === SLASH) return 1;
    return ca < cb ? -1 : 1;
  }
  return a.length - b.length;
}

const SLASH = 47;

/**
 * Collects paths and keeps the `k` first of them in {@link comparePathParts} order as they
 * come, counting them all: as {@link firstPaths} over all the paths, but with most of the
 * work done while they are being found. The paths are buffered; whenever `2k` wait, the `k`
 * first are selected (a quickselect) and the greatest of them becomes a limit that turns
 * every later path past it away with one comparison.
 */
export class FirstPaths implements PathCollector {
  readonly #k: number;
  #buffer: string[] = [];
  /** The `k`-th path of those kept (none until `k` were kept). */
  #limit: string | undefined;
  #total = 0;

  /** Keep the `k` first paths. */
  constructor(k: number) {
    this.#k = Math.max(0, k);
  }

  /** Paths collected, kept or not. */
  get length(): number {
    return this.#total;
  }

  /** Collect `path`. */
  push(path: string): void {
    this.#total++;
    if (this.#limit !== undefined && comparePathParts(path, this.#limit) >= 0) return;
    if (this.#k === 0) return;
    this.#buffer.push(path);
    if (this.#buffer.length >= 2 * this.#k) {
      selectFirst(this.#buffer, this.#k);
      this.#buffer.length = this.#k;
      this.#limit = this.#buffer[this.#k - 1];
    }
  }

  /** Forget every path collected. */
  clear(): void {
    this.#buffer = [];
    this.#limit = undefined;
    this.#total = 0;
  }

  /** The kept paths (the `k` first of all collected), sorted. */
  sorted(): string[] {
    return firstPaths([...this.#buffer], this.#k);
  }
}

/**
 * The `k` first of `paths` in {@link comparePathParts} order (all of them, sorted, when there
 * are no more than `k`), without sorting the rest: a quickselect puts the `k` first in front,
 * then only those are sorted. Reorders `paths`.
 */
export function firstPaths(paths: string[], k: number): string[] {
  if (paths.length <= k) return paths.sort(comparePathParts);
  if (k <= 0) return [];
  selectFirst(paths, k);
  return paths.slice(0, k).sort(comparePathParts);
}

/**
 * Reorder `paths` (more than `k >= 1`) so that the `k` first in {@link comparePathParts}
 * order come first, the `k`-th of them at index `k - 1` (a quickselect; they are not sorted).
 */
function selectFirst(paths: string[], k: number): void {
  const target = k - 1;
  let lo = 0;
  let hi = paths.length - 1;
  while (lo < hi) {
    const mid = lo + ((hi - lo) >> 1);
    const [a, b, c] = [paths[lo], paths[mid], paths[hi]];
    const pivot = comparePathParts(a, b) < 0
      ? (comparePathParts(b, c) < 0 ? b : comparePathParts(a, c) < 0 ? c : a)
      : (comparePathParts(a, c) < 0 ? a : comparePathParts(b, c) < 0 ? c : b);
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (comparePathParts(paths[i], pivot) < 0) i++;
      while (comparePathParts(paths[j], pivot) > 0) j--;
      if (i <= j) {
        const t = paths[i];
        paths[i++] = paths[j];
        paths[j--] = t;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
}
