/**
 * Building tool return values: success, error, rejection, and output capped to what the
 * model may receive.
 *
 * @module
 */
import type { ContentPart } from "../llm/message.ts";
import { brief, type DisplayBlock } from "../wire/display.ts";
import type { ToolReturnValue } from "../wire/messages.ts";

/** Options of {@link toolOk} and {@link toolError}. */
export interface ToolResultOptions {
  /** Output for the model (text or parts). */
  output?: string | ContentPart[];
  /** Message for the model, shown as `<system>message</system>`. */
  message?: string;
  /** One-line summary for the user; becomes the first display block. */
  brief?: string;
  /** Further display blocks. */
  display?: DisplayBlock[];
  /** Extra data for clients. */
  extras?: Record<string, unknown> | null;
}

function displayOf(opts: ToolResultOptions): DisplayBlock[] {
  const blocks: DisplayBlock[] = [];
  if (opts.brief) blocks.push(brief(opts.brief));
  if (opts.display) blocks.push(...opts.display);
  return blocks;
}

/** A successful result. */
export function toolOk(opts: ToolResultOptions = {}): ToolReturnValue {
  return {
    is_error: false,
    output: opts.output ?? "",
    message: opts.message ?? "",
    display: displayOf(opts),
    extras: opts.extras ?? null,
  };
}

/** A failed result. */
export function toolError(opts: ToolResultOptions & { message: string }): ToolReturnValue {
  return {
    is_error: true,
    output: opts.output ?? "",
    message: opts.message,
    display: displayOf(opts),
    extras: opts.extras ?? null,
  };
}

/**
 * Marks a result the user rejected. A symbol-keyed, non-enumerable field of the result itself
 * (never serialized, never compared): the mark travels with the value, not in a process-wide
 * table.
 */
const REJECTION: unique symbol = Symbol("kimi.toolRejection");

/** A tool result that may carry the rejection mark. */
type MarkedResult = ToolReturnValue & { [REJECTION]?: { feedback: string } };

/** Message the model gets when the user rejects a call without feedback (root agent). */
export const REJECTED_MESSAGE =
  "The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed.";
/** Message a subagent gets when the user rejects a call without feedback. */
export const REJECTED_MESSAGE_SUBAGENT =
  "The tool call is rejected by the user. Try a different approach to complete your task, or explain what you need in your final message.";

/** The result of a call the user rejected (`ToolRejectedError`). */
export function toolRejected(
  feedback = "",
  opts: { isRoot?: boolean; denial?: { message: string; rule: string | null } } = {},
): ToolReturnValue {
  // A rule's refusal is not the user's: the model is told why and the turn goes on.
  if (opts.denial) {
    return toolError({
      message: opts.denial.message,
      brief: opts.denial.rule
        ? `Denied by rule ${opts.denial.rule}`
        : "Denied: rules not checkable",
    });
  }
  const rv = feedback
    ? toolError({
      message: `The tool call is rejected by the user. User feedback: ${feedback}`,
      brief: `Rejected: ${feedback}`,
    })
    : toolError({
      message: opts.isRoot === false ? REJECTED_MESSAGE_SUBAGENT : REJECTED_MESSAGE,
      brief: "Rejected by user",
    });
  Object.defineProperty(rv, REJECTION, { value: { feedback }, enumerable: false });
  return rv;
}

/** Whether a result is a user rejection, and with what feedback. */
export function rejectionOf(rv: ToolReturnValue): { feedback: string } | undefined {
  return (rv as MarkedResult)[REJECTION];
}

/** The first brief block's text, or "". */
export function briefOf(rv: ToolReturnValue): string {
  for (const b of rv.display) if (b.type === "brief" && "text" in b) return b.text as string;
  return "";
}

/** Default cap on the output characters of one tool result. */
export const MAX_OUTPUT_CHARS = 50_000;
/** Default cap on one output line. */
export const MAX_LINE_CHARS = 2_000;
const LINE_TRUNCATED = "[...truncated]";
const TRUNCATED_NOTE = " Output is truncated to fit in the message.";

/**
 * Accumulates text output under a total and a per-line cap, remembering whether anything was
 * cut so the final message can say so.
 */
export class ToolResultBuilder {
  readonly #maxChars: number;
  readonly #maxLine: number | null;
  #buf: string[] = [];
  #size = 0;
  #truncated = false;

  /** Create a builder. `maxLineChars: null` disables the per-line cap. */
  constructor(opts: { maxChars?: number; maxLineChars?: number | null } = {}) {
    this.#maxChars = opts.maxChars ?? MAX_OUTPUT_CHARS;
    this.#maxLine = opts.maxLineChars === undefined ? MAX_LINE_CHARS : opts.maxLineChars;
  }

  /** Whether the output was truncated. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /** Whether no more output fits. */
  get full(): boolean {
    return this.#size >= this.#maxChars;
  }

  /** Characters written so far. */
  get size(): number {
    return this.#size;
  }

  /** Append text; returns the number of characters kept. */
  write(text: string): number {
    if (this.full) {
      if (text.length > 0) this.#truncated = true;
      return 0;
    }
    let kept = 0;
    for (const line of text.split(/(?<=\n)/)) {
      if (this.full) {
        this.#truncated = true;
        break;
      }
      let piece = line;
      if (this.#maxLine !== null && piece.length > this.#maxLine) {
        const nl = piece.endsWith("\n") ? "\n" : "";
        piece = piece.slice(0, this.#maxLine - LINE_TRUNCATED.length) + LINE_TRUNCATED + nl;
        this.#truncated = true;
      }
      const room = this.#maxChars - this.#size;
      if (piece.length > room) {
        piece = piece.slice(0, room);
        this.#truncated = true;
      }
      this.#buf.push(piece);
      this.#size += piece.length;
      kept += piece.length;
    }
    return kept;
  }

  /** The text collected so far. */
  text(): string {
    return this.#buf.join("");
  }

  /** Finish with success. A message lacking a final period gets one. */
  ok(message = "", opts: Omit<ToolResultOptions, "output" | "message"> = {}): ToolReturnValue {
    let msg = message;
    if (msg && !/[.!?]$/.test(msg)) msg += ".";
    if (this.#truncated) msg += TRUNCATED_NOTE;
    return toolOk({ ...opts, output: this.text(), message: msg });
  }

  /** Finish with an error. */
  error(
    message: string,
    opts: Omit<ToolResultOptions, "output" | "message"> = {},
  ): ToolReturnValue {
    const msg = this.#truncated ? message + TRUNCATED_NOTE : message;
    return toolError({ ...opts, output: this.text(), message: msg });
  }
}
