/**
 * The compact two-level directory tree given to the model as `${KIMI_WORK_DIR_LS}` (and per
 * additional directory in `${KIMI_ADDITIONAL_DIRS_INFO}`).
 *
 * Format: root entries sorted directories first, then by name; at most
 * {@link ROOT_ENTRY_LIMIT} of them, then `└── ... and N more entries`. Each root directory is
 * expanded one level with at most {@link CHILD_ENTRY_LIMIT} children, then
 * `└── ... and N more`. Directories end with `/`. A directory that cannot be read shows
 * `└── [not readable]`; an empty root gives `(empty directory)`.
 *
 * ```
 * ├── adir/
 * │   └── inside.txt
 * ├── emptydir/
 * └── regular.txt
 * ```
 *
 * @module
 */
import { join } from "node:path";

/** Most root entries listed. */
export const ROOT_ENTRY_LIMIT = 30;
/** Most children listed under each root directory. */
export const CHILD_ENTRY_LIMIT = 10;

interface Entry {
  name: string;
  isDir: boolean;
}

/** Code-point order, like Python's string comparison. */
function compareNames(a: string, b: string): number {
  const ca = Array.from(a);
  const cb = Array.from(b);
  const n = Math.min(ca.length, cb.length);
  for (let i = 0; i < n; i++) {
    const d = ca[i].codePointAt(0)! - cb[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}

/**
 * All entries of `dir`, sorted directories first then by name, cut to `limit`, plus the total.
 * Symlinks are followed to decide whether an entry is a directory; a broken link is a file.
 * Throws when `dir` itself cannot be read.
 */
async function collectEntries(
  dir: string,
  limit: number,
): Promise<{ entries: Entry[]; total: number }> {
  const all: Entry[] = [];
  for await (const e of Deno.readDir(dir)) {
    let isDir = e.isDirectory;
    if (e.isSymlink) {
      try {
        isDir = (await Deno.stat(join(dir, e.name))).isDirectory;
      } catch {
        isDir = false;
      }
    }
    all.push({ name: e.name, isDir });
  }
  all.sort((a, b) => a.isDir === b.isDir ? compareNames(a.name, b.name) : a.isDir ? -1 : 1);
  return { entries: all.slice(0, limit), total: all.length };
}

/**
 * The two-level tree of `dir` (see the module doc for the exact format). Never throws: an
 * unreadable `dir` yields `[not readable]`.
 */
export async function listWorkDir(dir: string): Promise<string> {
  let root: { entries: Entry[]; total: number };
  try {
    root = await collectEntries(dir, ROOT_ENTRY_LIMIT);
  } catch {
    return "[not readable]";
  }
  const lines: string[] = [];
  const remaining = root.total - root.entries.length;
  for (const [i, entry] of root.entries.entries()) {
    const isLast = i === root.entries.length - 1 && remaining === 0;
    const connector = isLast ? "└── " : "├── ";
    if (!entry.isDir) {
      lines.push(`${connector}${entry.name}`);
      continue;
    }
    lines.push(`${connector}${entry.name}/`);
    const prefix = isLast ? "    " : "│   ";
    let children: { entries: Entry[]; total: number };
    try {
      children = await collectEntries(join(dir, entry.name), CHILD_ENTRY_LIMIT);
    } catch {
      lines.push(`${prefix}└── [not readable]`);
      continue;
    }
    const childRemaining = children.total - children.entries.length;
    for (const [j, child] of children.entries.entries()) {
      const childLast = j === children.entries.length - 1 && childRemaining === 0;
      lines.push(`${prefix}${childLast ? "└── " : "├── "}${child.name}${child.isDir ? "/" : ""}`);
    }
    if (childRemaining > 0) lines.push(`${prefix}└── ... and ${childRemaining} more`);
  }
  if (remaining > 0) lines.push(`└── ... and ${remaining} more entries`);
  return lines.length > 0 ? lines.join("\n") : "(empty directory)";
}
