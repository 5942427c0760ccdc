/**
 * JSON-lines files of a session (`context.jsonl`, `wire.jsonl`): a streaming reader that yields
 * one line at a time so large files are never loaded whole, and an appender that never leaves a
 * torn record behind when the disk is full.
 *
 * @module
 */
import { readLines } from "../wire/line_reader.ts";
import { type JsonPiece, recordBytes } from "./json_pieces.ts";

/**
 * Yield the non-blank lines of `path`, trimmed, in order. Stop iterating early to stop
 * reading. Throws `Deno.errors.NotFound` when the file does not exist. Lines are split at byte
 * level, so a single line of many megabytes costs one pass, not one per chunk read.
 */
export async function* readJsonlLines(path: string): AsyncGenerator<string> {
  const file = await Deno.open(path, { read: true });
  try {
    for await (const raw of readLines(fileChunks(file), Infinity)) {
      const line = raw?.trim();
      if (line) yield line;
    }
  } finally {
    try {
      file.close();
    } catch {
      // already closed by the end of its stream
    }
  }
}

/**
 * The lines of a byte stream, each as if decoded on its own (without the newline, `\r`
 * stripped, one leading BOM dropped, bad UTF-8 replaced within its line; the last line only
 * when not empty), as `readLines(chunks, Infinity)` gives them, but decoded with one call per
 * chunk rather than one per line. The stream is decoded as one text (a newline byte is never
 * part of a UTF-8 sequence, so a character torn before it is replaced there, as a decode of the
 * line alone replaces it at its end) and split at its newlines; the newlines are found in the
 * decoded text, where the search runs at memory speed (searching the bytes instead, the 1 MiB
 * chunks of a 51 MB line took 120 ms to split where these take 88). For a file of many short
 * lines (a long session's
 * `context.jsonl`) that is a small fraction of the decoder calls. (Unlike `readLines`, a U+FEFF
 * that falls at a chunk boundary inside a line is kept: Deno's streaming `TextDecoder` drops a
 * BOM at the start of every call unless told to ignore BOMs.)
 *
 * Synchronous: feed each chunk to {@link ChunkLineDecoder.push} (which keeps nothing of the
 * chunk's bytes past the call) and take the complete lines it returns, then call
 * {@link ChunkLineDecoder.end} for the last line.
 */
export class ChunkLineDecoder {
  // BOMs are dropped per line below, as readLines does (it starts a fresh decode per line).
  readonly #decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  /** The decoded start of the current line, from earlier chunks. */
  #head: string[] = [];
  /** Whether bytes were read since the last newline (the last line, even if it decodes empty). */
  #pendingBytes = false;

  /** The lines completed by `chunk` (none when it holds no newline). */
  push(chunk: Uint8Array): string[] {
    if (chunk.length === 0) return [];
    const text = this.#decoder.decode(chunk, { stream: true });
    this.#pendingBytes = chunk[chunk.length - 1] !== 10;
    if (text.indexOf("\n") < 0) {
      if (text !== "") this.#head.push(text);
      return [];
    }
    const lines = text.split("\n");
    // the start of the next line (empty when the chunk ends with a newline)
    const rest = lines.pop()!;
    if (this.#head.length > 0) {
      this.#head.push(lines[0]);
      lines[0] = this.#head.join("");
      this.#head = [];
    }
    for (let i = 0; i < lines.length; i++) lines[i] = finishLine(lines[i]);
    if (rest !== "") this.#head.push(rest);
    return lines;
  }

  /** The last line when the stream did not end with a newline (and it is not empty). */
  end(): string[] {
    if (!this.#pendingBytes) return [];
    this.#pendingBytes = false;
    this.#head.push(this.#decoder.decode());
    const line = this.#head.join("");
    this.#head = [];
    return [finishLine(line)];
  }
}

function finishLine(line: string): string {
  if (line.charCodeAt(0) === 0xFEFF) line = line.slice(1);
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/** {@link ChunkLineDecoder} over an async stream of chunks: the lines, in order. */
export async function* chunkTextLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const lines = new ChunkLineDecoder();
  for await (const chunk of chunks) yield* lines.push(chunk);
  yield* lines.end();
}

/** Bytes read per call when a session file is streamed (a few calls for most files). */
const READ_CHUNK_BYTES = 1024 * 1024;

/**
 * The bytes of an open file in chunks of up to 1 MiB, read into one reused buffer: each chunk is
 * valid until the next is asked for (`readLines` keeps nothing of a chunk past it). A fresh
 * buffer per read would leave a megabyte of garbage outside V8's heap per read, freed only when
 * a full GC runs: reading a big session file grew the process by ~50 MB that way. (Larger calls
 * than `file.readable`'s 64 KiB: a sixteenth of the round trips through Deno's I/O threads.)
 */
export async function* fileChunks(file: Deno.FsFile): AsyncGenerator<Uint8Array> {
  const buf = new Uint8Array(READ_CHUNK_BYTES);
  for (;;) {
    const n = await file.read(buf);
    if (n === null) return;
    yield buf.subarray(0, n);
  }
}

/** Whether the file's last byte is a newline (false for an empty or missing file). */
export async function endsWithNewline(path: string): Promise<boolean> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return false;
  }
  try {
    const size = (await file.stat()).size;
    if (size === 0) return false;
    await file.seek(size - 1, Deno.SeekMode.Start);
    const byte = new Uint8Array(1);
    return (await file.read(byte)) === 1 && byte[0] === 0x0a;
  } finally {
    file.close();
  }
}

/** Parse one JSON line; `undefined` when it is not valid JSON. */
export function parseJsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/**
 * Appending to a session's JSON-lines file failed (disk full, I/O error). The file was cut back
 * to its last complete record, so it stays valid JSON Lines and the session stays resumable.
 */
export class SessionWriteError extends Error {
  /** The file that could not be written. */
  readonly path: string;
  /** Whether the file was restored to its last complete record. */
  readonly restored: boolean;
  /** Create the error. */
  constructor(path: string, cause: unknown, restored: boolean) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      `Could not write ${path}: ${why}. ` +
        (restored
          ? "The file was restored to its last complete record; "
          : "The file could not be restored and may end with a torn record (it is skipped when " +
            "read); ") +
        "free some disk space, then resume the session.",
      { cause },
    );
    this.name = "SessionWriteError";
    this.path = path;
    this.restored = restored;
  }
}

/** The file operations {@link appendRecords} needs (a `Deno.FsFile`; tests inject failures). */
export interface AppendTarget {
  /** Current size. */
  stat(): Promise<{ size: number }>;
  /** Write some bytes at the end; resolves with how many were written. */
  write(data: Uint8Array): Promise<number>;
  /** Cut the file to `len` bytes. */
  truncate(len?: number): Promise<void>;
  /** Close it. */
  close(): void;
}

/** Options of {@link appendRecords}. */
export interface AppendRecordsOptions {
  /** Permission bits when the file is created. */
  mode?: number;
  /** Opens the file for appending (default `Deno.open` with `append` and `create`). */
  open?: (path: string) => Promise<AppendTarget>;
}

const encoder = new TextEncoder();

/**
 * Append complete records (`text` is one or more lines, each ending in `\n`) to `path` with
 * `O_APPEND` writes. When a write fails part-way (ENOSPC, EIO), the file is truncated back to
 * its size before the append, so it never ends in a torn or partial record, and a
 * {@link SessionWriteError} is thrown. A file only ever has one writer (the session lock).
 */
export function appendRecords(
  path: string,
  text: string,
  opts: AppendRecordsOptions = {},
): Promise<void> {
  const data = encoder.encode(text);
  if (data.length === 0) return Promise.resolve();
  return appendChunks(path, [data], opts);
}

/**
 * Append JSON records given as pieces (each list one record; `\n` is appended to each), as
 * {@link appendRecords} does, encoding and writing a megabyte at a time: a record holding a
 * huge string is never built as one line or one buffer.
 */
export function appendJsonRecords(
  path: string,
  records: readonly (readonly JsonPiece[])[],
  opts: AppendRecordsOptions = {},
): Promise<void> {
  if (records.length === 0) return Promise.resolve();
  return appendChunks(path, recordBytes(records), opts);
}

async function appendChunks(
  path: string,
  chunks: Iterable<Uint8Array>,
  opts: AppendRecordsOptions,
): Promise<void> {
  let file: AppendTarget;
  try {
    file = await (opts.open ?? ((p) =>
      Deno.open(p, { append: true, create: true, mode: opts.mode ?? 0o600 })))(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.NotCapable) throw err;
    throw new SessionWriteError(path, err, true);
  }
  try {
    const before = (await file.stat()).size;
    try {
      for (const data of chunks) {
        let off = 0;
        while (off < data.length) off += await file.write(data.subarray(off));
      }
    } catch (err) {
      let restored = true;
      try {
        await file.truncate(before);
      } catch {
        restored = false;
      }
      throw new SessionWriteError(path, err, restored);
    }
  } finally {
    file.close();
  }
}
