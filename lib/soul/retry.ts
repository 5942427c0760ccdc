/**
 * Retrying a step's LLM call on transient errors with exponential backoff and jitter
 * (reference §6.6: initial 0.3 s, max 5 s, jitter 0.5 s).
 *
 * @module
 */
import { APIStatusError, isRetryableError } from "../llm/errors.ts";

/** What is reported before each retry. */
export interface RetryNotice {
  /** Attempt that failed (1-based). */
  attempt: number;
  /** Attempt that comes next. */
  nextAttempt: number;
  /** Attempts allowed in total. */
  maxAttempts: number;
  /** Seconds waited before the next attempt. */
  waitS: number;
  /** Class name of the error. */
  errorType: string;
  /** HTTP status, if any. */
  statusCode: number | null;
}

/** Backoff before the attempt after `attempt` (1-based). */
export function backoffSeconds(attempt: number, random = Math.random): number {
  return Math.min(0.3 * 2 ** (attempt - 1) + random() * 0.5, 5);
}

/** Sleep that an abort signal cuts short (rejecting with the abort reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Run `fn` up to `maxAttempts` times while it fails with a retryable error. */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  opts: { maxAttempts: number; signal?: AbortSignal; onRetry?: (n: RetryNotice) => void },
): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      if (attempt >= opts.maxAttempts || !isRetryableError(err)) throw err;
      const waitS = backoffSeconds(attempt);
      opts.onRetry?.({
        attempt,
        nextAttempt: attempt + 1,
        maxAttempts: opts.maxAttempts,
        waitS,
        errorType: (err as Error).name,
        statusCode: err instanceof APIStatusError ? err.statusCode : null,
      });
      await sleep(waitS * 1000, opts.signal);
    }
  }
}
