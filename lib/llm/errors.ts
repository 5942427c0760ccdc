/**
 * Provider errors, classified so the soul can decide whether to retry.
 *
 * Class names are observable: `StepRetry.error_type` carries them.
 *
 * @module
 */
import { summarizeErrorBody } from "../excerpt.ts";

/** Base class of every error a chat provider raises. */
export class ChatProviderError extends Error {
  /** Create a provider error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ChatProviderError";
  }
}

/** The provider could not be reached (DNS, refused, reset, denied by the sandbox). */
export class APIConnectionError extends ChatProviderError {
  /** Create a connection error. */
  constructor(message = "Connection error.", options?: ErrorOptions) {
    super(message, options);
    this.name = "APIConnectionError";
  }
}

/**
 * Deno's permissions do not let this run reach the provider's host (a permission profile
 * started before the host was configured). Not retryable: the same run can never reach it.
 */
export class NetworkDeniedError extends ChatProviderError {
  /** The host (`host[:port]`) that was denied, when Deno named it. */
  readonly host: string | null;
  /** Create the error for `host`. */
  constructor(host: string | null, options?: ErrorOptions) {
    const where = host ? `\`${host}\`` : "the model's host";
    const flag = host ? `--allow-net=${host}` : "--allow-net=<host>";
    super(
      `This run has no network access to ${where} (Deno was started without ${flag}), so the ` +
        "model cannot be reached. Restart kimi with that permission: the permission profiles " +
        "(`kimi-review`, `deno task review`) read the model host from the config when they " +
        `start, or add ${flag} to the deno command.`,
      options,
    );
    this.name = "NetworkDeniedError";
    this.host = host;
  }
}

/** The provider did not answer in time. */
export class APITimeoutError extends ChatProviderError {
  /** Create a timeout error. */
  constructor(message = "Request timed out.", options?: ErrorOptions) {
    super(message, options);
    this.name = "APITimeoutError";
  }
}

/** The provider answered with an HTTP error status. */
export class APIStatusError extends ChatProviderError {
  /** HTTP status code. */
  readonly statusCode: number;
  /** Create a status error. */
  constructor(statusCode: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "APIStatusError";
    this.statusCode = statusCode;
  }
}

/** The provider returned no usable content (nothing, or thinking only). */
export class APIEmptyResponseError extends ChatProviderError {
  /** Create an empty-response error. */
  constructor(message = "The API returned an empty response.", options?: ErrorOptions) {
    super(message, options);
    this.name = "APIEmptyResponseError";
  }
}

/**
 * A streamed response passed one of the `model_stream` limits (text, thinking or tool-call
 * arguments) and was cut, so it never exhausts memory. Retryable: a model stuck repeating
 * itself usually answers normally on the next attempt.
 */
export class APIStreamLimitError extends ChatProviderError {
  /** Which part of the response overflowed. */
  readonly part: "text" | "thinking" | "tool_arguments";
  /** The limit in bytes. */
  readonly limitBytes: number;
  /** Create a stream-limit error. */
  constructor(part: "text" | "thinking" | "tool_arguments", limitBytes: number) {
    const what = part === "tool_arguments" ? "tool-call arguments" : part;
    const key = part === "tool_arguments" ? "max_tool_arguments_bytes" : `max_${part}_bytes`;
    super(
      `The model's response was cut: its ${what} passed ${formatBytes(limitBytes)}. ` +
        `Raise model_stream.${key} in the config if such long output is expected.`,
    );
    this.name = "APIStreamLimitError";
    this.part = part;
    this.limitBytes = limitBytes;
  }
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** HTTP statuses worth retrying. */
export const RETRYABLE_STATUS: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Whether an error is transient: connection, timeout or stall, empty or cut-off response, 429, 5xx. */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof APIConnectionError || err instanceof APITimeoutError) return true;
  if (err instanceof APIEmptyResponseError || err instanceof APIStreamLimitError) return true;
  if (err instanceof APIStatusError) return RETRYABLE_STATUS.has(err.statusCode);
  return false;
}

/** Whether an error says the prompt no longer fits the model's context window. */
export function isContextOverflowError(err: unknown): boolean {
  if (!(err instanceof APIStatusError)) return false;
  if (err.statusCode !== 400 && err.statusCode !== 413) return false;
  return /context|too long|maximum.*tokens|token limit|exceeds/i.test(err.message);
}

/** The exact text users and wire clients see when an OAuth login has run out. */
export const AUTH_EXPIRED_MESSAGE =
  'Authentication failed. Your login session may have expired. Please run "/login" to sign in again.';

/**
 * An OAuth-backed provider answered 401 and the login could not be refreshed (or there is no
 * login): the user must sign in again. Not retryable.
 */
export class AuthExpiredError extends APIStatusError {
  /** Create the error. */
  constructor(options?: ErrorOptions) {
    super(401, AUTH_EXPIRED_MESSAGE, options);
    this.name = "AuthExpiredError";
  }
}

/** Longest provider status message passed through as it is. */
const STATUS_MESSAGE_MAX = 500;

/**
 * A status error whose message is an HTML page or kilobytes of body, made short: the status and
 * the page's title (or the body's first line), escaped. Anything else is returned unchanged.
 */
export function conciseProviderError(err: unknown): unknown {
  if (!(err instanceof APIStatusError)) return err;
  const code = err.statusCode;
  const body = err.message.startsWith(`${code} `)
    ? err.message.slice(`${code} `.length)
    : err.message;
  const html = /<(!doctype\s+html|html|head|body|title)\b/i.test(body);
  if (!html && err.message.length <= STATUS_MESSAGE_MAX) return err;
  const summary = summarizeErrorBody(body);
  const message = html
    ? `HTTP ${code}: ${summary} (an HTML error page, not an API response: the provider or a ` +
      "proxy in front of it failed; retry later, or check the provider's base_url)"
    : `HTTP ${code}: ${summary}`;
  return new APIStatusError(code, message, { cause: err });
}
