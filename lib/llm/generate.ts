/**
 * Assemble one streamed completion into an assistant message, handing each tool call to the
 * caller the moment it is complete (so tools start while the model is still streaming).
 *
 * @module
 */
import { APIEmptyResponseError } from "./errors.ts";
import type {
  ContentPart,
  NormalizedMessage,
  TokenUsage,
  ToolCall,
  ToolCallPart,
} from "./message.ts";
import type { ChatProvider, ChatRequest, StreamPart } from "./provider.ts";

/** Callbacks of {@link generate}. */
export interface GenerateCallbacks {
  /** Every raw streamed piece, in order; a returned promise is awaited (backpressure). */
  onPart?(part: StreamPart): void | Promise<void>;
  /** A tool call whose arguments are complete. */
  onToolCall?(call: ToolCall): void;
  /**
   * A string that is exactly `pieces` joined, when the caller already has one (the wire joined
   * the same streamed pieces for its merged event): the text or think part takes it instead of
   * joining a copy. `undefined` to have them joined.
   */
  joinText?(pieces: readonly string[]): string | undefined;
}

/** The assembled result of one completion. */
export interface GenerateResult {
  /** The assistant message (content parts plus tool calls). */
  message: NormalizedMessage;
  /** Provider message id. */
  id: string | null;
  /** Token usage. */
  usage: TokenUsage | null;
}

function isToolCall(p: StreamPart): p is ToolCall {
  return "function" in p;
}
function isToolCallPart(p: StreamPart): p is ToolCallPart {
  return "arguments_part" in p;
}

/** Stream a completion, merge its pieces and dispatch complete tool calls. */
export async function generate(
  provider: ChatProvider,
  request: ChatRequest,
  callbacks: GenerateCallbacks = {},
): Promise<GenerateResult> {
  const stream = await provider.generate(request);
  const content: ContentPart[] = [];
  const toolCalls: ToolCall[] = [];
  let pending: ContentPart | ToolCall | null = null;
  // pieces of a pending text or think part, joined once (not a rope of one concatenation per
  // piece)
  let texts: string[] | null = null;

  const flush = () => {
    if (pending === null) return;
    if (texts !== null && "type" in pending) {
      const text = callbacks.joinText?.(texts) ?? texts.join("");
      if (pending.type === "text") pending.text = text;
      else if (pending.type === "think") pending.think = text;
    }
    texts = null;
    if ("function" in pending) {
      toolCalls.push(pending);
      callbacks.onToolCall?.(pending);
    } else {
      content.push(pending);
    }
    pending = null;
  };

  for await (const part of stream) {
    request.signal?.throwIfAborted();
    const backpressure = callbacks.onPart?.(part);
    if (backpressure) await backpressure;
    if (isToolCallPart(part)) {
      if (pending !== null && "function" in pending) {
        const fn: ToolCall["function"] = pending.function;
        if (part.arguments_part !== null) fn.arguments = (fn.arguments ?? "") + part.arguments_part;
      }
      // Orphan fragments (no call before them) are dropped.
      continue;
    }
    if (isToolCall(part)) {
      flush();
      pending = structuredClone(part);
      continue;
    }
    if (pending !== null && !("function" in pending)) {
      const a = pending;
      if (a.type === "text" && part.type === "text") {
        (texts ??= [a.text]).push(part.text);
        continue;
      }
      if (a.type === "think" && part.type === "think" && !a.encrypted) {
        (texts ??= [a.think]).push(part.think);
        if (part.encrypted) a.encrypted = part.encrypted;
        continue;
      }
    }
    flush();
    pending = structuredClone(part);
  }
  flush();
  request.signal?.throwIfAborted();

  const hasText = content.some((p) => p.type === "text" && p.text.trim() !== "");
  const hasMedia = content.some((p) => p.type !== "text" && p.type !== "think");
  if (toolCalls.length === 0 && !hasText && !hasMedia) {
    throw new APIEmptyResponseError();
  }
  const message: NormalizedMessage = { role: "assistant", content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return { message, id: stream.id, usage: stream.usage };
}
