/**
 * Resolving the path a file operation will really touch: the real path of the deepest existing
 * ancestor (every symlink and `..` resolved by the kernel) plus the components that do not
 * exist yet, refusing a dangling symlink among those (writing through it would create its
 * target, wherever that is). Used right before I/O, and again after an approval wait.
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import { isPermissionError } from "./exists.ts";

/** A path resolved to where it really leads. */
export interface RealPath {
  /** Always true. */
  ok: true;
  /** Absolute path without symlinks or `..` (the missing tail appended as given). */
  path: string;
}

/** A path that cannot be resolved safely. */
export interface UnresolvedPath {
  /** Always false. */
  ok: false;
  /**
   * `symlink`: a component that does not resolve is a dangling symlink; `permission`: this run
   * may not read a component, so where it leads is unknown.
   */
  reason: "symlink" | "permission";
  /** The component at fault (absolute). */
  at: string;
}

function lstatOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * Where `path` (absolute, or relative to `base`) really leads. Never follows a symlink that
 * does not resolve, and never guesses: a component this run may not read is reported.
 */
export function resolveRealPath(path: string, base = "/"): RealPath | UnresolvedPath {
  const abs = resolve(base, path);
  const tail: string[] = [];
  let cur = abs;
  while (true) {
    let real: string | null = null;
    try {
      real = Deno.realPathSync(cur);
    } catch (e) {
      if (isPermissionError(e)) return { ok: false, reason: "permission", at: cur };
      // NotFound / NotADirectory: this component (or one below it) is missing.
    }
    if (real !== null) {
      let p = real;
      for (const name of tail) {
        p = join(p, name);
        const st = lstatOrNull(p);
        if (st === null) break;
        if (st.isSymlink) return { ok: false, reason: "symlink", at: p };
      }
      return { ok: true, path: tail.length > 0 ? join(real, ...tail) : real };
    }
    const parent = dirname(cur);
    if (parent === cur) return { ok: true, path: abs };
    tail.unshift(cur.slice(parent === "/" ? 1 : parent.length + 1));
    cur = parent;
  }
}

/**
 * Whether an already resolved path still resolves to itself (no component has been swapped
 * for a symlink since it was resolved).
 */
export function stillResolvesTo(realPath: string): boolean {
  const again = resolveRealPath(realPath);
  return again.ok && again.path === realPath;
}

/** The identity of a file (device and inode) as it was when its path was checked. */
export interface FilePin {
  /** Device. */
  readonly dev: number;
  /** Inode (`null` where the platform has none: pinning then checks nothing). */
  readonly ino: number | null;
}

/** Thrown when a pinned file is opened and turns out to be another file. */
export class PathChangedError extends Error {
  /** Create the error for `path`. */
  constructor(readonly path: string) {
    super(`${path} changed while it was being used (it now leads to another file)`);
    this.name = "PathChangedError";
  }
}

/** Whether a file's stat matches a pin. */
export function matchesPin(info: Deno.FileInfo, pin: FilePin): boolean {
  return pin.ino === null || (info.dev === pin.dev && info.ino === pin.ino);
}

/** The pin of the file at `path` now (following symlinks), or `null` when there is none. */
export async function pinFile(path: string): Promise<FilePin | null> {
  try {
    const st = await Deno.stat(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}

/**
 * Open `path` for reading; with a pin, the opened file must be the pinned one (else
 * {@link PathChangedError}), so a symlink swapped in after the check cannot substitute another
 * file.
 */
export async function openPinned(path: string, pin?: FilePin | null): Promise<Deno.FsFile> {
  const file = await Deno.open(path, { read: true });
  if (pin) {
    const st = await file.stat();
    if (!matchesPin(st, pin)) {
      file.close();
      throw new PathChangedError(path);
    }
  }
  return file;
}
