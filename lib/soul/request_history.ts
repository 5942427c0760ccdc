/**
 * The history a step sends to the model, built incrementally: the context's messages with every
 * tool call answered ({@link withToolResults}) and adjacent user messages merged
 * ({@link mergeAdjacentUserMessages}). Both passes are local, so the part of the history that
 * later appends cannot change is normalized once and kept; each step normalizes only the tail
 * since the last stable boundary. At turn 2,000 a step then costs what it costs at turn 1 (the
 * provider still serializes the whole request: that part must be linear).
 *
 * @module
 */
import type { NormalizedMessage } from "../llm/message.ts";
import { estimateRequestMessageTokens } from "../llm/token_estimate.ts";
import { withToolResults } from "./tool_pairing.ts";

/** Whether a message is a notification (never merged with its neighbours). */
function isNotification(m: NormalizedMessage): boolean {
  const first = m.content[0];
  return first?.type === "text" && first.text.startsWith("<notification ");
}

/** Whether a message merges with an adjacent user message of the same kind. */
function mergeable(m: NormalizedMessage): boolean {
  return m.role === "user" && !isNotification(m);
}

/** Merge adjacent user messages (notifications excluded) for the request; context unchanged. */
export function mergeAdjacentUserMessages(
  history: readonly NormalizedMessage[],
): NormalizedMessage[] {
  const out: NormalizedMessage[] = [];
  for (const m of history) {
    const prev = out[out.length - 1];
    if (prev && mergeable(prev) && mergeable(m)) {
      out[out.length - 1] = { ...prev, content: [...prev.content, ...m.content] };
    } else {
      out.push(m);
    }
  }
  return out;
}

/** The request form of a whole history (what {@link RequestHistory} computes incrementally). */
export function normalizeHistory(history: readonly NormalizedMessage[]): NormalizedMessage[] {
  return mergeAdjacentUserMessages(withToolResults(history));
}

/** A built request history and its token estimate. */
export interface BuiltHistory {
  /** The messages to send. */
  messages: NormalizedMessage[];
  /** Estimate of their tokens (sum of {@link estimateRequestMessageTokens}). */
  tokens: number;
}

/**
 * Normalizes a context's history for requests, keeping what later appends cannot change. One
 * per soul; it follows one history array (the context replaces the array when it is cleared or
 * reverted, which starts it over).
 */
export class RequestHistory {
  #source: readonly NormalizedMessage[] | null = null;
  /** How many source messages are folded into {@link #stable}. */
  #consumed = 0;
  #stable: NormalizedMessage[] = [];
  #stableTokens = 0;

  /**
   * The request form of `history` followed by `extra` (e.g. the step's reminders), equal to
   * `normalizeHistory([...history, ...extra])`.
   */
  build(
    history: readonly NormalizedMessage[],
    extra: readonly NormalizedMessage[] = [],
  ): BuiltHistory {
    if (history !== this.#source || history.length < this.#consumed) {
      this.#source = history;
      this.#consumed = 0;
      this.#stable = [];
      this.#stableTokens = 0;
    }
    // Advance the stable part to the last boundary: a message that is no tool result (so no
    // earlier call's results continue past it) and does not merge with the one before it.
    let boundary = this.#consumed;
    for (let j = history.length - 1; j > this.#consumed; j--) {
      const m = history[j];
      if (m.role !== "tool" && !(mergeable(m) && mergeable(history[j - 1]))) {
        boundary = j;
        break;
      }
    }
    if (boundary > this.#consumed) {
      for (const m of normalizeHistory(history.slice(this.#consumed, boundary))) {
        this.#stable.push(m);
        this.#stableTokens += estimateRequestMessageTokens(m);
      }
      this.#consumed = boundary;
    }
    const tail = normalizeHistory([...history.slice(this.#consumed), ...extra]);
    let tokens = this.#stableTokens;
    for (const m of tail) tokens += estimateRequestMessageTokens(m);
    return { messages: this.#stable.concat(tail), tokens };
  }
}
