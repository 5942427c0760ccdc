/**
 * What is at a path, telling "nothing there" apart from "not allowed to look": a missing Deno
 * `--allow-read` grant or an OS permission error is never read as "absent".
 *
 * @module
 */

/** What a look at a path found. `denied`: the path may not be inspected (Deno or OS permission). */
export type PathStatus = "file" | "directory" | "other" | "missing" | "denied";

/** Options of {@link pathStatus}. */
export interface PathStatusOptions {
  /** Look at a symlink itself instead of its target (`lstat`); default false. */
  noFollow?: boolean;
}

/** Whether `err` says a path may not be inspected (Deno permission or OS `EACCES`/`EPERM`). */
export function isPermissionError(err: unknown): boolean {
  return err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied;
}

function isAbsence(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotADirectory ||
    err instanceof Deno.errors.FilesystemLoop;
}

function kindOf(info: Deno.FileInfo): PathStatus {
  return info.isFile ? "file" : info.isDirectory ? "directory" : "other";
}

function classify(err: unknown): PathStatus {
  if (isAbsence(err)) return "missing";
  if (isPermissionError(err)) return "denied";
  throw err;
}

/** What is at `path` (other I/O errors are thrown). */
export async function pathStatus(path: string, opts: PathStatusOptions = {}): Promise<PathStatus> {
  try {
    return kindOf(await (opts.noFollow ? Deno.lstat(path) : Deno.stat(path)));
  } catch (err) {
    return classify(err);
  }
}

/** Synchronous {@link pathStatus}. */
export function pathStatusSync(path: string, opts: PathStatusOptions = {}): PathStatus {
  try {
    return kindOf(opts.noFollow ? Deno.lstatSync(path) : Deno.statSync(path));
  } catch (err) {
    return classify(err);
  }
}

async function statOrNull(path: string, noFollow = false): Promise<Deno.FileInfo | null> {
  try {
    return await (noFollow ? Deno.lstat(path) : Deno.stat(path));
  } catch (err) {
    if (isAbsence(err)) return null;
    throw err;
  }
}

/**
 * Whether anything is at `path`. Throws (the permission error itself) when the path may not be
 * inspected, so a denied read never looks like an absent file.
 */
export async function exists(path: string, opts: PathStatusOptions = {}): Promise<boolean> {
  return (await statOrNull(path, opts.noFollow)) !== null;
}

/** Whether `path` is a regular file (following symlinks); throws when it may not be inspected. */
export async function isFile(path: string): Promise<boolean> {
  return (await statOrNull(path))?.isFile ?? false;
}

/** Whether `path` is a directory (following symlinks); throws when it may not be inspected. */
export async function isDir(path: string): Promise<boolean> {
  return (await statOrNull(path))?.isDirectory ?? false;
}

/** Whether a {@link PathStatus} names something that is there and may be inspected. */
export function isPresent(status: PathStatus): boolean {
  return status === "file" || status === "directory" || status === "other";
}
