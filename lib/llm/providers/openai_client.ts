/**
 * Shared plumbing of the providers built on the `openai` SDK: client construction with an
 * explicit base URL and key (so the SDK's `OPENAI_BASE_URL` and `OPENAI_API_KEY` never override
 * the config; like the reference's Python SDK it still honours `OPENAI_ORG_ID`,
 * `OPENAI_PROJECT_ID` and `OPENAI_LOG`, and this SDK `OPENAI_CUSTOM_HEADERS`) and the mapping of
 * SDK errors onto {@link ChatProviderError} classes, with the API key scrubbed from every message.
 *
 * @module
 */
import type { ThinkingEffort } from "../provider.ts";
import * as sdk from "openai";
import type { OpenAI } from "openai";
import { ChatProviderError } from "../errors.ts";
import { convertSdkError, type ErrorContext, errorMessage, scrub } from "./sdk_errors.ts";

export { type ErrorContext, scrub } from "./sdk_errors.ts";

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
    return new sdk.OpenAI({
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

/**
 * Translate an error thrown by the SDK (or by fetch under it) into the provider error classes
 * (see {@link convertSdkError}).
 */
export function convertOpenAIError(err: unknown, ctx: ErrorContext): unknown {
  return convertSdkError(err, ctx, {
    APIError: sdk.OpenAI.APIError,
    APIConnectionError: sdk.OpenAI.APIConnectionError,
    APIConnectionTimeoutError: sdk.OpenAI.APIConnectionTimeoutError,
    APIUserAbortError: sdk.OpenAI.APIUserAbortError,
  });
}
