/**
 * The wire server's output: serialized messages queued and written in batches (everything
 * queued while the previous write ran goes out in one write), with a backlog signal so a
 * producer can wait while stdout lags.
 *
 * @module
 */
import { log } from "../../log.ts";
import { type OutboundMessage, serialize } from "../../wire/jsonrpc.ts";

/**
 * Queued lines beyond which {@link OutputQueue.lagging} asks producers to wait. Small, so queued
 * lines die young (see `Wire.room`); a write still carries everything queued while the one
 * before it ran.
 */
export const OUTPUT_BACKLOG_LINES = 256;

/** Batched, ordered writing of outbound messages. */
export class OutputQueue {
  readonly #write: (text: string) => Promise<void>;
  #pendingLines: string[] = [];
  #draining: Promise<void> | null = null;
  #closed = false;

  /** `write` writes one or more lines (joined by "\n", no final newline). */
  constructor(write: (text: string) => Promise<void>) {
    this.#write = write;
  }

  /** Queue a message (dropped once the queue is closed). */
  send(msg: OutboundMessage): void {
    if (this.#closed) return;
    this.#pendingLines.push(serialize(msg));
    if (!this.#draining) this.#draining = this.#drain();
  }

  /** While the backlog is too long, a promise resolving when the current write ends; else null. */
  lagging(): Promise<void> | null {
    return this.#pendingLines.length >= OUTPUT_BACKLOG_LINES ? this.#draining : null;
  }

  /** Wait until everything queued so far is written. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /** Flush, then drop whatever is sent later. */
  async close(): Promise<void> {
    await this.flush();
    this.#closed = true;
  }

  /** Write queued lines, batching everything queued while the previous write ran. */
  async #drain(): Promise<void> {
    while (this.#pendingLines.length > 0) {
      const batch = this.#pendingLines.join("\n");
      this.#pendingLines = [];
      try {
        await this.#write(batch);
      } catch (err) {
        log("WARNING", "wire", `could not write to stdout: ${(err as Error).message}`);
      }
    }
    this.#draining = null;
  }
}
