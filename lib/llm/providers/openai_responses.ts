/**
 * The `openai_responses` provider: OpenAI's Responses API (`POST /responses`), streamed over
 * `openai_http.ts` (the `openai` SDK's SSE parsing and error classes, not its client).
 *
 * @module
 */
import type OpenAI from "openai";
import { ChatProviderError } from "../errors.ts";
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
  scrub,
} from "./openai_client.ts";
import { type ChunkReader, sdkStream } from "./sdk_stream.ts";

/** Options of {@link createOpenAIResponsesProvider}. */
export type OpenAIResponsesOptions = OpenAIEndpointOptions;

/**
 * Create a Responses API provider (name `openai-responses`). Requests are sent with
 * `store: false`; with thinking on they ask for `reasoning: {effort, summary: "auto"}` and
 * encrypted reasoning, which comes back as a think part's `encrypted` and is replayed in
 * history as a `reasoning` input item.
 *
 * Stream mapping: `response.output_text.delta` → text; `response.reasoning_summary_part.added`
 * → empty think (a paragraph break between summaries), `response.reasoning_summary_text.delta`
 * → think; a finished reasoning item → empty think carrying `encrypted`; an added
 * `function_call` item → {@link ToolCall} (id = `call_id`); `response.function_call_arguments.delta`
 * → `ToolCallPart`; `response.completed` → usage. The message id is the id of the latest output
 * item, as in the reference.
 *
 * @throws {ChatProviderError} when the client cannot be created (e.g. no API key).
 */
export function createOpenAIResponsesProvider(opts: OpenAIResponsesOptions): ChatProvider {
  const client = createEndpointClient(opts);
  return new OpenAIResponsesProvider(opts, client);
}

class OpenAIResponsesProvider implements ChatProvider {
  readonly name = "openai-responses";
  readonly #opts: OpenAIResponsesOptions;
  readonly #client: OpenAIHttpClient;

  constructor(opts: OpenAIResponsesOptions, client: OpenAIHttpClient) {
    this.#opts = opts;
    this.#client = client;
  }

  get modelName(): string {
    return this.#opts.model;
  }

  get thinkingEffort(): ThinkingEffort | null {
    return this.#opts.thinking ?? null;
  }

  async generate(request: ChatRequest): Promise<ChatStream> {
    const body = this.#buildBody(request);
    const ctx = { apiKey: this.#opts.apiKey, signal: request.signal };
    return await sdkStream<OpenAI.Responses.ResponseStreamEvent>({
      open: () =>
        this.#client.responseStream<OpenAI.Responses.ResponseStreamEvent>(body, {
          signal: request.signal,
        }),
      read: responsesEventReader(ctx.apiKey),
      convertError: (err) => convertOpenAIError(err, ctx),
      signal: request.signal,
    });
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new OpenAIResponsesProvider({ ...this.#opts, thinking: effort }, this.#client);
  }

  #buildBody(request: ChatRequest): Record<string, unknown> {
    const opts = this.#opts;
    const developer = isOpenAIModel(opts.model);
    const input: Record<string, unknown>[] = [];
    if (request.systemPrompt) {
      input.push({ role: developer ? "developer" : "system", content: request.systemPrompt });
    }
    for (const m of request.history) input.push(...toInputItems(m, developer));
    const body: Record<string, unknown> = {
      model: opts.model,
      input,
      store: false,
      stream: true,
    };
    if (request.tools.length > 0) body.tools = request.tools.map(toResponsesTool);
    if (request.maxCompletionTokens !== undefined) {
      body.max_output_tokens = request.maxCompletionTokens;
    }
    if (opts.temperature !== undefined) body.temperature = opts.temperature;
    if (opts.topP !== undefined) body.top_p = opts.topP;
    if (opts.promptCacheKey) body.prompt_cache_key = opts.promptCacheKey;
    const effort = opts.thinking ?? null;
    if (effort !== null && effort !== "off") {
      body.reasoning = { effort, summary: "auto" };
      body.include = ["reasoning.encrypted_content"];
    }
    return body;
  }
}

/** Whether a model id names an OpenAI model (those take the `developer` role for system text). */
function isOpenAIModel(model: string): boolean {
  return /^(gpt-|o\d|chatgpt-|codex-|computer-use-)/i.test(model);
}

function toResponsesTool(t: ToolSpec): Record<string, unknown> {
  return {
    type: "function",
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    strict: false,
  };
}

/** Convert one history message into Responses input items. */
function toInputItems(m: NormalizedMessage, developer: boolean): Record<string, unknown>[] {
  if (m.role === "tool") {
    return [{
      type: "function_call_output",
      call_id: m.tool_call_id ?? "",
      output: toFunctionOutput(m.content),
    }];
  }
  const role = m.role === "system" && developer ? "developer" : m.role;
  const items: Record<string, unknown>[] = [];
  let pending: ContentPart[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    items.push({
      type: "message",
      role,
      content: role === "assistant" ? toOutputContent(pending) : toInputContent(pending),
    });
    pending = [];
  };
  const parts = m.content;
  for (let i = 0; i < parts.length;) {
    const p = parts[i];
    if (p.type !== "think") {
      pending.push(p);
      i++;
      continue;
    }
    flush();
    // Consecutive think parts with the same signature form one reasoning item.
    const encrypted = p.encrypted;
    const summary: Record<string, string>[] = [];
    while (i < parts.length) {
      const q = parts[i];
      if (q.type !== "think" || q.encrypted !== encrypted) break;
      summary.push({ type: "summary_text", text: q.think });
      i++;
    }
    items.push({ type: "reasoning", summary, encrypted_content: encrypted });
  }
  flush();
  for (const tc of m.tool_calls ?? []) {
    items.push({
      type: "function_call",
      call_id: tc.id,
      name: tc.function.name,
      arguments: tc.function.arguments || "{}",
    });
  }
  return items;
}

function toInputContent(parts: ContentPart[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const p of parts) {
    if (p.type === "text") {
      if (p.text) out.push({ type: "input_text", text: p.text });
    } else if (p.type === "image_url") {
      out.push({ type: "input_image", detail: "auto", image_url: p.image_url.url });
    } else if (p.type === "audio_url") {
      const file = audioFile(p.audio_url.url, true);
      if (file) out.push(file);
    }
  }
  return out;
}

function toOutputContent(parts: ContentPart[]): Record<string, unknown>[] {
  return parts.filter((p) => p.type === "text" && p.text !== "").map((p) => ({
    type: "output_text",
    text: (p as { text: string }).text,
    annotations: [],
  }));
}

function toFunctionOutput(parts: ContentPart[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const p of parts) {
    if (p.type === "text") {
      if (p.text) out.push({ type: "input_text", text: p.text });
    } else if (p.type === "image_url") {
      out.push({ type: "input_image", image_url: p.image_url.url });
    } else if (p.type === "audio_url") {
      const file = audioFile(p.audio_url.url, false);
      if (file) out.push(file);
    }
  }
  return out;
}

/** Audio as an `input_file` item (inline data or a URL), or null when unsupported. */
function audioFile(url: string, withName: boolean): Record<string, unknown> | null {
  if (url.startsWith("http://") || url.startsWith("https://")) {
    return { type: "input_file", file_url: url };
  }
  const m = /^data:audio\/([^;,]+)[^,]*,(.*)$/s.exec(url);
  if (!m) return null;
  if (!withName) return { type: "input_file", file_data: m[2] };
  const sub = m[1].toLowerCase();
  const ext = sub === "mp3" || sub === "mpeg" ? "mp3" : sub === "wav" ? "wav" : null;
  return ext ? { type: "input_file", file_data: m[2], filename: `inline.${ext}` } : null;
}

interface RawResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number | null } | null;
}

function toTokenUsage(u: RawResponsesUsage): TokenUsage {
  const cached = u.input_tokens_details?.cached_tokens ?? 0;
  return {
    input_other: (u.input_tokens ?? 0) - cached,
    output: u.output_tokens ?? 0,
    input_cache_read: cached,
    input_cache_creation: 0,
  };
}

/** The reader of Responses stream events (see `sdk_stream.ts`). */
function responsesEventReader(apiKey: string): ChunkReader<OpenAI.Responses.ResponseStreamEvent> {
  return function* (ev, meta) {
    switch (ev.type) {
      case "response.output_text.delta":
        yield { type: "text", text: ev.delta };
        break;
      case "response.output_item.added": {
        const item = ev.item;
        if (item.id) meta.id = item.id;
        if (item.type === "function_call") {
          const call: ToolCall = {
            type: "function",
            id: item.call_id || crypto.randomUUID(),
            function: { name: item.name, arguments: item.arguments ?? null },
            extras: null,
          };
          yield call;
        }
        break;
      }
      case "response.output_item.done": {
        const item = ev.item;
        if (item.id) meta.id = item.id;
        if (item.type === "reasoning") {
          yield { type: "think", think: "", encrypted: item.encrypted_content ?? null };
        }
        break;
      }
      case "response.function_call_arguments.delta":
        yield { arguments_part: ev.delta };
        break;
      case "response.reasoning_summary_part.added":
        yield { type: "think", think: "", encrypted: null };
        break;
      case "response.reasoning_summary_text.delta":
        yield { type: "think", think: ev.delta, encrypted: null };
        break;
      case "response.completed":
        if (ev.response.usage) meta.usage = toTokenUsage(ev.response.usage);
        break;
      case "response.failed": {
        const e = ev.response.error;
        const detail = e ? `${e.code}: ${e.message}` : "no details";
        throw new ChatProviderError(`The response failed (${scrub(detail, apiKey)}).`);
      }
    }
  };
}
