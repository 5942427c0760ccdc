/**
 * Appends a task's output chunks to its output file in arrival order.
 *
 * @module
 */

/** Serialized appends to one open file. Write errors are remembered, never thrown. */
export class OutputSink {
  readonly #file: Deno.FsFile;
  #chain: Promise<void> = Promise.resolve();
  #closed = false;
  /** First write error, if any. */
  error: unknown = null;

  /** Wrap a file opened for appending. */
  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /** Open `path` for appending (created when missing). */
  static async open(path: string): Promise<OutputSink> {
    return new OutputSink(await Deno.open(path, { append: true, create: true, write: true }));
  }

  /** Queue a chunk. */
  write(chunk: Uint8Array): void {
    if (this.#closed) return;
    const copy = chunk.slice();
    this.#chain = this.#chain.then(async () => {
      if (this.error) return;
      try {
        let off = 0;
        while (off < copy.length) off += await this.#file.write(copy.subarray(off));
      } catch (e) {
        this.error = e;
      }
    });
  }

  /** Resolves when every queued chunk is written. */
  flush(): Promise<void> {
    return this.#chain;
  }

  /** Flush and close the file. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#chain;
    try {
      this.#file.close();
    } catch {
      // already closed
    }
  }
}
