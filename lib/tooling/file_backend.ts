/**
 * Where the file tools read and write text: the local disk, or an editor that holds the files
 * (an ACP client offering `fs/read_text_file` / `fs/write_text_file`, so the agent sees unsaved
 * buffers and its edits land in the editor).
 *
 * Tools resolve and check every path (workspace rule, permission scope) *before* calling a
 * backend; a backend only moves the bytes.
 *
 * @module
 */

/** The file content backend of a tool env. */
export interface FileBackend {
  /** Short name for logs: `local` or `client`. */
  readonly name: string;
  /** The whole text of `path` (as the user sees it), or `null` when the file does not exist. */
  readText(path: string): Promise<string | null>;
  /**
   * The text of `path` as UTF-8 chunks (ReadFile streams large local files); throws
   * `Deno.errors.NotFound` when it does not exist.
   */
  chunks(path: string): AsyncIterable<Uint8Array>;
  /**
   * Write `content` to `path` (replace, or append with `append`); resolves with the file's
   * size in bytes afterwards.
   */
  writeText(path: string, content: string, opts?: { append?: boolean }): Promise<number>;
}

const encoder = new TextEncoder();
const CHUNK_BYTES = 1 << 20;

/** The local disk. */
export const LOCAL_FILES: FileBackend = {
  name: "local",
  async readText(path) {
    try {
      return new TextDecoder().decode(await Deno.readFile(path));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  },
  async *chunks(path) {
    using file = await Deno.open(path, { read: true });
    const buf = new Uint8Array(CHUNK_BYTES);
    while (true) {
      const n = await file.read(buf);
      if (n === null) return;
      yield buf.subarray(0, n);
    }
  },
  async writeText(path, content, opts = {}) {
    await Deno.writeTextFile(path, content, { append: opts.append ?? false });
    return (await Deno.stat(path)).size;
  },
};

/** Reads and writes text through someone else (e.g. an ACP client), one whole file at a time. */
export interface RemoteTextFiles {
  /** The whole text of an existing file. */
  read(path: string): Promise<string>;
  /** Replace the whole text of a file. */
  write(path: string, content: string): Promise<void>;
}

/**
 * A backend that reads and/or writes through `remote` (each side only when `read`/`write` is
 * offered) and uses the local disk otherwise. Whether a file exists is decided on disk: a
 * missing file is never read remotely.
 */
export function remoteFileBackend(
  remote: Partial<RemoteTextFiles>,
): FileBackend {
  const read = remote.read;
  const write = remote.write;
  const readText = async (path: string): Promise<string | null> => {
    if (!read) return await LOCAL_FILES.readText(path);
    try {
      await Deno.stat(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
    return await read(path);
  };
  return {
    name: "client",
    readText,
    chunks: read
      ? async function* (path: string) {
        const text = await readText(path);
        if (text === null) throw new Deno.errors.NotFound(`No such file: ${path}`);
        yield encoder.encode(text);
      }
      : LOCAL_FILES.chunks,
    writeText: write
      ? async (path: string, content: string, opts: { append?: boolean } = {}) => {
        const text = opts.append ? ((await readText(path)) ?? "") + content : content;
        await write(path, text);
        return encoder.encode(text).length;
      }
      : LOCAL_FILES.writeText,
  };
}

/** The backend of an env: its own, else the local disk. */
export function fileBackend(env: { readonly files?: FileBackend }): FileBackend {
  return env.files ?? LOCAL_FILES;
}
