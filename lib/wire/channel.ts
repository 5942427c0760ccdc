/**
 * The wire: the typed channel from the soul to a UI. It has two broadcast queues: `raw`
 * (every message as sent, e.g. every streamed text chunk) and `merged` (streamed pieces
 * merged by the rules of §5.2). Wire servers read `raw`; print mode, the recorder and subagent
 * forwarding read `merged`.
 *
 * @module
 */
import { BroadcastQueue, type Subscription } from "./broadcast.ts";
import { cloneMergeable, isMergeable, type MergeableEvent, mergeInPlace } from "./merge.ts";
import type { WireMessage } from "./messages.ts";

/** One turn's channel. */
export class Wire {
  readonly #raw = new BroadcastQueue<WireMessage>();
  readonly #merged = new BroadcastQueue<WireMessage>();
  #buffer: MergeableEvent | null = null;
  /**
   * The buffered text or think part's pieces, joined once when it is published: a reply streamed
   * as 100,000 pieces would otherwise become a rope of 100,000 concatenations, flattened into a
   * copy.
   */
  #texts: string[] | null = null;
  /**
   * The text of the merged text or think part published by the current {@link send}, joined
   * from its pieces, until the next send: for {@link takeJoinedText}.
   */
  #joined: { pieces: string[]; text: string } | null = null;

  /** Send a message from the soul. */
  send(msg: WireMessage): void {
    this.#joined = null;
    this.#raw.publish(msg);
    if (isMergeable(msg)) {
      const buffer = this.#buffer;
      if (
        buffer?.type === "ContentPart" && buffer.payload.type === "text" &&
        msg.type === "ContentPart" && msg.payload.type === "text"
      ) {
        (this.#texts ??= [buffer.payload.text]).push(msg.payload.text);
      } else if (
        buffer?.type === "ContentPart" && buffer.payload.type === "think" &&
        !buffer.payload.encrypted && msg.type === "ContentPart" && msg.payload.type === "think"
      ) {
        // as mergeInPlace merges think parts (an encrypted one ends the merging)
        (this.#texts ??= [buffer.payload.think]).push(msg.payload.think);
        if (msg.payload.encrypted) buffer.payload.encrypted = msg.payload.encrypted;
      } else if (buffer === null) {
        this.#buffer = cloneMergeable(msg);
      } else if (!mergeInPlace(buffer, msg)) {
        this.#publishBuffer();
        this.#buffer = cloneMergeable(msg);
      }
      return;
    }
    this.flush();
    this.#merged.publish(msg);
  }

  /**
   * Resolves when the UIs have caught up to fewer than `limit` undelivered messages: a soul that
   * streams faster than its readers awaits this, so memory stays bounded. The default is
   * small on purpose: a message that waits in a queue through two young-generation collections
   * is moved to the old generation and stays resident until a full GC (with 1,024 queued
   * messages a 9.5 MB streamed turn left 45 MB of such garbage behind; with 128, about none).
   */
  async room(limit = 128): Promise<void> {
    await this.#raw.room(limit);
    await this.#merged.room(limit);
  }

  /**
   * Offer the joined text of the text (or think) part being merged, when the sender already
   * built it (the soul holds the reply's assembled message when the stream ends). When the
   * buffered pieces spell exactly `text` (checked piece by piece, nothing allocated), the merged
   * event carries that string and the pieces are dropped, instead of joining a second copy of the
   * text when the buffer is published. Anything else (no text or think part of several pieces
   * buffered, a different text) is ignored.
   */
  adoptText(text: string): void {
    const texts = this.#texts;
    const buffer = this.#buffer;
    if (texts === null || buffer?.type !== "ContentPart" || !spells(text, texts)) return;
    if (buffer.payload.type === "text") buffer.payload.text = text;
    else if (buffer.payload.type === "think") buffer.payload.think = text;
    else return;
    this.#texts = null;
  }

  /**
   * The string of the merged text or think part that the last {@link send} published (a part
   * ends when another kind of part arrives), when it is exactly `pieces` joined: the sender,
   * which gathered the same streamed pieces, uses it instead of joining a copy of its own.
   * `undefined` when the last send published no part joined from pieces, or one with other text
   * (compared piece by piece, nothing allocated). Taken once: the wire keeps no reference after.
   */
  takeJoinedText(pieces: readonly string[]): string | undefined {
    const joined = this.#joined;
    this.#joined = null;
    if (joined === null) return undefined;
    if (joined.pieces.length === pieces.length) {
      // the same pieces as sent (the usual case): each comparison is then of one string with itself
      let same = true;
      for (let i = 0; i < pieces.length && same; i++) same = joined.pieces[i] === pieces[i];
      if (same) return joined.text;
    }
    return spells(joined.text, pieces) ? joined.text : undefined;
  }

  /** Publish any buffered merged piece now. */
  flush(): void {
    if (this.#buffer !== null) this.#publishBuffer();
    this.#buffer = null;
  }

  #publishBuffer(): void {
    const buffer = this.#buffer!;
    if (this.#texts !== null && buffer.type === "ContentPart") {
      const text = this.#texts.join("");
      if (buffer.payload.type === "text") buffer.payload.text = text;
      else if (buffer.payload.type === "think") buffer.payload.think = text;
      this.#joined = { pieces: this.#texts, text };
    }
    this.#texts = null;
    this.#merged.publish(buffer);
  }

  /** Subscribe to the UI side: merged or raw messages. */
  subscribe(opts: { merge: boolean }): Subscription<WireMessage> {
    return opts.merge ? this.#merged.subscribe() : this.#raw.subscribe();
  }

  /** Flush and close both queues. */
  shutdown(): void {
    this.flush();
    this.#raw.close();
    this.#merged.close();
  }

  /** Whether the wire was shut down. */
  get closed(): boolean {
    return this.#raw.closed;
  }
}

/** Whether `pieces` joined are exactly `text` (compared in place, nothing allocated). */
function spells(text: string, pieces: readonly string[]): boolean {
  let offset = 0;
  for (const piece of pieces) {
    if (!text.startsWith(piece, offset)) return false;
    offset += piece.length;
  }
  return offset === text.length;
}
