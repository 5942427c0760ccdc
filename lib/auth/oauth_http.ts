/**
 * The HTTP calls of the Kimi Code OAuth device flow (RFC 8628) and token refresh. Tokens are
 * never part of an error message.
 *
 * @module
 */
import { KIMI_CODE_CLIENT_ID } from "./kimi_code.ts";
import { type StoredToken, tokenFromResponse, type TokenResponse } from "./credentials.ts";

/** An OAuth failure; the message names the cause and never holds a token. */
export class OAuthError extends Error {
  /** Create an OAuth error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "OAuthError";
  }
}

/** The OAuth host rejected the refresh token (HTTP 401/403): a new login is needed. */
export class OAuthUnauthorized extends OAuthError {
  /** Create the error. */
  constructor(message = "Token refresh unauthorized.", options?: ErrorOptions) {
    super(message, options);
    this.name = "OAuthUnauthorized";
  }
}

/** Where and how to talk to the OAuth host. */
export interface OAuthEndpoint {
  /** OAuth host, e.g. `https://auth.kimi.com` (no trailing slash). */
  host: string;
  /** `X-Msh-*` headers. */
  headers: Record<string, string>;
  /** Fetch (tests). */
  fetch?: typeof fetch;
  /** Per-request timeout; default 30 s. */
  timeoutMs?: number;
}

/** A device authorization (`/api/oauth/device_authorization`). */
export interface DeviceAuthorization {
  /** Code the user confirms. */
  userCode: string;
  /** Code the client polls with (secret). */
  deviceCode: string;
  /** Where the user goes. */
  verificationUri: string;
  /** Where the user goes, with the code filled in. */
  verificationUriComplete: string;
  /** Seconds until the device code expires, when the host says. */
  expiresIn: number | null;
  /** Seconds between polls. */
  interval: number;
}

/** Outcome of one poll of the token endpoint. */
export type DevicePoll =
  | { kind: "token"; token: StoredToken }
  | { kind: "pending"; error: string; description: string; interval: number | null };

async function post(
  ep: OAuthEndpoint,
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; data: Record<string, unknown> }> {
  const url = `${ep.host}${path}`;
  let res: Response;
  try {
    res = await (ep.fetch ?? fetch)(url, {
      method: "POST",
      headers: { ...ep.headers, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(ep.timeoutMs ?? 30_000),
    });
  } catch (err) {
    const why = err instanceof Deno.errors.NotCapable
      ? `network access to ${new URL(url).host} was not granted (add --allow-net=${
        new URL(url).host
      })`
      : (err as Error)?.name === "TimeoutError"
      ? "timed out"
      : (err as Error)?.message ?? String(err);
    throw new OAuthError(`cannot reach ${url}: ${why}`, { cause: err });
  }
  const text = await res.text().catch(() => "");
  let data: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) data = parsed;
  } catch {
    // non-JSON body: described by status below
  }
  return { status: res.status, data };
}

function isWebUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === "https:" || u.protocol === "http:") && !/[^\x21-\x7e]/.test(url);
  } catch {
    return false;
  }
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
}

/** Server-provided text, without control characters and bounded. */
function printable(v: unknown): string {
  // deno-lint-ignore no-control-regex
  return str(v).replace(/[\x00-\x1f\x7f-\x9f]/g, " ").slice(0, 300);
}

function describeFailure(status: number, data: Record<string, unknown>): string {
  const code = printable(data.error);
  const desc = printable(data.error_description);
  if (code && desc) return `${desc} (${code}, HTTP ${status})`;
  if (code || desc) return `${code || desc} (HTTP ${status})`;
  return `HTTP ${status}`;
}

/** Start a device authorization. */
export async function requestDeviceAuthorization(ep: OAuthEndpoint): Promise<DeviceAuthorization> {
  const { status, data } = await post(ep, "/api/oauth/device_authorization", {
    client_id: KIMI_CODE_CLIENT_ID,
  });
  if (status !== 200) {
    throw new OAuthError(`Device authorization failed: ${describeFailure(status, data)}`);
  }
  const userCode = str(data.user_code);
  const deviceCode = str(data.device_code);
  const complete = str(data.verification_uri_complete) || str(data.verification_uri);
  if (!userCode || !deviceCode || !complete) {
    throw new OAuthError("Device authorization failed: the OAuth host sent an incomplete answer.");
  }
  // Shown on a terminal and handed to a browser: only plain http(s) URLs and printable codes.
  if (!isWebUrl(complete) || /[^\x21-\x7e]/.test(userCode)) {
    throw new OAuthError(
      "Device authorization failed: the OAuth host sent an invalid URL or code.",
    );
  }
  const expiresIn = Number(data.expires_in);
  const interval = Number(data.interval);
  return {
    userCode,
    deviceCode,
    verificationUri: str(data.verification_uri),
    verificationUriComplete: complete,
    expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : null,
    interval: Number.isFinite(interval) && interval > 0 ? interval : 5,
  };
}

/**
 * Poll the token endpoint once. `authorization_pending` and `slow_down` come back as
 * `pending`; every other error is thrown: {@link DeviceExpired} for `expired_token`,
 * {@link OAuthError} otherwise (`access_denied` included).
 */
export async function pollDeviceToken(
  ep: OAuthEndpoint,
  auth: DeviceAuthorization,
): Promise<DevicePoll> {
  const { status, data } = await post(ep, "/api/oauth/token", {
    client_id: KIMI_CODE_CLIENT_ID,
    device_code: auth.deviceCode,
    grant_type: "urn:ietf:params:oauth:grant-type:device_code",
  });
  if (status === 200 && typeof data.access_token === "string") {
    return { kind: "token", token: tokenFromResponse(data as unknown as TokenResponse) };
  }
  if (status >= 500) throw new OAuthError(`Token polling server error: ${status}.`);
  const error = str(data.error) || "unknown_error";
  if (error === "expired_token") throw new DeviceExpired();
  if (error === "authorization_pending" || error === "slow_down") {
    const interval = Number(data.interval);
    return {
      kind: "pending",
      error,
      description: printable(data.error_description),
      interval: Number.isFinite(interval) && interval > 0 ? interval : null,
    };
  }
  if (error === "access_denied") {
    throw new OAuthError("the authorization request was denied (access_denied).");
  }
  throw new OAuthError(`the OAuth host refused the login: ${describeFailure(status, data)}`);
}

/** The device code expired before the user finished. */
export class DeviceExpired extends OAuthError {
  /** Create the error. */
  constructor() {
    super("Device code expired.");
    this.name = "DeviceExpired";
  }
}

const RETRYABLE_REFRESH = new Set([429, 500, 502, 503, 504]);

/** Options of {@link refreshAccessToken}. */
export interface RefreshOptions {
  /** Attempts on network errors and 429/5xx; default 3. */
  maxAttempts?: number;
  /** Sleep between attempts (tests). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Trade a refresh token for a new token set.
 *
 * @throws {OAuthUnauthorized} on 401/403 (the login is over).
 * @throws {OAuthError} on other failures, after retrying transient ones.
 */
export async function refreshAccessToken(
  ep: OAuthEndpoint,
  refreshToken: string,
  opts: RefreshOptions = {},
): Promise<StoredToken> {
  const attempts = opts.maxAttempts ?? 3;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let last = "";
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(2 ** (attempt - 1) * 1000);
    let status: number;
    let data: Record<string, unknown>;
    try {
      ({ status, data } = await post(ep, "/api/oauth/token", {
        client_id: KIMI_CODE_CLIENT_ID,
        grant_type: "refresh_token",
        refresh_token: refreshToken,
      }));
    } catch (err) {
      last = (err as Error).message;
      continue;
    }
    if (status === 401 || status === 403) {
      throw new OAuthUnauthorized(
        printable(data.error_description) || "Token refresh unauthorized.",
      );
    }
    if (status === 200 && typeof data.access_token === "string") {
      return tokenFromResponse(data as unknown as TokenResponse);
    }
    last = `Token refresh failed: ${describeFailure(status, data)}`;
    if (!RETRYABLE_REFRESH.has(status)) throw new OAuthError(last);
  }
  throw new OAuthError(`Token refresh failed after retries: ${last}`);
}
