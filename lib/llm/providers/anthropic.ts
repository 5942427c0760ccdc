/**
 * The `anthropic` provider: Claude through the Messages API of the official
 * `@anthropic-ai/sdk`, streamed. Thinking is adaptive on models that have it (Opus/Sonnet 4.6
 * and later) and budget-based before; thinking signatures travel in the think part's
 * `encrypted` field so they can be replayed. The system prompt, the tool list and the last
 * message carry prompt-cache breakpoints.
 *
 * @module
 */
import Anthropic from "@anthropic-ai/sdk";
import { ChatProviderError } from "../errors.ts";
import { log } from "../../log.ts";
import type { ContentPart, NormalizedMessage, ToolCall } from "../message.ts";
import type { ChatProvider, ChatRequest, ChatStream, ThinkingEffort } from "../provider.ts";
import { parseDataUrl, parseToolArguments } from "./media.ts";
import { withSdkConsole } from "./sdk_console.ts";
import { type ChunkReader, sdkStream, type StreamMeta } from "./sdk_stream.ts";
import { convertSdkError, type ErrorContext, errorMessage, scrub } from "./sdk_errors.ts";

/** Options of {@link createAnthropicProvider}. */
export interface AnthropicOptions {
  /** API base URL (the SDK appends `/v1/messages`). Empty: the SDK default. */
  baseUrl: string;
  /** API key (`x-api-key`). Never appears in error messages. */
  apiKey: string;
  /** Model id. */
  model: string;
  /** Extra headers. */
  customHeaders?: Record<string, string>;
  /** `User-Agent`. */
  userAgent: string;
  /** `max_tokens` when the caller gives no budget (the reference's default: 50000). */
  defaultMaxTokens?: number;
  /** `metadata.user_id` (the session id). */
  userId?: string;
  /** Thinking effort; null leaves thinking off (the API default). */
  thinking?: ThinkingEffort | null;
  /** Fetch (tests, permission wrappers). */
  fetch?: typeof fetch;
}

const SDK_ERRORS = {
  APIError: Anthropic.APIError,
  APIConnectionError: Anthropic.APIConnectionError,
  APIConnectionTimeoutError: Anthropic.APIConnectionTimeoutError,
  APIUserAbortError: Anthropic.APIUserAbortError,
};

/** SDK log lines go to kimi's log file. */
const sdkLogger = {
  debug: () => {},
  info: () => {},
  warn: (...args: unknown[]) => log("WARNING", "anthropic", args.map(String).join(" ")),
  error: (...args: unknown[]) => log("ERROR", "anthropic", args.map(String).join(" ")),
};

/** Create an Anthropic provider. */
export function createAnthropicProvider(opts: AnthropicOptions): ChatProvider {
  let client: Anthropic;
  try {
    client = withSdkConsole("anthropic", () =>
      new Anthropic({
        apiKey: opts.apiKey,
        ...(opts.baseUrl ? { baseURL: opts.baseUrl.replace(/\/+$/, "") } : {}),
        maxRetries: 0,
        logger: sdkLogger,
        defaultHeaders: { "User-Agent": opts.userAgent, ...(opts.customHeaders ?? {}) },
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      }));
  } catch (err) {
    throw new ChatProviderError(
      `Cannot create the Anthropic client for ${opts.baseUrl}: ${
        scrub(errorMessage(err), opts.apiKey)
      }`,
      { cause: err },
    );
  }
  return new AnthropicProvider(opts, client);
}

/** Whether a model takes `thinking: {type: "adaptive"}` (Claude 4.6 and later, Mythos). */
export function supportsAdaptiveThinking(model: string): boolean {
  const m = model.toLowerCase();
  if (m.includes("mythos")) return true;
  const v = /(?:opus|sonnet|haiku)[.-](\d+)[.-](\d{1,2})(?!\d)/.exec(m);
  if (!v) return false;
  const major = Number(v[1]);
  const minor = Number(v[2]);
  return major > 4 || (major === 4 && minor >= 6);
}

/** Marks a think part that carries an Anthropic `redacted_thinking` block's data. */
const REDACTED_PREFIX = "anthropic-redacted:";

const BUDGETS: Record<Exclude<ThinkingEffort, "off">, number> = {
  low: 1024,
  medium: 4096,
  high: 32000,
};

class AnthropicProvider implements ChatProvider {
  readonly #opts: AnthropicOptions;
  readonly #client: Anthropic;

  constructor(opts: AnthropicOptions, client: Anthropic) {
    this.#opts = opts;
    this.#client = client;
  }

  get name(): string {
    return "anthropic";
  }

  get modelName(): string {
    return this.#opts.model;
  }

  get thinkingEffort(): ThinkingEffort | null {
    return this.#opts.thinking ?? null;
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new AnthropicProvider({ ...this.#opts, thinking: effort }, this.#client);
  }

  async generate(request: ChatRequest): Promise<ChatStream> {
    const ctx: ErrorContext = { apiKey: this.#opts.apiKey, signal: request.signal };
    const body = this.#buildBody(request);
    const headers: Record<string, string> = {};
    const effort = this.#opts.thinking ?? null;
    if (effort !== null && effort !== "off" && !supportsAdaptiveThinking(this.#opts.model)) {
      headers["anthropic-beta"] = "interleaved-thinking-2025-05-14";
    }
    return await sdkStream<Record<string, unknown>>({
      open: async () => {
        // The SDK prints model deprecation notices with console.warn while it builds the
        // request (synchronously); they belong in the log, not on the user's screen or the wire.
        const pending = withSdkConsole("anthropic", () =>
          this.#client.messages.create(
            body as unknown as Anthropic.MessageCreateParamsStreaming,
            { signal: request.signal, headers },
          ));
        return await pending as unknown as AsyncIterable<Record<string, unknown>>;
      },
      read: anthropicEventReader(),
      convertError: (err) => convertSdkError(err, ctx, SDK_ERRORS),
      signal: request.signal,
    });
  }

  #buildBody(request: ChatRequest): Record<string, unknown> {
    const opts = this.#opts;
    const body: Record<string, unknown> = {
      model: opts.model,
      max_tokens: request.maxCompletionTokens ?? opts.defaultMaxTokens ?? 50000,
      messages: toAnthropicMessages(request.history),
      stream: true,
    };
    if (request.systemPrompt) {
      body.system = [{
        type: "text",
        text: request.systemPrompt,
        cache_control: { type: "ephemeral" },
      }];
    }
    if (request.tools.length > 0) {
      body.tools = request.tools.map((t, i) => ({
        name: t.name,
        description: t.description,
        input_schema: t.parameters,
        ...(i === request.tools.length - 1 ? { cache_control: { type: "ephemeral" } } : {}),
      }));
    }
    if (opts.userId) body.metadata = { user_id: opts.userId };
    const effort = opts.thinking ?? null;
    if (effort === "off") body.thinking = { type: "disabled" };
    else if (effort !== null) {
      if (supportsAdaptiveThinking(opts.model)) {
        body.thinking = { type: "adaptive", display: "summarized" };
        body.output_config = { effort };
      } else {
        const budget = BUDGETS[effort];
        body.thinking = { type: "enabled", budget_tokens: budget };
        if ((body.max_tokens as number) <= budget) body.max_tokens = budget + 1024;
      }
    }
    return body;
  }
}

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: "user" | "assistant";
  content: Block[];
}

function mediaBlock(url: string): Block {
  const data = parseDataUrl(url);
  if (data) {
    return {
      type: "image",
      source: { type: "base64", media_type: data.mimeType, data: data.base64 },
    };
  }
  return { type: "image", source: { type: "url", url } };
}

function contentBlocks(parts: readonly ContentPart[], withThinking: boolean): Block[] {
  const out: Block[] = [];
  for (const p of parts) {
    switch (p.type) {
      case "text":
        if (p.text) out.push({ type: "text", text: p.text });
        break;
      case "think":
        // Only signed thinking can be sent back; unsigned reasoning is dropped.
        if (withThinking && p.encrypted?.startsWith(REDACTED_PREFIX)) {
          out.push({ type: "redacted_thinking", data: p.encrypted.slice(REDACTED_PREFIX.length) });
        } else if (withThinking && p.encrypted) {
          out.push({ type: "thinking", thinking: p.think, signature: p.encrypted });
        }
        break;
      case "image_url":
        out.push(mediaBlock(p.image_url.url));
        break;
      case "video_url":
        out.push({ type: "text", text: `[video: ${p.video_url.url.slice(0, 100)}]` });
        break;
      case "audio_url":
        out.push({ type: "text", text: `[audio: ${p.audio_url.url.slice(0, 100)}]` });
        break;
    }
  }
  return out;
}

/** Convert history to Anthropic messages (tool results become user turns; same roles merge). */
export function toAnthropicMessages(history: readonly NormalizedMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  const push = (role: "user" | "assistant", blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of history) {
    if (m.role === "assistant") {
      const blocks = contentBlocks(m.content, true);
      for (const tc of m.tool_calls ?? []) {
        blocks.push({
          type: "tool_use",
          id: tc.id,
          name: tc.function.name,
          input: parseToolArguments(tc.function.arguments),
        });
      }
      push("assistant", blocks);
    } else if (m.role === "tool") {
      const inner = contentBlocks(m.content, false);
      push("user", [{
        type: "tool_result",
        tool_use_id: m.tool_call_id ?? "",
        content: inner.length ? inner : [{ type: "text", text: "(empty)" }],
      }]);
    } else if (m.role === "system") {
      push("user", [{ type: "text", text: `<system>${extract(m.content)}</system>` }]);
    } else {
      push("user", contentBlocks(m.content, false));
    }
  }
  const last = out[out.length - 1];
  const lastBlock = last?.content[last.content.length - 1];
  if (lastBlock && lastBlock.type !== "thinking") lastBlock.cache_control = { type: "ephemeral" };
  return out;
}

function extract(parts: readonly ContentPart[]): string {
  return parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}

interface RawUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/**
 * The reader of Anthropic stream events (see `sdk_stream.ts`); usage fields arrive in parts
 * (`message_start`, then `message_delta`) and are merged.
 */
function anthropicEventReader(): ChunkReader<Record<string, unknown>> {
  const raw: Required<{ [K in keyof RawUsage]: number }> = {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const absorb = (meta: StreamMeta, u: RawUsage | undefined) => {
    if (!u) return;
    for (const k of Object.keys(raw) as (keyof RawUsage)[]) {
      const v = u[k];
      if (typeof v === "number") raw[k] = v;
    }
    meta.usage = {
      input_other: raw.input_tokens,
      output: raw.output_tokens,
      input_cache_read: raw.cache_read_input_tokens,
      input_cache_creation: raw.cache_creation_input_tokens,
    };
  };
  return function* (ev, meta) {
    switch (ev.type) {
      case "message_start": {
        const msg = ev.message as { id?: string; usage?: RawUsage } | undefined;
        if (msg?.id) meta.id = msg.id;
        absorb(meta, msg?.usage);
        break;
      }
      case "message_delta":
        absorb(meta, ev.usage as RawUsage | undefined);
        break;
      case "content_block_start": {
        const block = ev.content_block as Record<string, unknown>;
        if (block.type === "text" && typeof block.text === "string" && block.text) {
          yield { type: "text", text: block.text };
        } else if (block.type === "thinking" && typeof block.thinking === "string") {
          if (block.thinking) yield { type: "think", think: block.thinking, encrypted: null };
        } else if (block.type === "redacted_thinking" && typeof block.data === "string") {
          // encrypted reasoning: kept (marked) so it can be replayed verbatim
          yield { type: "think", think: "", encrypted: REDACTED_PREFIX + block.data };
        } else if (block.type === "tool_use") {
          const input = block.input as Record<string, unknown> | undefined;
          const call: ToolCall = {
            type: "function",
            id: String(block.id ?? crypto.randomUUID()),
            function: {
              name: String(block.name ?? ""),
              arguments: input && Object.keys(input).length ? JSON.stringify(input) : null,
            },
            extras: null,
          };
          yield call;
        }
        break;
      }
      case "content_block_delta": {
        const d = ev.delta as Record<string, unknown>;
        if (d.type === "text_delta") yield { type: "text", text: String(d.text ?? "") };
        else if (d.type === "thinking_delta") {
          yield { type: "think", think: String(d.thinking ?? ""), encrypted: null };
        } else if (d.type === "signature_delta") {
          yield { type: "think", think: "", encrypted: String(d.signature ?? "") };
        } else if (d.type === "input_json_delta") {
          const part = String(d.partial_json ?? "");
          if (part) yield { arguments_part: part };
        }
        break;
      }
    }
  };
}
