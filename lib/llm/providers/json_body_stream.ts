/**
 * Request bodies of the providers that send over kimi's own `fetch` client (`openai_http.ts`):
 * a large body is written as JSON piece by piece into a `ReadableStream<Uint8Array>` while
 * `fetch` sends it, never held whole as one string or one buffer.
 *
 * Why: a request over a 1 M-token history (compaction, or a step near the context's limit)
 * serialized by `JSON.stringify` is one ~4 MB string and then ~4 MB of bytes for `fetch`, on top
 * of the history it was made from. Streamed, what exists at a time is the history (referenced by
 * the request, not copied) plus one chunk of about {@link STREAM_CHUNK_CHARS} characters.
 *
 * The stream's text is byte for byte what `JSON.stringify(value)` writes (same key order,
 * `toJSON`, `undefined` and functions skipped in objects and `null` in arrays, numbers as
 * `JSON.stringify` formats them, lone surrogates escaped as `\udXXX`): long strings are cut
 * into slices between code points (never inside a surrogate pair), and every slice is escaped by
 * `JSON.stringify` itself.
 *
 * A streamed body has no `Content-Length`: `fetch` sends it with `Transfer-Encoding: chunked`
 * over HTTP/1.1 (DATA frames over HTTP/2). A server or proxy that refuses that answers `411
 * Length Required`; {@link JsonBodySender} then sends the same request with a buffered body and
 * keeps doing so for that endpoint.
 *
 * @module
 */
import { log } from "../../log.ts";

/** Bodies whose JSON is at least this long (UTF-16 code units) are streamed: 1 MiB. */
export const STREAM_BODY_THRESHOLD = 1024 * 1024;

/** Characters written into one chunk of a streamed body (before UTF-8 encoding). */
export const STREAM_CHUNK_CHARS = 64 * 1024;

const encoder = new TextEncoder();

/**
 * Whether `JSON.stringify(value)` would be at least `limit` characters long, decided from the
 * lengths of the strings and keys in `value` without serializing it (a lower bound: the walk
 * stops once `limit` is reached, and ignores numbers and punctuation).
 */
export function jsonLengthAtLeast(value: unknown, limit: number): boolean {
  let total = 0;
  const seen = new Set<object>();
  const walk = (v: unknown): boolean => {
    if (typeof v === "string") {
      total += v.length + 2;
      return total >= limit;
    }
    if (typeof v !== "object" || v === null || seen.has(v)) return false;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const item of v) if (walk(item)) return true;
      return false;
    }
    for (const key of Object.keys(v)) {
      total += key.length + 3;
      if (walk((v as Record<string, unknown>)[key])) return true;
    }
    return false;
  };
  return walk(value) || total >= limit;
}

/** Options of {@link jsonTextPieces} and {@link jsonBodyStream}. */
export interface JsonStreamOptions {
  /** Longest slice of one string escaped at a time, in code units. Default 64 Ki. */
  sliceChars?: number;
  /** Characters gathered into one chunk of the byte stream. Default {@link STREAM_CHUNK_CHARS}. */
  chunkChars?: number;
}

/**
 * The text of `JSON.stringify(value)` as a sequence of pieces (concatenated, the same string).
 * Each string of `value` is escaped when its piece is reached, in slices of at most
 * `sliceChars` code units.
 *
 * @throws {TypeError} as `JSON.stringify` does: for a circular structure or a BigInt (when the
 * piece is reached).
 */
export function* jsonTextPieces(
  value: unknown,
  opts: JsonStreamOptions = {},
): Generator<string, void, undefined> {
  const sliceChars = Math.max(2, opts.sliceChars ?? 64 * 1024);
  const stack = new Set<object>();

  function* str(s: string): Generator<string, void, undefined> {
    if (s.length <= sliceChars) {
      yield JSON.stringify(s);
      return;
    }
    yield '"';
    for (let start = 0; start < s.length;) {
      let end = Math.min(s.length, start + sliceChars);
      // never between the two halves of a surrogate pair: each half alone would be escaped
      const last = s.charCodeAt(end - 1);
      if (end < s.length && last >= 0xd800 && last <= 0xdbff) {
        const next = s.charCodeAt(end);
        if (next >= 0xdc00 && next <= 0xdfff) end--;
      }
      const quoted = JSON.stringify(s.slice(start, end));
      yield quoted.slice(1, -1);
      start = end;
    }
    yield '"';
  }

  /** SerializeJSONProperty: the value a property `key` holding `v` becomes, after `toJSON` and unboxing. */
  function resolve(key: string, v: unknown): unknown {
    if (
      (typeof v === "object" && v !== null) || typeof v === "function" || typeof v === "bigint"
    ) {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") v = toJSON.call(v, key);
    }
    if (v instanceof Number || v instanceof String || v instanceof Boolean) return v.valueOf();
    return v;
  }

  /** Whether a resolved value is left out of an object (and is `null` in an array). */
  const omitted = (v: unknown) =>
    v === undefined || typeof v === "function" || typeof v === "symbol";

  function* node(v: unknown): Generator<string, void, undefined> {
    if (typeof v === "string") {
      yield* str(v);
      return;
    }
    if (typeof v !== "object" || v === null) {
      // numbers, booleans, null; a BigInt throws the TypeError JSON.stringify throws
      yield JSON.stringify(v);
      return;
    }
    if (stack.has(v)) throw new TypeError("Converting circular structure to JSON");
    stack.add(v);
    if (Array.isArray(v)) {
      yield "[";
      for (let i = 0; i < v.length; i++) {
        if (i > 0) yield ",";
        const item = resolve(String(i), v[i]);
        if (omitted(item)) yield "null";
        else yield* node(item);
      }
      yield "]";
    } else {
      yield "{";
      let first = true;
      for (const key of Object.keys(v)) {
        const item = resolve(key, (v as Record<string, unknown>)[key]);
        if (omitted(item)) continue;
        yield first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`;
        first = false;
        yield* node(item);
      }
      yield "}";
    }
    stack.delete(v);
  }

  const top = resolve("", value);
  if (omitted(top)) return; // JSON.stringify gives undefined: no text
  yield* node(top);
}

/**
 * `JSON.stringify(value)` as UTF-8 bytes in a stream that writes each chunk when it is pulled
 * (about `chunkChars` characters a chunk). Each call makes a new stream; a stream is read once.
 * A serialization error (see {@link jsonTextPieces}) errors the stream.
 */
export function jsonBodyStream(
  value: unknown,
  opts: JsonStreamOptions = {},
): ReadableStream<Uint8Array> {
  const chunkChars = Math.max(1, opts.chunkChars ?? STREAM_CHUNK_CHARS);
  let pieces: Generator<string, void, undefined> | null = null;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      pieces ??= jsonTextPieces(value, opts);
      const batch: string[] = [];
      let length = 0;
      while (length < chunkChars) {
        const next = pieces.next();
        if (next.done) break;
        batch.push(next.value);
        length += next.value.length;
      }
      if (length > 0) controller.enqueue(encoder.encode(batch.join("")));
      if (length < chunkChars) controller.close();
    },
    cancel() {
      pieces?.return();
      pieces = null;
    },
  }, { highWaterMark: 0 });
}

/** The body `fetch` sends for one attempt. */
export interface JsonBody {
  /** The body: the JSON text (small bodies, or buffered) or a stream of it. */
  body: string | ReadableStream<Uint8Array>;
  /** Whether `body` is a stream (sent without a `Content-Length`). */
  streamed: boolean;
}

/** Options of {@link JsonBodySender}. */
export interface JsonBodySenderOptions {
  /** Bodies at least this long are streamed. Default {@link STREAM_BODY_THRESHOLD}. */
  threshold?: number;
  /** Module name in the log line of a fallback. Default `llm`. */
  logModule?: string;
}

/**
 * Sends JSON request bodies to one endpoint: streamed above the threshold, as one string below
 * it, and as one string for good once the endpoint refused a streamed body (`411 Length
 * Required`, or a connection it broke while a buffered retry was answered: see {@link send}).
 * Holds that one fact per endpoint (one sender per client, so per provider).
 */
export class JsonBodySender {
  readonly #threshold: number;
  readonly #logModule: string;
  #buffered = false;

  /** A sender streaming bodies of at least `opts.threshold` characters. */
  constructor(opts: JsonBodySenderOptions = {}) {
    this.#threshold = opts.threshold ?? STREAM_BODY_THRESHOLD;
    this.#logModule = opts.logModule ?? "llm";
  }

  /** Whether this endpoint refused a streamed body (bodies are buffered from then on). */
  get buffered(): boolean {
    return this.#buffered;
  }

  /** A fresh body for one attempt of sending `value` (a stream can be read only once). */
  body(value: unknown): JsonBody {
    if (!this.#buffered && jsonLengthAtLeast(value, this.#threshold)) {
      return { body: jsonBodyStream(value), streamed: true };
    }
    return { body: JSON.stringify(value), streamed: false };
  }

  /**
   * Send `value` with `send` (which calls `fetch` with the body it is given) and return the
   * response. A streamed body is sent again, buffered, when:
   * - the endpoint answered `411 Length Required` (the response is discarded);
   * - or the attempt failed before any response (a server refusing chunked bodies may answer
   *   411 and close at once, which `fetch` reports as a broken connection; a 307/308 redirect,
   *   which `fetch` cannot follow with a stream it has read), unless `signal`
   *   aborted it or the failure came before any connection (refused, no permission, DNS).
   *   The buffered attempt's outcome is returned (its error thrown); when it got a response
   *   other than 411, the endpoint is taken to refuse chunked bodies.
   * Either way every later body to this endpoint is buffered, and one line naming the endpoint
   * (never the body, a header or the error's text, which may quote the URL) is logged.
   */
  async send(
    value: unknown,
    send: (body: string | ReadableStream<Uint8Array>) => Promise<Response>,
    opts: { endpoint: string; signal?: AbortSignal },
  ): Promise<Response> {
    const first = this.body(value);
    if (!first.streamed) return await send(first.body);
    let response: Response;
    try {
      response = await send(first.body);
    } catch (err) {
      if (opts.signal?.aborted || failedBeforeConnecting(err)) throw err;
      const retried = await send(JSON.stringify(value));
      if (retried.status !== 411) {
        this.#fallBack(
          redirectedStream(err)
            ? `${opts.endpoint} redirected a streamed (chunked) request body, which fetch ` +
              `cannot send twice; the same request with a Content-Length was answered ` +
              `(${retried.status})`
            : `the connection failed while sending a streamed (chunked) request body to ` +
              `${opts.endpoint} and the same request with a Content-Length was answered ` +
              `(${retried.status})`,
        );
      }
      return retried;
    }
    if (response.status !== 411) return response;
    await response.body?.cancel().catch(() => {});
    this.#fallBack(
      `${opts.endpoint} answered 411 Length Required to a streamed (chunked) request body`,
    );
    return await send(JSON.stringify(value));
  }

  #fallBack(why: string): void {
    this.#buffered = true;
    log(
      "WARNING",
      this.#logModule,
      `${why}; its requests are sent with a buffered body (Content-Length) from now on, ` +
        "which holds the whole request in memory",
    );
  }
}

/** Whether a fetch error is its refusal to follow a redirect (307/308) with a stream body. */
function redirectedStream(err: unknown): boolean {
  return err instanceof Error && /redeliver a streaming request body/i.test(err.message);
}

/** Whether a fetch error says no connection was made (so no body was refused). */
function failedBeforeConnecting(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (
      e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied ||
      e instanceof Deno.errors.ConnectionRefused ||
      /client error \(Connect\)|connection refused|dns error|failed to lookup|are blocked/i.test(
        e.message,
      )
    ) return true;
  }
  return false;
}

/** `origin + path` of a URL, for a log line: no query (it may carry a key), no credentials. */
export function endpointForLog(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}
