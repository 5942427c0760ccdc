/**
 * The one streaming interface every chat provider implements.
 *
 * @module
 */
import type {
  ContentPart,
  NormalizedMessage,
  TokenUsage,
  ToolCall,
  ToolCallPart,
} from "./message.ts";

/** One streamed piece of an assistant message. */
export type StreamPart = ContentPart | ToolCall | ToolCallPart;

/** A tool offered to the model: name, description and JSON Schema of its parameters. */
export interface ToolSpec {
  /** Tool name the model calls. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON Schema (object) of the parameters. */
  parameters: Record<string, unknown>;
}

/** Thinking effort requested from the provider. */
export type ThinkingEffort = "off" | "low" | "medium" | "high";

/** One completion request. */
export interface ChatRequest {
  /** The system prompt. */
  systemPrompt: string;
  /** Tools the model may call. */
  tools: readonly ToolSpec[];
  /** Conversation history, oldest first. */
  history: readonly NormalizedMessage[];
  /** Aborts the request and the stream. */
  signal?: AbortSignal;
  /** Upper bound on generated tokens, when the caller computed one. */
  maxCompletionTokens?: number;
}

/**
 * A streamed completion. Iterate it to get the parts in order; `id` and `usage` are filled in
 * as the stream reports them and are final once iteration ends.
 */
export interface ChatStream extends AsyncIterable<StreamPart> {
  /** Provider message id, when known. */
  readonly id: string | null;
  /** Token usage, when reported. */
  readonly usage: TokenUsage | null;
}

/** A chat provider bound to one model. */
export interface ChatProvider {
  /** Provider name, e.g. `openai`, `kimi`, `scripted_echo`. */
  readonly name: string;
  /** Model id sent to the API. */
  readonly modelName: string;
  /** Current thinking effort, if set. */
  readonly thinkingEffort: ThinkingEffort | null;
  /** Start a completion. Errors before streaming are thrown here; later ones from iteration. */
  generate(request: ChatRequest): Promise<ChatStream>;
  /** A provider for the same model with another thinking effort. */
  withThinking(effort: ThinkingEffort): ChatProvider;
}

/** Capabilities a model may have. */
export type ModelCapability = "image_in" | "video_in" | "thinking" | "always_thinking";

/** A provider plus what the soul needs to know about its model. */
export interface LLM {
  /** The provider. */
  provider: ChatProvider;
  /** Context window in tokens. */
  maxContextSize: number;
  /** What the model can do. */
  capabilities: ReadonlySet<ModelCapability>;
  /** Config alias of the model, or "" for the placeholder. */
  modelAlias: string;
  /**
   * Hard cap on completion tokens for Kimi-backed providers: undefined = bounded by the
   * context size only, 0 = no clamping at all (no budget sent), positive = the cap.
   */
  completionTokenCap?: number;
}
