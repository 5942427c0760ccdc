/**
 * A directory listing as Glob's walk reads it: the entries' names and kinds in two parallel
 * arrays. A listing of a big tree holds one string and one small integer per entry, where an
 * object per entry (`Deno.DirEntry`'s shape) cost an allocation each and about doubled what the
 * garbage collector copies while the walk runs (the listings stay alive until it ends).
 *
 * @module
 */

/**
 * An entry's kind: the character code of GNU find's `%y` letter. `f` a regular file, `d` a
 * directory, `l` a symlink (not followed); any other code (find's `p`, `s`, `c`, `b`, …, or
 * {@link KIND_OTHER} from `readDir`) is none of them.
 */
export type EntryKind = number;

/** A regular file (`f`). */
export const KIND_FILE: EntryKind = 0x66;
/** A directory (`d`). */
export const KIND_DIR: EntryKind = 0x64;
/** A symlink, not followed (`l`). */
export const KIND_LINK: EntryKind = 0x6c;
/** Anything else `readDir` reports (a fifo, a socket, a device). */
export const KIND_OTHER: EntryKind = 0;

/** One directory's entries: `names[i]` is of kind `kinds[i]`. */
export interface Listing {
  /** The entries' names, in the order they were listed. */
  readonly names: string[];
  /** Each name's {@link EntryKind}. */
  readonly kinds: EntryKind[];
}

/** A new listing with no entries. */
export function emptyListing(): Listing {
  return { names: [], kinds: [] };
}

/** The kind of a `Deno.DirEntry` (as `readDir` reports it, a symlink not followed). */
export function kindOf(e: Pick<Deno.DirEntry, "isFile" | "isDirectory" | "isSymlink">): EntryKind {
  return e.isDirectory ? KIND_DIR : e.isSymlink ? KIND_LINK : e.isFile ? KIND_FILE : KIND_OTHER;
}

/** The listing of `path` read with `Deno.readDirSync` (empty when it cannot be read). */
export function readListingSync(path: string): Listing {
  const listing = emptyListing();
  try {
    for (const e of Deno.readDirSync(path)) {
      listing.names.push(e.name);
      listing.kinds.push(kindOf(e));
    }
  } catch {
    // Not readable (or gone): an empty listing, as `readDir` gives nothing.
    listing.names.length = 0;
    listing.kinds.length = 0;
  }
  return listing;
}
