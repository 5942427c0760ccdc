/**
 * The `gemini` (`google_genai`) and `vertexai` providers: Gemini through the official
 * `@google/genai` SDK, streamed. Thought summaries become think parts; the thought signatures
 * Gemini attaches to function calls are kept in the tool call's `extras` and sent back with it.
 *
 * @module
 */
import { ApiError, GoogleGenAI } from "@google/genai";
import { APIStatusError, ChatProviderError } from "../errors.ts";
import type { ContentPart, NormalizedMessage, ToolCall } from "../message.ts";
import type { ChatProvider, ChatRequest, ChatStream, ThinkingEffort } from "../provider.ts";
import { parseDataUrl, parseToolArguments } from "./media.ts";
import { withSdkConsole } from "./sdk_console.ts";
import { type ChunkReader, sdkStream } from "./sdk_stream.ts";
import { convertFetchError, type ErrorContext, errorMessage, scrub } from "./sdk_errors.ts";

/** Options of {@link createGeminiProvider}. */
export interface GeminiOptions {
  /** `gemini` (Gemini API) or `vertexai` (Vertex AI). */
  kind: "gemini" | "vertexai";
  /** API base URL; empty for the SDK default. */
  baseUrl: string;
  /** API key; empty on Vertex AI means application default credentials. */
  apiKey: string;
  /** Model id. */
  model: string;
  /** Vertex AI project (`GOOGLE_CLOUD_PROJECT`). */
  project?: string;
  /** Vertex AI location (`GOOGLE_CLOUD_LOCATION`). */
  location?: string;
  /** Extra headers. */
  customHeaders?: Record<string, string>;
  /** `User-Agent`. */
  userAgent: string;
  /** Thinking effort; null leaves the model default. */
  thinking?: ThinkingEffort | null;
}

/** Create a Gemini / Vertex AI provider. */
export function createGeminiProvider(opts: GeminiOptions): ChatProvider {
  let client: GoogleGenAI;
  try {
    client = withSdkConsole("genai", () =>
      new GoogleGenAI({
        ...(opts.kind === "vertexai"
          ? {
            vertexai: true,
            ...(opts.project ? { project: opts.project } : {}),
            ...(opts.location ? { location: opts.location } : {}),
          }
          : {}),
        ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
        httpOptions: {
          ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
          headers: { "User-Agent": opts.userAgent, ...(opts.customHeaders ?? {}) },
          retryOptions: { attempts: 1 }, // the soul owns retries
        },
      }));
  } catch (err) {
    throw new ChatProviderError(
      `Cannot create the ${opts.kind === "vertexai" ? "Vertex AI" : "Gemini"} client: ${
        scrub(errorMessage(err), opts.apiKey)
      }`,
      { cause: err },
    );
  }
  return new GeminiProvider(opts, client);
}

const BUDGETS: Record<Exclude<ThinkingEffort, "off">, number> = {
  low: 1024,
  medium: 8192,
  high: 24576,
};

/**
 * The `thinkingConfig` for a model and effort, or null to leave the model's default. Gemini 3
 * takes a thinking level; 2.5 models a token budget. Only the Flash models can stop thinking
 * (budget 0); the others always think, so "off" just leaves their thoughts out of the stream.
 */
export function geminiThinkingConfig(
  model: string,
  effort: ThinkingEffort | null,
): Record<string, unknown> | null {
  if (effort === null) return null;
  const m = model.toLowerCase();
  if (effort === "off") return /gemini-2\.5-flash/.test(m) ? { thinkingBudget: 0 } : null;
  if (/gemini-[3-9]/.test(m)) {
    return { includeThoughts: true, thinkingLevel: effort === "high" ? "high" : "low" };
  }
  return { includeThoughts: true, thinkingBudget: BUDGETS[effort] };
}

class GeminiProvider implements ChatProvider {
  readonly #opts: GeminiOptions;
  readonly #client: GoogleGenAI;

  constructor(opts: GeminiOptions, client: GoogleGenAI) {
    this.#opts = opts;
    this.#client = client;
  }

  get name(): string {
    return this.#opts.kind === "vertexai" ? "vertexai" : "google_genai";
  }

  get modelName(): string {
    return this.#opts.model;
  }

  get thinkingEffort(): ThinkingEffort | null {
    return this.#opts.thinking ?? null;
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new GeminiProvider({ ...this.#opts, thinking: effort }, this.#client);
  }

  async generate(request: ChatRequest): Promise<ChatStream> {
    const ctx: ErrorContext = { apiKey: this.#opts.apiKey, signal: request.signal };
    const config: Record<string, unknown> = {};
    if (request.systemPrompt) config.systemInstruction = request.systemPrompt;
    if (request.tools.length > 0) {
      config.tools = [{
        functionDeclarations: request.tools.map((t) => ({
          name: t.name,
          description: t.description,
          parametersJsonSchema: t.parameters,
        })),
      }];
    }
    if (request.maxCompletionTokens !== undefined) {
      config.maxOutputTokens = request.maxCompletionTokens;
    }
    const thinkingConfig = geminiThinkingConfig(this.#opts.model, this.#opts.thinking ?? null);
    if (thinkingConfig) config.thinkingConfig = thinkingConfig;
    if (request.signal) config.abortSignal = request.signal;
    return await sdkStream<Record<string, unknown>>({
      open: async () => {
        const pending = withSdkConsole("genai", () =>
          this.#client.models.generateContentStream({
            model: this.#opts.model,
            contents: toGeminiContents(request.history) as never,
            config: config as never,
          }));
        return await pending as unknown as AsyncIterable<Record<string, unknown>>;
      },
      read: readGeminiChunk,
      convertError: (err) => convertGeminiError(err, ctx),
      signal: request.signal,
    });
  }
}

/** Translate an SDK error: `ApiError` → {@link APIStatusError}, fetch failures as usual. */
function convertGeminiError(err: unknown, ctx: ErrorContext): unknown {
  if (ctx.signal?.aborted) {
    return ctx.signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
  }
  if (err instanceof ApiError && typeof err.status === "number") {
    return new APIStatusError(err.status, scrub(err.message, ctx.apiKey), { cause: err });
  }
  if (err instanceof Error && err.name === "AbortError") return err;
  return convertFetchError(err, ctx);
}

type GPart = Record<string, unknown>;
interface GContent {
  role: "user" | "model";
  parts: GPart[];
}

function mediaPart(url: string, fallbackMime: string): GPart {
  const data = parseDataUrl(url);
  if (data) return { inlineData: { mimeType: data.mimeType, data: data.base64 } };
  return { fileData: { fileUri: url, mimeType: fallbackMime } };
}

function contentParts(parts: readonly ContentPart[]): GPart[] {
  const out: GPart[] = [];
  for (const p of parts) {
    switch (p.type) {
      case "text":
        if (p.text) out.push({ text: p.text });
        break;
      case "think":
        break; // thought summaries are not sent back; signatures ride on function calls
      case "image_url":
        out.push(mediaPart(p.image_url.url, "image/png"));
        break;
      case "video_url":
        out.push(mediaPart(p.video_url.url, "video/mp4"));
        break;
      case "audio_url":
        out.push(mediaPart(p.audio_url.url, "audio/mpeg"));
        break;
    }
  }
  return out;
}

/** Convert history to Gemini contents (tool results become user `functionResponse` parts). */
export function toGeminiContents(history: readonly NormalizedMessage[]): GContent[] {
  const out: GContent[] = [];
  const names = new Map<string, string>();
  const push = (role: "user" | "model", parts: GPart[]) => {
    if (parts.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  for (const m of history) {
    if (m.role === "assistant") {
      const parts = contentParts(m.content);
      for (const tc of m.tool_calls ?? []) {
        names.set(tc.id, tc.function.name);
        const part: GPart = {
          functionCall: {
            id: tc.id,
            name: tc.function.name,
            args: parseToolArguments(tc.function.arguments),
          },
        };
        const sig = tc.extras?.thought_signature;
        if (typeof sig === "string") part.thoughtSignature = sig;
        parts.push(part);
      }
      push("model", parts);
    } else if (m.role === "tool") {
      const id = m.tool_call_id ?? "";
      const text = m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
      const media = contentParts(m.content.filter((p) => p.type !== "text"));
      push("user", [
        { functionResponse: { id, name: names.get(id) ?? "", response: { output: text } } },
        ...media,
      ]);
    } else if (m.role === "system") {
      const text = m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
      push("user", [{ text: `<system>${text}</system>` }]);
    } else {
      push("user", contentParts(m.content));
    }
  }
  return out;
}

interface RawUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

/** The reader of Gemini stream chunks (see `sdk_stream.ts`). */
const readGeminiChunk: ChunkReader<Record<string, unknown>> = function* (chunk, meta) {
  if (typeof chunk.responseId === "string" && chunk.responseId) meta.id = chunk.responseId;
  const u = chunk.usageMetadata as RawUsage | undefined;
  if (u) {
    const cached = u.cachedContentTokenCount ?? 0;
    meta.usage = {
      input_other: (u.promptTokenCount ?? 0) - cached,
      output: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
      input_cache_read: cached,
      input_cache_creation: 0,
    };
  }
  const candidates = chunk.candidates as
    | { content?: { parts?: GPart[] }; finishReason?: string }[]
    | undefined;
  for (const part of candidates?.[0]?.content?.parts ?? []) {
    if (typeof part.text === "string") {
      if (part.thought === true) {
        if (part.text) yield { type: "think", think: part.text, encrypted: null };
      } else if (part.text) {
        yield { type: "text", text: part.text };
      }
    }
    const fc = part.functionCall as
      | { id?: string; name?: string; args?: Record<string, unknown> }
      | undefined;
    if (fc?.name) {
      const call: ToolCall = {
        type: "function",
        id: fc.id || `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
        function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) },
        extras: typeof part.thoughtSignature === "string"
          ? { thought_signature: part.thoughtSignature }
          : null,
      };
      yield call;
    }
  }
};
