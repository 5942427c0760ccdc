/**
 * `wire.jsonl`: the record of every merged wire message of a session (reference §5.3).
 * Line 1 is `{"type": "metadata", "protocol_version": "1.10"}`; every further line is
 * `{"timestamp": <unix seconds>, "message": {"type": T, "payload": {...}}}`. Lines are
 * appended with one write each, so a kill at any moment leaves at most one torn last line,
 * which readers skip; a failed write (disk full) is cut back to the last complete record.
 *
 * @module
 */
import { appendJsonRecords, appendRecords, fileChunks } from "../session/jsonl.ts";
import { MAX_LINE_BYTES, readLines } from "./line_reader.ts";
import { WIRE_PROTOCOL_VERSION } from "../version.ts";
import type { Subscription } from "./broadcast.ts";
import { type Envelope, toEnvelope, type WireMessage } from "./messages.ts";
import { pyJsonDumps, pyJsonPieces } from "./py_json.ts";

/** One record read back from `wire.jsonl`. */
export interface WireRecord {
  /** Unix seconds. */
  timestamp: number;
  /** The message envelope. */
  message: Envelope;
}

/** Appends messages to a session's `wire.jsonl`. */
export class WireFile {
  /** Path of the file. */
  readonly path: string;
  #headerChecked = false;
  #version = WIRE_PROTOCOL_VERSION;
  #tail: Promise<void> = Promise.resolve();

  /** Bind to a file path (created on first write). */
  constructor(path: string) {
    this.path = path;
  }

  /** Protocol version recorded in the file header ("1.1" for legacy files without one). */
  get protocolVersion(): string {
    return this.#version;
  }

  async #ensureHeader(): Promise<void> {
    if (this.#headerChecked) return;
    this.#headerChecked = true;
    let size = 0;
    try {
      const info = await Deno.stat(this.path);
      if (!info.isFile) {
        // Appending to a FIFO would block the turn; to a device, lose the record.
        this.#headerChecked = false;
        throw new WireFileError(`${this.path} is not a regular file; no record was written`);
      }
      size = info.size;
    } catch (err) {
      if (err instanceof WireFileError) throw err;
      size = 0;
    }
    if (size === 0) {
      await appendText(
        this.path,
        pyJsonDumps({ type: "metadata", protocol_version: WIRE_PROTOCOL_VERSION }) + "\n",
      );
      return;
    }
    if (!(await endsWithNewline(this.path, size))) {
      // A kill mid-write left a torn last line: end it so the next record is not glued to it.
      await appendText(this.path, "\n");
    }
    const first = await readFirstLine(this.path);
    try {
      const obj = JSON.parse(first);
      this.#version = obj?.type === "metadata" ? String(obj.protocol_version) : "1.1";
    } catch {
      this.#version = "1.1";
    }
  }

  /**
   * Append one message. Appends through one instance land in the order they were called (each
   * waits for the one before), so every writer of a session that shares its `WireFile` (the
   * turns and the notifications between them) keeps the file in the order things happened.
   */
  append(msg: WireMessage, timestamp = Date.now() / 1000): Promise<void> {
    // As pieces: a huge text in the message is written slice by slice, never built as a line.
    const record = pyJsonPieces({ timestamp, message: toEnvelope(msg) });
    const write = this.#tail.then(async () => {
      await this.#ensureHeader();
      await appendJsonRecords(this.path, [record], { mode: 0o644 });
    });
    this.#tail = write.catch(() => {}); // a failed append is its caller's; the next still runs
    return write;
  }

  /** Whether the file holds at least one message record. */
  async hasRecords(): Promise<boolean> {
    for await (const _ of this.records()) return true;
    return false;
  }

  /**
   * Read every well-formed record in order, skipping malformed lines (a torn line, bytes that
   * are not JSON, a line longer than {@link MAX_RECORD_BYTES}). The file is streamed from disk one
   * line at a time through one reused buffer (a 1 GB `wire.jsonl` is never held whole); stop
   * iterating to stop reading. A missing or unreadable file has no records; with `strict`, a
   * path that is not a regular file (a FIFO, a device, a directory: reading it would block or
   * never end) and a failed read are errors ({@link WireFileError}) instead.
   */
  async *records(opts: { strict?: boolean } = {}): AsyncGenerator<WireRecord> {
    let file: Deno.FsFile;
    try {
      const info = await Deno.stat(this.path);
      if (!info.isFile) {
        if (!opts.strict) return;
        throw new WireFileError(
          `${this.path} is not a regular file, so its records cannot be read; move it aside ` +
            "to start the session's record afresh",
        );
      }
      file = await Deno.open(this.path, { read: true });
    } catch (err) {
      if (err instanceof WireFileError) throw err;
      if (err instanceof Deno.errors.NotFound || !opts.strict) return;
      throw new WireFileError(`${this.path} cannot be read (${errorText(err)})`);
    }
    try {
      for await (const line of readLines(fileChunks(file), MAX_RECORD_BYTES)) {
        if (line === null) continue; // longer than any record: damage, skipped
        const rec = parseRecord(line);
        if (rec) yield rec;
      }
    } catch (err) {
      if (!opts.strict) return;
      throw new WireFileError(`reading ${this.path} failed (${errorText(err)})`);
    } finally {
      try {
        file.close();
      } catch {
        // already closed
      }
    }
  }
}

/** The longest line read back as a record (longer ones are damage and skipped). */
export const MAX_RECORD_BYTES = MAX_LINE_BYTES;

/** `wire.jsonl` cannot be read back. */
export class WireFileError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "WireFileError";
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One line of `wire.jsonl` as a record, or null for the header and malformed lines. */
function parseRecord(line: string): WireRecord | null {
  if (!line.trim()) return null;
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return null;
  }
  const rec = obj as Partial<WireRecord> & { type?: string };
  if (rec?.type === "metadata") return null;
  const m = rec?.message;
  if (!m || typeof m !== "object" || typeof m.type !== "string") return null;
  const payload = m.payload !== null && typeof m.payload === "object" && !Array.isArray(m.payload)
    ? m.payload as Record<string, unknown>
    : {};
  return {
    timestamp: typeof rec.timestamp === "number" ? rec.timestamp : 0,
    message: { type: m.type, payload },
  };
}

function appendText(path: string, text: string): Promise<void> {
  return appendRecords(path, text, { mode: 0o644 });
}

async function endsWithNewline(path: string, size: number): Promise<boolean> {
  const f = await Deno.open(path);
  try {
    await f.seek(size - 1, Deno.SeekMode.Start);
    const b = new Uint8Array(1);
    await f.read(b);
    return b[0] === 0x0a;
  } finally {
    f.close();
  }
}

async function readFirstLine(path: string): Promise<string> {
  const f = await Deno.open(path);
  try {
    const buf = new Uint8Array(4096);
    const n = (await f.read(buf)) ?? 0;
    const s = new TextDecoder().decode(buf.subarray(0, n));
    return s.split("\n")[0];
  } finally {
    f.close();
  }
}

/**
 * Record everything from a merged subscription until it ends. The first failed write is
 * reported (through `report`, default stderr) and recording stops for the rest of the
 * subscription, so the file keeps a gap-free prefix instead of records with holes; the
 * subscription is still drained so the turn goes on.
 */
export async function recordWire(
  sub: Subscription<WireMessage>,
  file: WireFile,
  report: (line: string) => void = (line) => console.error(line),
): Promise<void> {
  let failed = false;
  for await (const msg of sub) {
    if (failed) continue;
    try {
      await file.append(msg);
    } catch (err) {
      failed = true;
      report(`kimi: ${(err as Error).message} Wire messages of this turn are no longer recorded.`);
    }
  }
}
