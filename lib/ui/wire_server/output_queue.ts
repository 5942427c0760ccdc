/**
 * The wire server's output: serialized messages queued and written in batches (everything
 * queued while the previous write ran goes out in one write), with a backlog signal so a
 * producer can wait while stdout lags. A message holding a huge string (a 95 MB prompt echoed
 * back in `TurnBegin`) is kept as pieces and written a slice at a time when the writer can
 * (`writePieces`), never serialized into one line.
 *
 * @module
 */
import { log } from "../../log.ts";
import type { OutboundMessage } from "../../wire/jsonrpc.ts";
import { type JsonPiece, jsonStringifyPieces, piecesText } from "../../session/json_pieces.ts";

/**
 * Queued lines beyond which {@link OutputQueue.lagging} asks producers to wait. Small, so queued
 * lines die young (see `Wire.room`); a write still carries everything queued while the one
 * before it ran. A message with a huge string counts as a full backlog by itself.
 */
export const OUTPUT_BACKLOG_LINES = 256;

/** Options of {@link OutputQueue}. */
export interface OutputQueueOptions {
  /** Writes one or more lines (joined by "\n", no final newline). */
  write: (text: string) => Promise<void>;
  /**
   * Writes one message given as JSON pieces, followed by a newline (see
   * `lib/session/json_pieces.ts`); without it such a message goes through `write` as one line.
   */
  writePieces?: (pieces: readonly JsonPiece[]) => Promise<void>;
}

/** Batched, ordered writing of outbound messages. */
export class OutputQueue {
  readonly #write: (text: string) => Promise<void>;
  readonly #writePieces: ((pieces: readonly JsonPiece[]) => Promise<void>) | null;
  #pending: (string | JsonPiece[])[] = [];
  #weight = 0;
  #draining: Promise<void> | null = null;
  #closed = false;

  /** A queue writing through `write` (or the options). */
  constructor(opts: OutputQueueOptions | ((text: string) => Promise<void>)) {
    const o = typeof opts === "function" ? { write: opts } : opts;
    this.#write = o.write;
    this.#writePieces = o.writePieces ?? null;
  }

  /** Queue a message (dropped once the queue is closed). */
  send(msg: OutboundMessage): void {
    if (this.#closed) return;
    const pieces = jsonStringifyPieces(msg);
    if (pieces.length === 1 && typeof pieces[0] === "string") {
      this.#pending.push(pieces[0]);
      this.#weight++;
    } else {
      this.#pending.push(pieces);
      this.#weight += OUTPUT_BACKLOG_LINES;
    }
    if (!this.#draining) this.#draining = this.#drain();
  }

  /** While the backlog is too long, a promise resolving when the current write ends; else null. */
  lagging(): Promise<void> | null {
    return this.#weight >= OUTPUT_BACKLOG_LINES ? this.#draining : null;
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
    while (this.#pending.length > 0) {
      const queued = this.#pending;
      this.#pending = [];
      this.#weight = 0;
      let lines: string[] = [];
      for (const item of queued) {
        if (typeof item === "string") {
          lines.push(item);
          continue;
        }
        if (lines.length > 0) await this.#writeText(lines.join("\n"));
        lines = [];
        await this.#writeText(item);
      }
      if (lines.length > 0) await this.#writeText(lines.join("\n"));
    }
    this.#draining = null;
  }

  async #writeText(text: string | JsonPiece[]): Promise<void> {
    try {
      if (typeof text === "string") await this.#write(text);
      else if (this.#writePieces) await this.#writePieces(text);
      else await this.#write(piecesText(text));
    } catch (err) {
      log("WARNING", "wire", `could not write to stdout: ${(err as Error).message}`);
    }
  }
}
