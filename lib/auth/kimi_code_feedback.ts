/**
 * Feedback sent to the Kimi Code platform (`POST <base>/feedback`), as the reference's
 * `/feedback` sends it when signed in. The access token travels only in the request header:
 * no outcome, message or log line holds it.
 *
 * @module
 */

/** The JSON body of a feedback submission (the reference's field names). */
export interface FeedbackPayload {
  /** The session the feedback is about. */
  session_id: string;
  /** What the user typed. */
  content: string;
  /** This program's version. */
  version: string;
  /** `<system> <release>`, e.g. `Linux 6.8.0`. */
  os: string;
  /** Config key of the current model, or null when no model is set. */
  model: string | null;
}

/** How a submission ended. */
export type FeedbackOutcome =
  | { kind: "submitted" }
  | { kind: "timeout" }
  | { kind: "cancelled" }
  | { kind: "http"; status: number }
  /** The host could not be reached; `denied` names a host this run may not reach. */
  | { kind: "network"; denied: string | null };

/** Options of {@link submitFeedback}. */
export interface SubmitFeedbackOptions {
  /** Kimi Code API base URL (a trailing slash is dropped). */
  baseUrl: string;
  /** Current access token of the login. */
  accessToken: string;
  /**
   * A fresh token after the platform answered 401 (null: no retry); tried once. Errors count
   * as no fresh token.
   */
  refreshToken?: () => Promise<string>;
  /** The provider's custom headers, sent along. */
  headers?: Record<string, string>;
  /** The body. */
  payload: FeedbackPayload;
  /** Whole-submission timeout; default 30 s. */
  timeoutMs?: number;
  /** Aborts the submission (the user pressed Ctrl-C). */
  signal?: AbortSignal;
  /** Fetch (tests). */
  fetch?: typeof fetch;
}

/** The feedback endpoint of a Kimi Code base URL. */
export function feedbackUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/feedback`;
}

/** `<system> <release>` as Python's `platform.system()` / `platform.release()` name them. */
export function osDescription(
  os: string = Deno.build.os,
  release: () => string = () => Deno.osRelease(),
): string {
  const system = os === "darwin"
    ? "Darwin"
    : os === "windows"
    ? "Windows"
    : os === "linux"
    ? "Linux"
    : os.charAt(0).toUpperCase() + os.slice(1);
  let rel = "";
  try {
    rel = release();
  } catch {
    // no --allow-sys: the system alone
  }
  return rel ? `${system} ${rel}` : system;
}

/** POST the feedback; never throws for network, HTTP or timeout failures. */
export async function submitFeedback(opts: SubmitFeedbackOptions): Promise<FeedbackOutcome> {
  const url = feedbackUrl(opts.baseUrl);
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? 30_000);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  const body = JSON.stringify(opts.payload);
  const send = (token: string) =>
    (opts.fetch ?? fetch)(url, {
      method: "POST",
      headers: {
        ...(opts.headers ?? {}),
        "Content-Type": "application/json",
        Authorization: `Bearer ${token}`,
      },
      body,
      signal,
    });
  try {
    let res = await send(opts.accessToken);
    if (res.status === 401 && opts.refreshToken) {
      const fresh = await opts.refreshToken().catch(() => "");
      if (fresh && fresh !== opts.accessToken) {
        await res.body?.cancel();
        res = await send(fresh);
      }
    }
    await res.body?.cancel();
    return res.ok ? { kind: "submitted" } : { kind: "http", status: res.status };
  } catch (err) {
    if (opts.signal?.aborted) return { kind: "cancelled" };
    if (timeout.aborted) return { kind: "timeout" };
    if (err instanceof Deno.errors.NotCapable) {
      let host = url;
      try {
        host = new URL(url).host;
      } catch {
        // the URL itself names it
      }
      return { kind: "network", denied: host };
    }
    return { kind: "network", denied: null };
  }
}
