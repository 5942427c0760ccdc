/**
 * How a turn that threw ended, decided once for every front end: {@link turnOutcome} sorts the
 * error into a {@link TurnOutcome}; print mode turns that into its exit code and lines, the wire
 * server into a result or an error response, ACP into a stop reason or a request error, the
 * shell into the line it prints, and a subagent's run into the failure its Agent call reports. The messages themselves are the errors' own (observable, see
 * `lib/soul/errors.ts`).
 *
 * @module
 */
import { AuthExpiredError, ChatProviderError, isRetryableError } from "../llm/errors.ts";
import { APIStatusError } from "../llm/errors.ts";
import { SessionWriteError } from "../session/jsonl.ts";
import { LLMNotSet, LLMNotSupported, MaxStepsReached, RunCancelled } from "./errors.ts";

/** The outcome of a turn that ended with an error. */
export type TurnOutcome =
  /** The user (or client) cancelled the turn. */
  | { readonly kind: "cancelled" }
  /** The turn used up its steps. */
  | { readonly kind: "max_steps"; readonly steps: number; readonly message: string }
  /** No usable model is configured. */
  | { readonly kind: "llm_not_set"; readonly message: string }
  /** The model lacks a capability the input needs. */
  | { readonly kind: "llm_not_supported"; readonly message: string }
  /** The OAuth login ran out: the user must sign in again. */
  | { readonly kind: "auth_expired"; readonly message: string; readonly error: AuthExpiredError }
  /** The model's provider failed. */
  | {
    readonly kind: "provider";
    readonly message: string;
    readonly error: ChatProviderError;
    /** What the soul would have retried (connection, timeout, 429/5xx, …). */
    readonly retryable: boolean;
    /** The provider answered 401 (the credentials are refused). */
    readonly unauthorized: boolean;
    /** The HTTP status the provider answered with (null: no answer, e.g. a connection error). */
    readonly status: number | null;
  }
  /** A session file could not be written. */
  | { readonly kind: "session_write"; readonly message: string }
  /** Anything else: a defect, reported as such. */
  | { readonly kind: "unexpected"; readonly message: string; readonly error: unknown };

/**
 * The outcome of a turn that threw `err`. `aborted`: the turn's signal was aborted (a provider
 * that noticed it may throw something other than {@link RunCancelled}).
 */
export function turnOutcome(err: unknown, opts: { aborted?: boolean } = {}): TurnOutcome {
  if (err instanceof RunCancelled || opts.aborted) return { kind: "cancelled" };
  if (err instanceof MaxStepsReached) {
    return { kind: "max_steps", steps: err.nSteps, message: err.message };
  }
  if (err instanceof LLMNotSet) return { kind: "llm_not_set", message: err.message };
  if (err instanceof LLMNotSupported) return { kind: "llm_not_supported", message: err.message };
  if (err instanceof AuthExpiredError) {
    return { kind: "auth_expired", message: err.message, error: err };
  }
  if (err instanceof ChatProviderError) {
    return {
      kind: "provider",
      message: err.message,
      error: err,
      retryable: isRetryableError(err),
      unauthorized: err instanceof APIStatusError && err.statusCode === 401,
      status: err instanceof APIStatusError ? err.statusCode : null,
    };
  }
  if (err instanceof SessionWriteError) return { kind: "session_write", message: err.message };
  return { kind: "unexpected", message: (err as Error)?.message ?? String(err), error: err };
}
