/**
 * The HTTP client of the OpenAI-compatible providers: the streamed `POST /chat/completions` and
 * `POST /responses` sent with `fetch`, without the `openai` package's client class.
 *
 * Why: that class instantiates every resource of the API (beta, files, vector stores, realtime,
 * …), about 1 MB of JavaScript that V8 must load on every agent run although kimi sends two
 * kinds of request. What is not the product is still the SDK's: the server-sent events are
 * parsed by the SDK's own `Stream.fromSSEResponse` (`openai/core/streaming`), and every failure
 * is raised as the SDK's error class (`openai/core/error`) with the SDK's message, so
 * `convertSdkError` and everything above it behave as they did with the client class. The Files
 * API (Kimi video uploads, rare) still goes through the SDK's client, loaded only when a video
 * is uploaded ({@link OpenAIHttpClient.sdk}).
 *
 * What a request carries, decided header by header against the SDK's `buildRequest` /
 * `buildHeaders` (`openai@7.57.0`, `client.mjs`), later rows winning, names case-insensitive:
 * - the URL: base URL + path, one slash between them (a base ending in `/` drops the path's
 *   leading one); a query in the base URL is kept, re-encoded as the SDK's `qs` does; an
 *   empty base URL means `https://api.openai.com/v1`.
 * - `Accept: application/json`, and `User-Agent: OpenAI/JS <version>` (ours replaces it).
 * - `X-Stainless-Retry-Count: 0` and the SDK's platform headers
 *   (`X-Stainless-Lang`, `-Package-Version`, `-OS`, `-Arch`, `-Runtime`, `-Runtime-Version`):
 *   kept, they cost nothing and gateways that log them see what they saw before.
 * - `OpenAI-Organization` / `OpenAI-Project` from `OPENAI_ORG_ID` / `OPENAI_PROJECT_ID`.
 * - `Authorization: Bearer <key>`; with an empty key none at all (local servers), even when a
 *   custom header names it, as before.
 * - the headers of `OPENAI_CUSTOM_HEADERS` (`Name: value` lines), then the configured headers.
 * - `Content-Type: application/json` (after the custom headers: it cannot be overridden) and
 *   the body as `JSON.stringify` writes it; from 1 MiB on it is streamed (chunked, no
 *   `Content-Length`), written piece by piece as `fetch` sends it, with a fall back to the
 *   buffered body after a `411 Length Required` (`json_body_stream.ts`).
 * Dropped: the SDK's retries (kimi's soul retries; the client was built with `maxRetries: 0`),
 * `OPENAI_LOG` (the SDK printed its request log to the console, under kimi's screen or on the
 * wire's stdout), `OPENAI_BASE_URL` / `OPENAI_API_KEY` (ignored before too: the config passes
 * both explicitly). The SDK's ten-minute limit on waiting for the response headers stays.
 *
 * @module
 */
import type { OpenAI } from "openai";
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "openai/core/error";
import { Stream } from "openai/core/streaming";
import { normalizeChatCompletionChunk } from "openai/lib/chat-completions/streaming";
import { VERSION as SDK_VERSION } from "openai/version";
import { withReusedBodyBuffer } from "./reused_body_buffer.ts";
import { endpointForLog, JsonBodySender } from "./json_body_stream.ts";

/** Connection settings of an OpenAI-compatible endpoint. */
export interface OpenAIClientOptions {
  /** Base URL, e.g. `https://api.moonshot.ai/v1`. */
  baseUrl: string;
  /** API key sent as a bearer token; empty sends no `Authorization` header. */
  apiKey: string;
  /** Headers added to every request (after the default ones, so they win). */
  headers: Record<string, string>;
  /** Fetch implementation (tests, permission wrappers). */
  fetch?: typeof fetch;
}

/** Options of one request. */
export interface OpenAIRequestOptions {
  /** Aborts the request and its stream. */
  signal?: AbortSignal;
}

/** The SDK's default limit on waiting for the response headers, in ms. */
const HEADERS_TIMEOUT_MS = 600_000;
const DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Header names the SDK accepts (an HTTP token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A header list as the SDK's `buildHeaders` merges them: `null` removes a header. */
type HeaderRows = Record<string, string | null | undefined>;

/**
 * A client of one OpenAI-compatible endpoint (see the module doc for what it sends).
 * Construction validates the headers of `OPENAI_CUSTOM_HEADERS` as the SDK's did.
 */
export class OpenAIHttpClient {
  readonly #opts: OpenAIClientOptions;
  readonly #baseUrl: string;
  readonly #envHeaders: HeaderRows;
  readonly #organization: string | undefined;
  readonly #project: string | undefined;
  readonly #bodies = new JsonBodySender({ logModule: "openai_http" });
  #sdk: Promise<OpenAI> | null = null;

  /**
   * A client for `opts`.
   *
   * @throws {TypeError} when `OPENAI_CUSTOM_HEADERS` is set and a header name is not an HTTP
   * token (the SDK merged the headers in its constructor then).
   */
  constructor(opts: OpenAIClientOptions) {
    this.#opts = opts;
    this.#baseUrl = opts.baseUrl || DEFAULT_BASE_URL;
    this.#organization = readEnv("OPENAI_ORG_ID");
    this.#project = readEnv("OPENAI_PROJECT_ID");
    this.#envHeaders = parseCustomHeaders(readEnv("OPENAI_CUSTOM_HEADERS"));
    if (Object.keys(this.#envHeaders).length > 0) {
      mergeHeaders([this.#envHeaders, this.#defaultHeaders()]);
    }
  }

  /**
   * `POST /chat/completions` with `body` (which asks for a stream) and return its chunks, each
   * choice's missing `finish_reason` set to null as the SDK's `chat.completions.create` does.
   * Errors as {@link postStream}.
   */
  async chatCompletionStream<T>(
    body: Record<string, unknown>,
    opts: OpenAIRequestOptions = {},
  ): Promise<AsyncIterable<T>> {
    const source = await this.postStream<T>("/chat/completions", body, opts);
    return {
      async *[Symbol.asyncIterator]() {
        for await (const chunk of source) yield normalizeChatCompletionChunk(chunk as never) as T;
      },
    };
  }

  /**
   * `POST /responses` with `body` (which asks for a stream) and return its events, as the SDK's
   * `responses.create`. Errors as {@link postStream}.
   */
  responseStream<T>(
    body: Record<string, unknown>,
    opts: OpenAIRequestOptions = {},
  ): Promise<AsyncIterable<T>> {
    return this.postStream<T>("/responses", body, opts);
  }

  /**
   * `POST` `body` as JSON to `path` (e.g. `/chat/completions`) and return the server-sent
   * events, each parsed as JSON, by the SDK's {@link Stream}. An `error` object in an event
   * fails the iteration with an {@link APIError}; `[DONE]` ends it.
   *
   * @throws {APIError} (the status's subclass) for a response that is not 2xx;
   * {@link APIUserAbortError} when `signal` aborted; {@link APIConnectionTimeoutError} when no
   * response headers came within ten minutes; {@link APIConnectionError} when the connection
   * failed (the fetch error as `cause`); `TypeError` for a URL or header fetch refuses.
   */
  async postStream<T>(
    path: string,
    body: Record<string, unknown>,
    opts: OpenAIRequestOptions = {},
  ): Promise<AsyncIterable<T>> {
    const url = buildUrl(this.#baseUrl, path);
    const headers = this.#requestHeaders();
    const signal = opts.signal;
    if (signal?.aborted) throw userAbortError(signal);
    // One controller per request, as the SDK: the caller's abort and the headers timeout stop
    // the fetch and, after the headers, the body the stream reads.
    const controller = new AbortController();
    const abort = () => controller.abort();
    signal?.addEventListener("abort", abort, { once: true });
    const release = () => signal?.removeEventListener("abort", abort);
    const timer = setTimeout(abort, HEADERS_TIMEOUT_MS);
    let response: Response;
    try {
      const fetchFn = this.#opts.fetch ?? fetch;
      response = await this.#bodies.send(
        body,
        (payload) =>
          fetchFn.call(undefined, url, {
            signal: controller.signal,
            method: "POST",
            headers,
            body: payload,
          }),
        { endpoint: endpointForLog(url), signal: controller.signal },
      );
    } catch (err) {
      release();
      throw connectionError(err, signal);
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) {
      release();
      throw await statusError(response);
    }
    // The body is read into one reused buffer: fetch's own reader leaves a buffer outside V8's
    // heap per piece the connection delivers, tens of megabytes for a long streamed reply.
    const stream = Stream.fromSSEResponse<T>(withReusedBodyBuffer(response), controller);
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* stream;
        } finally {
          release();
        }
      },
    };
  }

  /**
   * The SDK's client for the same endpoint, settings and headers, for the Files API. The
   * `openai` package is loaded on the first call only (the agent's requests never load it).
   */
  sdk(): Promise<OpenAI> {
    this.#sdk ??= import("openai").then((sdk) => {
      const noKey = this.#opts.apiKey === "";
      const headers = this.#defaultHeaders();
      // The SDK insists on a key: a placeholder, and the Authorization header removed.
      return new sdk.OpenAI({
        apiKey: noKey ? "no-key" : this.#opts.apiKey,
        baseURL: this.#opts.baseUrl,
        maxRetries: 0,
        defaultHeaders: noKey ? { ...headers, Authorization: null } : headers,
        ...(this.#opts.fetch ? { fetch: this.#opts.fetch } : {}),
      });
    }, (err) => {
      this.#sdk = null; // a failed load is tried again by the next upload
      throw err;
    });
    return this.#sdk;
  }

  /** The configured headers with control characters removed (tab excepted). */
  #defaultHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.#opts.headers)) {
      headers[k] = v.replace(ILLEGAL_HEADER_CHARS, "").trim();
    }
    return headers;
  }

  #requestHeaders(): Headers {
    const noKey = this.#opts.apiKey === "";
    return mergeHeaders([
      {
        Accept: "application/json",
        "User-Agent": `OpenAI/JS ${SDK_VERSION}`,
        "X-Stainless-Retry-Count": "0",
        ...platformHeaders(),
        "OpenAI-Organization": this.#organization ?? null,
        "OpenAI-Project": this.#project ?? null,
      },
      { Authorization: noKey ? null : `Bearer ${this.#opts.apiKey}` },
      this.#envHeaders,
      noKey ? { ...this.#defaultHeaders(), Authorization: null } : this.#defaultHeaders(),
      { "Content-Type": "application/json" },
    ]);
  }
}

// HTTP header values must not carry control characters (tab excepted).
// deno-lint-ignore no-control-regex
const ILLEGAL_HEADER_CHARS = /[\x00-\x08\x0a-\x1f\x7f]/g;

/**
 * Merge header lists as the SDK's `buildHeaders`: names compared case-insensitively, a later
 * list replaces a name, `null` removes it, `undefined` leaves it.
 *
 * @throws {TypeError} for a name that is not an HTTP token (the SDK's message).
 */
function mergeHeaders(lists: HeaderRows[]): Headers {
  const out = new Headers();
  for (const list of lists) {
    for (const [name, value] of Object.entries(list)) {
      if (value === undefined) continue;
      if (!HEADER_NAME.test(name)) {
        throw new TypeError(`Header name must be a valid HTTP token ["${name}"]`);
      }
      out.delete(name);
      if (value !== null) out.append(name, value);
    }
  }
  return out;
}

/** `OPENAI_CUSTOM_HEADERS`: `Name: value` lines, as the SDK reads them. */
function parseCustomHeaders(text: string | undefined): Record<string, string> {
  const parsed: Record<string, string> = {};
  for (const line of text?.split("\n") ?? []) {
    const colon = line.indexOf(":");
    if (colon >= 0) parsed[line.substring(0, colon).trim()] = line.substring(colon + 1).trim();
  }
  return parsed;
}

/** An environment variable, trimmed; undefined when unset, empty or not readable. */
function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name)?.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The SDK's platform headers for Deno (`internal/detect-platform.mjs`). */
function platformHeaders(): Record<string, string> {
  return {
    "X-Stainless-Lang": "js",
    "X-Stainless-Package-Version": SDK_VERSION,
    "X-Stainless-OS": normalizePlatform(Deno.build.os),
    "X-Stainless-Arch": normalizeArch(Deno.build.arch),
    "X-Stainless-Runtime": "deno",
    "X-Stainless-Runtime-Version": Deno.version.deno,
  };
}

function normalizeArch(arch: string): string {
  if (arch === "x86_64") return "x64";
  if (arch === "aarch64") return "arm64";
  return arch ? `other:${arch}` : "unknown";
}

function normalizePlatform(os: string): string {
  const names: Record<string, string> = {
    android: "Android",
    darwin: "MacOS",
    freebsd: "FreeBSD",
    openbsd: "OpenBSD",
    linux: "Linux",
  };
  return names[os.toLowerCase()] ?? (os ? `Other:${os.toLowerCase()}` : "Unknown");
}

/**
 * The SDK's URL joining (`buildURL` for a relative path): one slash between base and path; a
 * query in the base URL is kept and re-encoded like the SDK's `qs.stringify`, repeated names
 * keeping all their values at the end.
 */
export function buildUrl(baseUrl: string, path: string): string {
  const join = (base: string) =>
    base + (base.endsWith("/") && path.startsWith("/") ? path.slice(1) : path);
  if (!baseUrl.includes("?")) return new URL(join(baseUrl)).toString();
  const base = new URL(baseUrl);
  const params = new URLSearchParams(base.search);
  base.search = "";
  base.hash = "";
  const url = new URL(
    base.toString() + (base.pathname.endsWith("/") && path.startsWith("/") ? path.slice(1) : path),
  );
  const query = Object.fromEntries(params);
  if (Object.keys(query).length === 0) return url.toString();
  url.search = Object.entries(query).map(([k, v]) => `${encodeQs(k)}=${encodeQs(v)}`).join("&");
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const key of params.keys()) {
    if (seen.has(key)) repeated.add(key);
    seen.add(key);
  }
  if (repeated.size > 0) {
    const merged = new URLSearchParams();
    for (const [k, v] of url.searchParams) if (!repeated.has(k)) merged.append(k, v);
    for (const [k, v] of params) if (repeated.has(k)) merged.append(k, v);
    url.search = merged.toString();
  }
  return url.toString();
}

/** RFC 3986 encoding, as `qs` does: everything but `A-Z a-z 0-9 - _ . ~` percent-encoded. */
function encodeQs(s: string): string {
  return encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** The SDK's error for an abort by the caller (the signal's reason as `cause`). */
function userAbortError(signal: AbortSignal): APIUserAbortError {
  const error = new APIUserAbortError();
  Object.defineProperty(error, "cause", {
    value: signal.reason,
    writable: true,
    configurable: true,
  });
  return error;
}

/** What the SDK raised when fetch failed (`makeRequest`). */
function connectionError(err: unknown, signal: AbortSignal | undefined): Error {
  if (signal?.aborted) return userAbortError(signal);
  const error = castToError(err);
  const isTimeout = error.name === "AbortError" ||
    /timed? ?out/i.test(String(error) + ("cause" in error ? String(error.cause) : ""));
  if (isTimeout) return Object.assign(new APIConnectionTimeoutError(), { cause: error });
  return new APIConnectionError({ message: undefined, cause: error });
}

/** The SDK's error for a response that is not 2xx (`makeStatusError`). */
async function statusError(response: Response): Promise<APIError> {
  const text = await response.text().catch((err) => castToError(err).message);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const message = json ? undefined : text;
  const normalized = json && typeof json === "object" && (json as { error?: unknown }).error == null
    ? { error: json }
    : json;
  return APIError.generate(
    response.status,
    normalized as object | undefined,
    message,
    response.headers,
  );
}

/** The SDK's `castToError`, for the values fetch rejects with. */
function castToError(err: unknown): Error {
  if (err instanceof Error) return err;
  try {
    return new Error(typeof err === "object" && err !== null ? JSON.stringify(err) : String(err));
  } catch {
    return new Error(String(err));
  }
}
