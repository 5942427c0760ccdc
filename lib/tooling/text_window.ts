/**
 * Reading a window of lines from a text file in bounded memory, for ReadFile: a forward window
 * from a line number, or a tail window, with long lines cut and the total line count, streaming
 * the file in chunks so even a multi-gigabyte file (or one huge line) costs a few megabytes.
 *
 * @module
 */
import { utf8Length } from "../utf8_length.ts";
import { type FilePin, openPinned } from "../fs/real_path.ts";

const CHUNK_BYTES = 1 << 20;
/** Bytes of a line kept before it is known to need truncation (4 bytes per code point max). */
const HEAD_BYTES = 8192;
const NL = 0x0a;
const CR = 0x0d;

/** One line of the window. */
export interface WindowLine {
  /** 1-based line number. */
  lineNo: number;
  /** The line (with its line break), cut to the line length limit. */
  text: string;
  /** Whether the line was cut. */
  truncated: boolean;
}

/** Limits of a read. */
export interface WindowLimits {
  /** Max characters of a line, break included (longer lines end with `...`). */
  maxLineLength: number;
}

/**
 * Cut a line longer than `max` code points to `max`, ending with `...` followed by the line's
 * trailing line break, as the reference's `truncate_line` does.
 */
export function truncateLine(line: string, max: number): string {
  if (line.length <= max) return line;
  const cps = Array.from(line);
  if (cps.length <= max) return line;
  const lb = /[\r\n]+$/.exec(line)?.[0] ?? "";
  const end = "..." + lb;
  const keep = Math.max(max, end.length) - end.length;
  return cps.slice(0, keep).join("") + end;
}

/** Collects one line's bytes, keeping only a bounded head of very long lines. */
class LineAssembler {
  #parts: Uint8Array[] = [];
  #kept = 0;
  #total = 0;
  #trailingCR = 0;
  readonly #decoder = new TextDecoder();

  constructor(readonly maxLineLength: number) {}

  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.#total += bytes.length;
    let cr = 0;
    for (let i = bytes.length - 1; i >= 0 && bytes[i] === CR; i--) cr++;
    this.#trailingCR = cr === bytes.length ? this.#trailingCR + cr : cr;
    const room = HEAD_BYTES - this.#kept;
    if (room <= 0) return;
    const piece = bytes.length > room ? bytes.slice(0, room) : bytes.slice();
    this.#parts.push(piece);
    this.#kept += piece.length;
  }

  finish(newline: boolean): { text: string; truncated: boolean } {
    const head = new Uint8Array(this.#kept);
    let off = 0;
    for (const p of this.#parts) {
      head.set(p, off);
      off += p.length;
    }
    let result: { text: string; truncated: boolean };
    if (this.#total <= HEAD_BYTES) {
      const line = this.#decoder.decode(head) + (newline ? "\n" : "");
      const text = truncateLine(line, this.maxLineLength);
      result = { text, truncated: text !== line };
    } else {
      const end = "..." + "\r".repeat(this.#trailingCR) + (newline ? "\n" : "");
      const keep = Math.max(this.maxLineLength, end.length) - end.length;
      const text = Array.from(this.#decoder.decode(head)).slice(0, keep).join("") + end;
      result = { text, truncated: true };
    }
    this.#parts = [];
    this.#kept = 0;
    this.#total = 0;
    this.#trailingCR = 0;
    return result;
  }
}

/** Decides, line by line, whether to keep collecting. */
type Collector = (line: WindowLine) => boolean;

/** What a window is read from: a local file path, or a producer of the text's UTF-8 chunks. */
export type TextSource = string | (() => AsyncIterable<Uint8Array>);

async function* chunksOf(source: TextSource, pin?: FilePin | null): AsyncIterable<Uint8Array> {
  if (typeof source !== "string") {
    yield* source();
    return;
  }
  using file = await openPinned(source, pin);
  const buf = new Uint8Array(CHUNK_BYTES);
  while (true) {
    const n = await file.read(buf);
    if (n === null) return;
    yield buf.subarray(0, n);
  }
}

/**
 * Stream the file once: count all lines, and hand each line from `startLine` on to `collect`
 * until it returns false. Returns the total number of lines.
 */
async function scan(
  source: TextSource,
  startLine: number,
  collect: Collector | null,
  pin?: FilePin | null,
): Promise<number> {
  const asm = collect ? new LineAssembler(Infinity) : null;
  let lineNo = 1; // number of the line being read
  let collecting = collect !== null && startLine <= 1;
  let partial = false; // bytes seen after the last newline
  for await (const chunk of chunksOf(source, pin)) {
    const n = chunk.length;
    let pos = 0;
    while (pos < n) {
      const nl = chunk.indexOf(NL, pos);
      const end = nl === -1 ? n : nl;
      if (collecting) asm!.push(chunk.subarray(pos, end));
      if (nl === -1) {
        partial = true;
        break;
      }
      if (collecting) {
        const { text, truncated } = asm!.finish(true);
        collecting = collect!({ lineNo, text, truncated });
      }
      partial = false;
      lineNo++;
      if (!collecting && collect !== null && lineNo === startLine) collecting = true;
      pos = nl + 1;
    }
  }
  if (partial) {
    if (collecting) {
      const { text, truncated } = asm!.finish(false);
      collect!({ lineNo, text, truncated });
    }
    return lineNo;
  }
  return lineNo - 1;
}

/** A window of lines and what stopped it. */
export interface TextWindow {
  /** The lines read. */
  lines: WindowLine[];
  /** Lines in the whole file. */
  totalLines: number;
  /** Stopped at the line cap. */
  maxLinesReached: boolean;
  /** Stopped at the byte cap. */
  maxBytesReached: boolean;
}

/** Options of {@link readForward} and {@link readTail}. */
export interface ReadWindowOptions {
  /** Lines wanted. */
  nLines: number;
  /** Hard cap on lines. */
  maxLines: number;
  /** Hard cap on bytes (UTF-8, of the cut lines). */
  maxBytes: number;
  /** Max characters of a line. */
  maxLineLength: number;
  /** The file the path led to when it was checked; another file fails the read. */
  pin?: FilePin | null;
}

/** Read up to `nLines` lines starting at line `offset` (1-based). */
export async function readForward(
  path: TextSource,
  offset: number,
  opts: ReadWindowOptions,
): Promise<TextWindow> {
  const lines: WindowLine[] = [];
  let bytes = 0;
  let maxLinesReached = false;
  let maxBytesReached = false;
  const totalLines = await scan(path, offset, (line) => {
    const text = truncateLine(line.text, opts.maxLineLength);
    lines.push({ lineNo: line.lineNo, text, truncated: line.truncated || text !== line.text });
    bytes += utf8Length(text);
    if (lines.length >= opts.nLines) return false;
    if (lines.length >= opts.maxLines) {
      maxLinesReached = true;
      return false;
    }
    if (bytes >= opts.maxBytes) {
      maxBytesReached = true;
      return false;
    }
    return true;
  }, opts.pin);
  return { lines, totalLines, maxLinesReached, maxBytesReached };
}

/**
 * Tail mode: the last `tail` lines; of those the first `nLines` (capped at `maxLines`), then
 * trimmed from the front to fit `maxBytes`.
 */
export async function readTail(
  path: TextSource,
  tail: number,
  opts: ReadWindowOptions,
): Promise<TextWindow> {
  const total = await scan(path, Infinity, null, opts.pin);
  const window: WindowLine[] = [];
  const start = Math.max(1, total - tail + 1);
  if (total > 0) {
    await scan(path, start, (line) => {
      const text = truncateLine(line.text, opts.maxLineLength);
      window.push({ lineNo: line.lineNo, text, truncated: line.truncated || text !== line.text });
      return true;
    }, opts.pin);
  }
  const tailWindow = window.slice(-tail);
  let candidates = tailWindow.slice(0, Math.min(opts.nLines, opts.maxLines));
  const maxLinesReached = tailWindow.length > opts.maxLines &&
    candidates.length === opts.maxLines;
  let maxBytesReached = false;
  const sizes = candidates.map((l) => utf8Length(l.text));
  if (sizes.reduce((a, b) => a + b, 0) > opts.maxBytes) {
    maxBytesReached = true;
    let kept = 0;
    let used = 0;
    for (let i = candidates.length - 1; i >= 0; i--) {
      used += sizes[i];
      if (used > opts.maxBytes) break;
      kept++;
    }
    candidates = candidates.slice(candidates.length - kept);
  }
  return { lines: candidates, totalLines: total, maxLinesReached, maxBytesReached };
}
