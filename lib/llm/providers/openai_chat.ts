/**
 * Chat Completions providers: `kimi` (Moonshot) and `openai_legacy` (any OpenAI-compatible
 * `/chat/completions` endpoint), streamed over `openai_http.ts` (the `openai` SDK's SSE parsing
 * and error classes, not its client).
 *
 * @module
 */
import type OpenAI from "openai";
import type { ContentPart, NormalizedMessage, TokenUsage, ToolCall } from "../message.ts";
import type {
  ChatProvider,
  ChatRequest,
  ChatStream,
  ThinkingEffort,
  ToolSpec,
} from "../provider.ts";
import {
  convertOpenAIError,
  createEndpointClient,
  type OpenAIEndpointOptions,
  type OpenAIHttpClient,
} from "./openai_client.ts";
import { KimiVideoUploads } from "./kimi_video_upload.ts";
import { type ChunkReader, sdkStream } from "./sdk_stream.ts";

/** Options of {@link createOpenAIChatProvider}. */
export interface OpenAIChatOptions extends OpenAIEndpointOptions {
  /** Provider type: `kimi` adds Moonshot's extensions, `openai_legacy` is plain Chat Completions. */
  kind: "kimi" | "openai_legacy";
  /**
   * Message field that carries reasoning, both in streamed deltas and in assistant history.
   * Default `reasoning_content`; `""` or null disables reasoning (openai_legacy only; kimi
   * always uses `reasoning_content`).
   */
  reasoningKey?: string | null;
  /** kimi: sent as `thinking.keep` while thinking is enabled. */
  thinkingKeep?: string;
}

/**
 * Create a Chat Completions provider. Requests stream with `stream_options.include_usage`;
 * deltas become parts in arrival order: reasoning → think, content → text, the first fragment
 * of each tool call (the one naming it) → {@link ToolCall}, later argument fragments →
 * `ToolCallPart`.
 *
 * @throws {ChatProviderError} when the client cannot be created (e.g. no API key).
 */
export function createOpenAIChatProvider(opts: OpenAIChatOptions): ChatProvider {
  const client = createEndpointClient(opts);
  return new OpenAIChatProvider(
    opts,
    client,
    opts.kind === "kimi" ? new KimiVideoUploads(client) : null,
  );
}

class OpenAIChatProvider implements ChatProvider {
  readonly #opts: OpenAIChatOptions;
  readonly #client: OpenAIHttpClient;
  readonly #videos: KimiVideoUploads | null;

  constructor(opts: OpenAIChatOptions, client: OpenAIHttpClient, videos: KimiVideoUploads | null) {
    this.#opts = opts;
    this.#client = client;
    this.#videos = videos;
  }

  get name(): string {
    return this.#opts.kind === "kimi" ? "kimi" : "openai";
  }

  get modelName(): string {
    return this.#opts.model;
  }

  get thinkingEffort(): ThinkingEffort | null {
    return this.#opts.thinking ?? null;
  }

  get #reasoningKey(): string | null {
    if (this.#opts.kind === "kimi") return "reasoning_content";
    const key = this.#opts.reasoningKey;
    return key === undefined ? "reasoning_content" : (key || null);
  }

  generate(request: ChatRequest): Promise<ChatStream> {
    const ctx = { apiKey: this.#opts.apiKey, signal: request.signal };
    return sdkStream({
      open: async () => {
        // Kimi takes videos as uploaded files (ms:// references), not inline data
        const history = this.#videos
          ? await this.#videos.resolve(request.history, request.signal)
          : request.history;
        const body = this.#buildBody({ ...request, history });
        return await this.#client.chatCompletionStream<
          OpenAI.Chat.Completions.ChatCompletionChunk
        >(body, { signal: request.signal });
      },
      read: chatChunkReader(this.#reasoningKey),
      convertError: (err) => convertOpenAIError(err, ctx),
      signal: request.signal,
    });
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new OpenAIChatProvider({ ...this.#opts, thinking: effort }, this.#client, this.#videos);
  }

  #buildBody(request: ChatRequest): Record<string, unknown> {
    const opts = this.#opts;
    const kimi = opts.kind === "kimi";
    const reasoningKey = this.#reasoningKey;
    const messages: Record<string, unknown>[] = [];
    if (request.systemPrompt) messages.push({ role: "system", content: request.systemPrompt });
    for (const m of request.history) messages.push(toChatMessage(m, reasoningKey));

    const body: Record<string, unknown> = {
      model: opts.model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.tools.length > 0) body.tools = request.tools.map((t) => toChatTool(t, kimi));
    if (request.maxCompletionTokens !== undefined) {
      body[kimi ? "max_completion_tokens" : "max_tokens"] = request.maxCompletionTokens;
    }
    if (opts.temperature !== undefined) body.temperature = opts.temperature;
    if (opts.topP !== undefined) body.top_p = opts.topP;
    if (opts.promptCacheKey) body.prompt_cache_key = opts.promptCacheKey;

    const effort = opts.thinking ?? null;
    if (kimi) {
      if (effort !== null) {
        const thinking: Record<string, string> = {
          type: effort === "off" ? "disabled" : "enabled",
        };
        if (effort !== "off" && opts.thinkingKeep) thinking.keep = opts.thinkingKeep;
        body.thinking = thinking;
      }
    } else if (effort !== null && effort !== "off") {
      body.reasoning_effort = effort;
    } else if (effort === null && reasoningKey && historyHasThinking(request.history)) {
      // Some gateways reject reasoning fields in history unless reasoning is requested.
      body.reasoning_effort = "medium";
    }
    return body;
  }
}

function historyHasThinking(history: readonly NormalizedMessage[]): boolean {
  return history.some((m) => m.content.some((p) => p.type === "think"));
}

/** Convert one history message into a Chat Completions message. */
function toChatMessage(m: NormalizedMessage, reasoningKey: string | null): Record<string, unknown> {
  let reasoning = "";
  const parts: ContentPart[] = [];
  for (const p of m.content) {
    if (p.type === "think") reasoning += p.think;
    else parts.push(p);
  }
  const out: Record<string, unknown> = { role: m.role };
  if (m.name !== undefined) out.name = m.name;
  if (parts.length === 1 && parts[0].type === "text") out.content = parts[0].text;
  else if (parts.length === 0) out.content = "";
  else out.content = parts.map(toChatContentPart);
  if (m.tool_calls && m.tool_calls.length > 0) {
    out.tool_calls = m.tool_calls.map((tc) => ({
      type: "function",
      id: tc.id,
      function: { name: tc.function.name, arguments: tc.function.arguments ?? "{}" },
    }));
  }
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (reasoning && reasoningKey) out[reasoningKey] = reasoning;
  return out;
}

function toChatContentPart(p: ContentPart): Record<string, unknown> {
  const media = (ref: { url: string; id: string | null }) =>
    ref.id === null ? { url: ref.url } : { url: ref.url, id: ref.id };
  switch (p.type) {
    case "text":
      return { type: "text", text: p.text };
    case "image_url":
      return { type: "image_url", image_url: media(p.image_url) };
    case "video_url":
      return { type: "video_url", video_url: media(p.video_url) };
    case "audio_url":
      return { type: "audio_url", audio_url: media(p.audio_url) };
    case "think":
      return { type: "text", text: p.think };
  }
}

function toChatTool(t: ToolSpec, kimi: boolean): Record<string, unknown> {
  // Kimi builtin functions are named `$...` and take no schema.
  if (kimi && t.name.startsWith("$")) {
    return { type: "builtin_function", function: { name: t.name } };
  }
  return {
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  };
}

interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
}

/** Map a Chat Completions usage record (OpenAI or Moonshot shape) to {@link TokenUsage}. */
function toTokenUsage(u: RawUsage): TokenUsage {
  const prompt = u.prompt_tokens ?? 0;
  const cached = "cached_tokens" in u
    ? (u.cached_tokens ?? 0)
    : (u.prompt_tokens_details?.cached_tokens ?? 0);
  return {
    input_other: prompt - cached,
    output: u.completion_tokens ?? 0,
    input_cache_read: cached,
    input_cache_creation: 0,
  };
}

/** The reader of Chat Completions chunks (see `sdk_stream.ts`). */
function chatChunkReader(
  reasoningKey: string | null,
): ChunkReader<OpenAI.Chat.Completions.ChatCompletionChunk> {
  return function* (chunk, meta) {
    if (chunk.id) meta.id = chunk.id;
    if (chunk.usage) meta.usage = toTokenUsage(chunk.usage as RawUsage);
    const choice = chunk.choices?.[0] as
      | (OpenAI.Chat.Completions.ChatCompletionChunk.Choice & { usage?: RawUsage })
      | undefined;
    if (!choice) return;
    // Moonshot's older stream format reports usage inside the last choice.
    if (!chunk.usage && choice.usage) meta.usage = toTokenUsage(choice.usage);
    const delta = (choice.delta ?? {}) as
      & Record<string, unknown>
      & OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta;
    if (reasoningKey) {
      const r = delta[reasoningKey];
      if (typeof r === "string") yield { type: "think", think: r, encrypted: null };
    }
    if (delta.content) yield { type: "text", text: delta.content };
    for (const tc of delta.tool_calls ?? []) {
      const fn = tc.function;
      if (!fn) continue;
      if (fn.name) {
        const call: ToolCall = {
          type: "function",
          id: tc.id || crypto.randomUUID(),
          function: { name: fn.name, arguments: fn.arguments ?? null },
          extras: null,
        };
        yield call;
      } else if (fn.arguments) {
        yield { arguments_part: fn.arguments };
      }
    }
  };
}
