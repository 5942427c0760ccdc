/**
 * Crash-safe file writes: whole-file replacement through a synced temp file, and appends of
 * one complete line per write.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";

/** Options of {@linkcode atomicWriteText}. */
export interface AtomicWriteOptions {
  /**
   * Permission bits of the written file. Default: those of the file being replaced, or
   * `0o644` (less the umask) for a new file.
   */
  mode?: number;
}

/**
 * Replace `path` with `text` atomically: the text goes to a temp file in the same directory,
 * which is synced to disk and renamed over `path`. Readers see the old or the new content,
 * never a mix. The temp file is removed when anything fails.
 */
export function atomicWriteText(
  path: string,
  text: string,
  opts: AtomicWriteOptions = {},
): Promise<void> {
  return atomicWriteBytes(path, new TextEncoder().encode(text), opts);
}

/** Like {@linkcode atomicWriteText}, for raw bytes (restored file snapshots, blobs). */
export async function atomicWriteBytes(
  path: string,
  data: Uint8Array,
  opts: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(path);
  let mode = opts.mode;
  if (mode === undefined) {
    try {
      const info = await Deno.stat(path);
      mode = info.mode !== null ? info.mode & 0o777 : undefined;
    } catch {
      mode = undefined;
    }
  }
  for (let attempt = 0;; attempt++) {
    const tmp = join(dir, `.${basename(path)}.${crypto.randomUUID().slice(0, 8)}.tmp`);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(tmp, { write: true, createNew: true, mode: mode ?? 0o644 });
    } catch (err) {
      if (err instanceof Deno.errors.AlreadyExists && attempt < 5) continue;
      throw err;
    }
    try {
      try {
        await writeFully(file, data);
        await file.sync();
      } finally {
        file.close();
      }
      // exact bits regardless of the umask (unsupported on Windows, where it is skipped)
      if (mode !== undefined) await Deno.chmod(tmp, mode).catch(() => {});
      await Deno.rename(tmp, path);
    } catch (err) {
      await Deno.remove(tmp).catch(() => {});
      throw err;
    }
    return;
  }
}

/**
 * Append one line to `path` (created when missing) with a single `O_APPEND` write, so
 * concurrent appenders never interleave within a line. A trailing newline is added unless
 * `line` already ends with one.
 */
export async function appendLine(path: string, line: string): Promise<void> {
  const data = new TextEncoder().encode(line.endsWith("\n") ? line : line + "\n");
  const file = await Deno.open(path, { append: true, create: true });
  try {
    await writeFully(file, data);
  } finally {
    file.close();
  }
}

async function writeFully(file: Deno.FsFile, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await file.write(data.subarray(off));
}
