/**
 * Turning a byte stream into whole lines, so output of two pipes interleaves line by line.
 *
 * @module
 */

/** Decodes UTF-8 chunks and hands out complete lines (with their `\n`). */
export class LineAssembler {
  readonly #decoder = new TextDecoder("utf-8", { fatal: false });
  #partial = "";

  /** Feed a chunk; `emit` receives each line completed by it. */
  push(chunk: Uint8Array, emit: (line: string) => void): void {
    const text = this.#partial + this.#decoder.decode(chunk, { stream: true });
    const end = text.lastIndexOf("\n");
    if (end < 0) {
      this.#partial = text;
      return;
    }
    this.#partial = text.slice(end + 1);
    for (const line of text.slice(0, end + 1).split(/(?<=\n)/)) emit(line);
  }

  /** End of stream: emit what is left (a last line without `\n`). */
  flush(emit: (line: string) => void): void {
    const rest = this.#partial + this.#decoder.decode();
    this.#partial = "";
    if (rest) emit(rest);
  }
}

/** Keeps the last `max` non-blank lines seen. */
export class TailLines {
  readonly #max: number;
  readonly #lines: string[] = [];

  /** Keep up to `max` lines. */
  constructor(max: number) {
    this.#max = max;
  }

  /** Record a line (blank ones are ignored). */
  push(line: string): void {
    const clean = line.replace(/\r?\n$/, "");
    if (!clean.trim()) return;
    this.#lines.push(clean);
    if (this.#lines.length > this.#max) this.#lines.shift();
  }

  /** The kept lines, oldest first. */
  lines(): string[] {
    return [...this.#lines];
  }
}
