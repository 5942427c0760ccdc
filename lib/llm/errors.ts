/**
 * Provider errors, classified so the soul can decide whether to retry.
 *
 * Class names are observable: `StepRetry.error_type` carries them.
 *
 * @module
 */

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

/** HTTP statuses worth retrying. */
export const RETRYABLE_STATUS: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Whether an error is transient: connection, timeout, empty response, 429 or 5xx. */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof APIConnectionError || err instanceof APITimeoutError) return true;
  if (err instanceof APIEmptyResponseError) return true;
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
