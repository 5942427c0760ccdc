/**
 * A two-level tree listing of a directory (the work-dir listing the model gets): root entries
 * directories first then by name, at most 30, each root directory expanded with at most 10
 * children.
 *
 * @module
 */
import { join } from "node:path";

/** Root entries shown before `... and N more entries`. */
export const TREE_MAX_ROOT_ENTRIES = 30;
/** Children shown under a root directory before `... and N more`. */
export const TREE_MAX_CHILDREN = 10;

interface Entry {
  name: string;
  isDir: boolean;
}

function isDirEntry(dir: string, e: Deno.DirEntry): boolean {
  if (e.isDirectory) return true;
  if (!e.isSymlink) return false;
  try {
    return Deno.statSync(join(dir, e.name)).isDirectory;
  } catch {
    return false;
  }
}

function readSorted(dir: string): Entry[] {
  const entries = [...Deno.readDirSync(dir)].map((e) => ({
    name: e.name,
    isDir: isDirEntry(dir, e),
  }));
  return entries.sort((a, b) =>
    a.isDir !== b.isDir ? (a.isDir ? -1 : 1) : a.name < b.name ? -1 : a.name > b.name ? 1 : 0
  );
}

/**
 * Render the tree of `dir`. Unreadable subdirectories show `[not readable]`; an empty
 * directory renders as `(empty directory)`.
 */
export function listDirectoryTree(dir: string): string {
  let roots: Entry[];
  try {
    roots = readSorted(dir);
  } catch {
    return "[not readable]";
  }
  if (roots.length === 0) return "(empty directory)";
  const lines: string[] = [];
  const shown = roots.slice(0, TREE_MAX_ROOT_ENTRIES);
  const hiddenRoots = roots.length - shown.length;
  shown.forEach((entry, idx) => {
    const last = idx === shown.length - 1 && hiddenRoots === 0;
    lines.push(`${last ? "└── " : "├── "}${entry.name}${entry.isDir ? "/" : ""}`);
    if (!entry.isDir) return;
    const prefix = last ? "    " : "│   ";
    let children: Entry[];
    try {
      children = readSorted(join(dir, entry.name));
    } catch {
      lines.push(`${prefix}└── [not readable]`);
      return;
    }
    const kids = children.slice(0, TREE_MAX_CHILDREN);
    const hiddenKids = children.length - kids.length;
    kids.forEach((child, cidx) => {
      const lastKid = cidx === kids.length - 1 && hiddenKids === 0;
      lines.push(`${prefix}${lastKid ? "└── " : "├── "}${child.name}${child.isDir ? "/" : ""}`);
    });
    if (hiddenKids > 0) lines.push(`${prefix}└── ... and ${hiddenKids} more`);
  });
  if (hiddenRoots > 0) lines.push(`└── ... and ${hiddenRoots} more entries`);
  return lines.join("\n");
}
