/**
 * Shared pieces of the Moonshot web services calls (SearchWeb, FetchURL).
 *
 * @module
 */
import { VERSION } from "../version.ts";
import type { WebServiceConfig } from "../tooling/tool.ts";

/** User-Agent sent to Moonshot services. */
export const SERVICE_USER_AGENT = `KimiCLI/${VERSION}`;

/** Whether a service has credentials (a key or an OAuth login). */
export function serviceConfigured(service: WebServiceConfig): boolean {
  return Boolean(service.baseUrl && (service.apiKey || service.accessToken));
}

/**
 * Headers of a service call: agent, bearer key (the current OAuth access token when the service
 * uses a login), tool call id, then the configured extras.
 */
export async function serviceHeaders(
  service: WebServiceConfig,
  toolCallId: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<Record<string, string>> {
  const token = (await service.accessToken?.()) || service.apiKey;
  return {
    "User-Agent": SERVICE_USER_AGENT,
    "Authorization": `Bearer ${token}`,
    "X-Msh-Tool-Call-Id": toolCallId,
    ...extra,
    ...service.customHeaders,
  };
}

/** `host[:port]` of a URL (what the net permission is checked against), or `null`. */
export function hostOf(url: string): string | null {
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}

/** A signal that aborts with the call's signal or after `ms`. */
export function withTimeout(signal: AbortSignal, ms: number): AbortSignal {
  return AbortSignal.any([signal, AbortSignal.timeout(ms)]);
}

/** Whether an error is the timeout of {@link withTimeout} (and not a cancellation). */
export function isTimeoutError(e: unknown, callSignal: AbortSignal): boolean {
  if (callSignal.aborted) return false;
  return e instanceof DOMException && (e.name === "TimeoutError" || e.name === "AbortError");
}

/** Error text without anything secret-looking (bearer values are masked). */
export function describeError(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.replace(/Bearer\s+\S+/gi, "Bearer ***");
}
