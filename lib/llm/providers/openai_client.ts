/**
 * Shared plumbing of the providers built on the `openai` SDK: client construction with explicit
 * credentials (so the SDK never reads `OPENAI_*` from the environment) and the mapping of SDK
 * errors onto {@link ChatProviderError} classes, with the API key scrubbed from every message.
 *
 * @module
 */
import type { ThinkingEffort } from "../provider.ts";
import OpenAI from "openai";
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
} from "../errors.ts";

/** Connection settings of an OpenAI-compatible endpoint. */
export interface OpenAIClientOptions {
  /** Base URL, e.g. `https://api.moonshot.ai/v1`. */
  baseUrl: string;
  /** API key sent as a bearer token. */
  apiKey: string;
  /** Headers added to every request (after the SDK's own, so they win). */
  headers: Record<string, string>;
  /** Fetch implementation (tests, permission wrappers). */
  fetch?: typeof fetch;
}

/** Settings every OpenAI-compatible provider shares (Chat Completions and Responses). */
export interface OpenAIEndpointOptions {
  /** API base URL, e.g. `https://api.moonshot.ai/v1`. */
  baseUrl: string;
  /** API key (bearer token). Never appears in error messages. */
  apiKey: string;
  /** Model id sent to the API. */
  model: string;
  /** Extra headers; they override `User-Agent` when they name it. */
  customHeaders?: Record<string, string>;
  /** `User-Agent` header, e.g. `KimiCLI/1.49.0`. */
  userAgent: string;
  /** Sent as `prompt_cache_key` when set (kimi: the session id). */
  promptCacheKey?: string;
  /** Thinking effort; null or absent leaves the provider default. */
  thinking?: ThinkingEffort | null;
  /** Sampling temperature. */
  temperature?: number;
  /** Nucleus sampling. */
  topP?: number;
  /** Fetch implementation for the SDK. */
  fetch?: typeof fetch;
}

/** The SDK client for an endpoint: User-Agent first, custom headers on top. */
export function createEndpointClient(opts: OpenAIEndpointOptions): OpenAI {
  return createOpenAIClient({
    baseUrl: opts.baseUrl,
    apiKey: opts.apiKey,
    headers: { "User-Agent": opts.userAgent, ...(opts.customHeaders ?? {}) },
    fetch: opts.fetch,
  });
}

// HTTP header values must not carry control characters (tab excepted).
// deno-lint-ignore no-control-regex
const ILLEGAL_HEADER_CHARS = /[\x00-\x08\x0a-\x1f\x7f]/g;

/**
 * Create an SDK client. `maxRetries` is 0 because the soul owns retries.
 *
 * An empty API key sends no `Authorization` header.
 *
 * @throws {ChatProviderError} when the SDK refuses the settings.
 */
export function createOpenAIClient(opts: OpenAIClientOptions): OpenAI {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers)) {
    headers[k] = v.replace(ILLEGAL_HEADER_CHARS, "").trim();
  }
  try {
    // An empty key means "no authentication" (local servers): the SDK insists on a key, so it
    // gets a placeholder and the Authorization header is removed.
    const noKey = opts.apiKey === "";
    return new OpenAI({
      apiKey: noKey ? "no-key" : opts.apiKey,
      baseURL: opts.baseUrl,
      maxRetries: 0,
      defaultHeaders: noKey ? { ...headers, Authorization: null } : headers,
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
    });
  } catch (err) {
    throw new ChatProviderError(
      `Cannot create the API client for ${opts.baseUrl}: ${scrub(errorMessage(err), opts.apiKey)}`,
      { cause: err },
    );
  }
}

/** Context of {@link convertOpenAIError}. */
export interface ErrorContext {
  /** The key to scrub from messages. */
  apiKey: string;
  /** The request's abort signal: when it fired, its reason is returned instead. */
  signal?: AbortSignal;
}

/**
 * Translate an error thrown by the SDK (or by fetch under it) into the provider error classes:
 * timeouts → {@link APITimeoutError}, connection failures → {@link APIConnectionError} (the
 * original error, e.g. `Deno.errors.NotCapable`, kept as `cause`), HTTP errors →
 * {@link APIStatusError}, anything else → {@link ChatProviderError}. An abort by the caller
 * yields the signal's reason (an `AbortError` by default) so cancellation is not retried.
 */
export function convertOpenAIError(err: unknown, ctx: ErrorContext): unknown {
  if (ctx.signal?.aborted) {
    return ctx.signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
  }
  if (err instanceof ChatProviderError) return err;
  const msg = scrub(errorMessage(err), ctx.apiKey);
  if (err instanceof OpenAI.APIUserAbortError) {
    return new DOMException("The operation was aborted.", "AbortError");
  }
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new APITimeoutError(msg, { cause: err });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    if (cause instanceof Deno.errors.NotCapable) {
      return new APIConnectionError(
        `Connection error: network access was denied by the permission sandbox (${
          scrub(errorMessage(cause), ctx.apiKey)
        }).`,
        { cause },
      );
    }
    const detail = cause !== err && cause instanceof Error ? scrub(cause.message, ctx.apiKey) : "";
    return new APIConnectionError(detail ? `Connection error: ${detail}` : msg, { cause });
  }
  if (err instanceof OpenAI.APIError) {
    if (typeof err.status === "number") return new APIStatusError(err.status, msg, { cause: err });
    return new ChatProviderError(msg, { cause: err });
  }
  if (err instanceof Deno.errors.NotCapable) {
    return new APIConnectionError(
      `Connection error: network access was denied by the permission sandbox (${msg}).`,
      { cause: err },
    );
  }
  // fetch failures while reading a streamed body surface as TypeErrors: treat as connection loss.
  if (err instanceof TypeError) {
    return new APIConnectionError(`Connection error: ${msg}`, { cause: err });
  }
  if (err instanceof Error && err.name === "TimeoutError") {
    return new APITimeoutError(msg, { cause: err });
  }
  return new ChatProviderError(`Error: ${msg}`, { cause: err });
}

/** Remove every occurrence of the API key from a message. */
export function scrub(message: string, apiKey: string): string {
  return apiKey.length >= 4 ? message.replaceAll(apiKey, "[REDACTED]") : message;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
