/**
 * `wire.jsonl`: the record of every merged wire message of a session (reference §5.3).
 * Line 1 is `{"type": "metadata", "protocol_version": "1.10"}`; every further line is
 * `{"timestamp": <unix seconds>, "message": {"type": T, "payload": {...}}}`. Lines are
 * appended with one write each, so a kill at any moment leaves at most one torn last line,
 * which readers skip; a failed write (disk full) is cut back to the last complete record.
 *
 * @module
 */
import { appendJsonRecords, appendRecords, readJsonlLines } from "../session/jsonl.ts";
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
      size = (await Deno.stat(this.path)).size;
    } catch {
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
   * Read every well-formed record in order, skipping malformed lines. The file is streamed from
   * disk one line at a time (a 1 GB `wire.jsonl` is never held whole); stop iterating to stop
   * reading.
   */
  async *records(): AsyncGenerator<WireRecord> {
    let lines: AsyncGenerator<string>;
    try {
      lines = readJsonlLines(this.path);
      // opens the file: a missing or unreadable file has no records
      const first = await lines.next();
      if (first.done) return;
      lines = prepend(first.value, lines);
    } catch {
      return;
    }
    for await (const line of lines) {
      let obj: unknown;
      try {
        obj = JSON.parse(line);
      } catch {
        continue;
      }
      const rec = obj as Partial<WireRecord> & { type?: string };
      if (rec?.type === "metadata") continue;
      const m = rec?.message;
      if (!m || typeof m !== "object" || typeof m.type !== "string") continue;
      yield {
        timestamp: typeof rec.timestamp === "number" ? rec.timestamp : 0,
        message: { type: m.type, payload: (m.payload ?? {}) as Record<string, unknown> },
      };
    }
  }
}

async function* prepend(
  first: string,
  rest: AsyncGenerator<string>,
): AsyncGenerator<string> {
  yield first;
  yield* rest;
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
