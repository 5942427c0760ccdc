/**
 * Mapping of the errors of the vendor SDKs (the `openai` and `@anthropic-ai/sdk` packages share
 * one error hierarchy shape) and of fetch onto the provider error classes, with the API key
 * scrubbed from every message.
 *
 * @module
 */
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
  NetworkDeniedError,
} from "../errors.ts";

/** Context of an error conversion. */
export interface ErrorContext {
  /** The key to scrub from messages. */
  apiKey: string;
  /** The request's abort signal: when it fired, its reason is returned instead. */
  signal?: AbortSignal;
}

// deno-lint-ignore no-explicit-any
type ErrorClass = abstract new (...args: any[]) => Error;

/** The error classes of one SDK. */
export interface SdkErrorClasses {
  /** Base of HTTP errors (has `status`). */
  APIError: ErrorClass;
  /** Connection failures. */
  APIConnectionError: ErrorClass;
  /** Timeouts. */
  APIConnectionTimeoutError: ErrorClass;
  /** Aborts by the caller. */
  APIUserAbortError: ErrorClass;
}

/**
 * Translate an SDK (or fetch) error: timeouts → {@link APITimeoutError}, connection failures →
 * {@link APIConnectionError} (the original error, e.g. `Deno.errors.NotCapable`, kept as
 * `cause`), HTTP errors → {@link APIStatusError}, anything else → {@link ChatProviderError}. An
 * abort by the caller yields the signal's reason (an `AbortError` by default) so cancellation is
 * not retried.
 */
export function convertSdkError(
  err: unknown,
  ctx: ErrorContext,
  sdk: SdkErrorClasses,
): unknown {
  if (ctx.signal?.aborted) {
    return ctx.signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
  }
  if (err instanceof ChatProviderError) return err;
  const msg = scrub(errorMessage(err), ctx.apiKey);
  if (err instanceof sdk.APIUserAbortError) {
    return new DOMException("The operation was aborted.", "AbortError");
  }
  if (err instanceof sdk.APIConnectionTimeoutError) {
    return new APITimeoutError(msg, { cause: err });
  }
  if (err instanceof sdk.APIConnectionError) {
    const cause = (err as { cause?: unknown }).cause ?? err;
    if (cause instanceof Deno.errors.NotCapable) {
      return deniedError(cause, ctx.apiKey);
    }
    const detail = cause !== err && cause instanceof Error ? scrub(cause.message, ctx.apiKey) : "";
    return new APIConnectionError(detail ? `Connection error: ${detail}` : msg, { cause });
  }
  if (err instanceof sdk.APIError) {
    const status = (err as { status?: unknown }).status;
    if (typeof status === "number") return new APIStatusError(status, msg, { cause: err });
    return new ChatProviderError(msg, { cause: err });
  }
  return convertFetchError(err, ctx);
}

/** Translate an error of plain fetch / stream reading (no SDK classes involved). */
export function convertFetchError(err: unknown, ctx: ErrorContext): unknown {
  if (ctx.signal?.aborted) {
    return ctx.signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
  }
  if (err instanceof ChatProviderError) return err;
  const msg = scrub(errorMessage(err), ctx.apiKey);
  if (err instanceof Deno.errors.NotCapable) return deniedError(err, ctx.apiKey);
  // fetch failures while reading a streamed body surface as TypeErrors: treat as connection loss.
  if (err instanceof TypeError) {
    return new APIConnectionError(`Connection error: ${msg}`, { cause: err });
  }
  if (err instanceof Error && err.name === "TimeoutError") {
    return new APITimeoutError(msg, { cause: err });
  }
  return new ChatProviderError(`Error: ${msg}`, { cause: err });
}

/** A denied connection: the host Deno named (`Requires net access to "host:port"`). */
function deniedError(cause: Error, _apiKey: string): NetworkDeniedError {
  const m = /net access to "([^"]+)"/.exec(errorMessage(cause));
  return new NetworkDeniedError(m ? m[1] : null, { cause });
}

/** Remove every occurrence of the API key from a message. */
export function scrub(message: string, apiKey: string): string {
  return apiKey.length >= 4 ? message.replaceAll(apiKey, "[REDACTED]") : message;
}

/** The message of an error-like value. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
