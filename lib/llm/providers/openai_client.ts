/**
 * Shared plumbing of the OpenAI-compatible providers: client construction with an explicit base
 * URL and key (so `OPENAI_BASE_URL` and `OPENAI_API_KEY` never override the config; like the
 * reference's Python SDK it still honours `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID`, and as the
 * `openai` JS SDK `OPENAI_CUSTOM_HEADERS`; see `openai_http.ts`) and the mapping of the SDK's
 * error classes onto {@link ChatProviderError} classes, with the API key scrubbed from every
 * message. Only the SDK's error module is loaded here, not its client.
 *
 * @module
 */
import type { ThinkingEffort } from "../provider.ts";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "openai/core/error";
import { ChatProviderError } from "../errors.ts";
import { convertSdkError, type ErrorContext, errorMessage, scrub } from "./sdk_errors.ts";
import { type OpenAIClientOptions, OpenAIHttpClient } from "./openai_http.ts";

export { type ErrorContext, scrub } from "./sdk_errors.ts";
export { type OpenAIClientOptions, OpenAIHttpClient } from "./openai_http.ts";

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

/** The client for an endpoint: User-Agent first, custom headers on top. */
export function createEndpointClient(opts: OpenAIEndpointOptions): OpenAIHttpClient {
  return createOpenAIClient({
    baseUrl: opts.baseUrl,
    apiKey: opts.apiKey,
    headers: { "User-Agent": opts.userAgent, ...(opts.customHeaders ?? {}) },
    fetch: opts.fetch,
  });
}

/**
 * Create a client. There are no retries: the soul owns them. An empty API key sends no
 * `Authorization` header.
 *
 * @throws {ChatProviderError} when the settings are refused (a header of
 * `OPENAI_CUSTOM_HEADERS` that is not an HTTP token).
 */
export function createOpenAIClient(opts: OpenAIClientOptions): OpenAIHttpClient {
  try {
    return new OpenAIHttpClient(opts);
  } catch (err) {
    throw new ChatProviderError(
      `Cannot create the API client for ${opts.baseUrl}: ${scrub(errorMessage(err), opts.apiKey)}`,
      { cause: err },
    );
  }
}

/**
 * Translate an error thrown by the client (or by fetch under it) into the provider error
 * classes (see {@link convertSdkError}).
 */
export function convertOpenAIError(err: unknown, ctx: ErrorContext): unknown {
  return convertSdkError(err, ctx, {
    APIError,
    APIConnectionError,
    APIConnectionTimeoutError,
    APIUserAbortError,
  });
}
