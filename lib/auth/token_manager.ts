/**
 * Current access tokens for `oauth` references: read from the credentials file, refreshed
 * before they expire (and on demand after a 401), with refreshes serialized inside the process
 * and across processes. Refresh tokens rejected by the host are remembered so the same dead
 * token is not sent again; a new login (a different refresh token on disk) clears that.
 *
 * @module
 */
import type { EnvReader } from "../config/share_dir.ts";
import { log } from "../log.ts";
import { loadToken, saveToken, type StoredToken, withCredentialsLock } from "./credentials.ts";
import { commonHeaders } from "./device.ts";
import { oauthHost } from "./kimi_code.ts";
import { type OAuthEndpoint, OAuthUnauthorized, refreshAccessToken } from "./oauth_http.ts";

/** Refresh at least this long (s) before expiry. */
const MIN_REFRESH_THRESHOLD_S = 300;

/** Seconds before expiry at which a token is refreshed: max(300 s, half its lifetime). */
export function refreshThreshold(expiresIn: number): number {
  return expiresIn > 0
    ? Math.max(MIN_REFRESH_THRESHOLD_S, expiresIn * 0.5)
    : MIN_REFRESH_THRESHOLD_S;
}

/** Whether a stored token should be refreshed at `nowS` (seconds). */
export function needsRefresh(token: StoredToken, nowS: number): boolean {
  if (!token.access_token) return true;
  if (!token.expires_at) return false; // no expiry known: use it until the API says 401
  return token.expires_at - nowS < refreshThreshold(token.expires_in);
}

/** Options of {@link OAuthTokenManager}. */
export interface OAuthTokenManagerOptions {
  /** The share dir holding `credentials/`. */
  shareDir: string;
  /** Environment (OAuth host overrides). */
  getEnv: EnvReader;
  /** Fetch (tests). */
  fetch?: typeof fetch;
  /** Clock in ms (tests). */
  now?: () => number;
}

/** Hands out current access tokens for OAuth references. */
export class OAuthTokenManager {
  readonly #opts: OAuthTokenManagerOptions;
  readonly #rejected = new Map<string, string>(); // key → refresh token the host rejected
  #chain: Promise<unknown> = Promise.resolve();

  /** Create a manager. */
  constructor(opts: OAuthTokenManagerOptions) {
    this.#opts = opts;
  }

  #now(): number {
    return (this.#opts.now ?? Date.now)() / 1000;
  }

  async #endpoint(): Promise<OAuthEndpoint> {
    return {
      host: oauthHost(this.#opts.getEnv),
      headers: await commonHeaders(this.#opts.shareDir),
      fetch: this.#opts.fetch,
    };
  }

  /** Serialize refreshes within this process. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => {});
    return run;
  }

  async #load(key: string): Promise<StoredToken | null> {
    const token = await loadToken(this.#opts.shareDir, key);
    if (!token) return null;
    const rejected = this.#rejected.get(key);
    if (rejected !== undefined) {
      if (rejected === token.refresh_token) return null;
      this.#rejected.delete(key); // a new login or another process's refresh
    }
    return token;
  }

  /**
   * The access token to send for `key`, refreshed first when it is close to expiry. Empty when
   * there is no usable login. A failed early refresh keeps the current token (the API decides).
   */
  async accessToken(key: string): Promise<string> {
    const token = await this.#load(key);
    if (!token) return "";
    if (!needsRefresh(token, this.#now()) || !token.refresh_token) return token.access_token;
    try {
      return (await this.#refresh(key, token, false)).access_token;
    } catch (err) {
      if (err instanceof OAuthUnauthorized) return "";
      log("WARNING", "oauth", `early token refresh failed: ${(err as Error).message}`);
      return token.access_token;
    }
  }

  /**
   * Whether there is a usable login for `key` (an access token, refreshed first when needed).
   * For callers that gate on a login, e.g. ACP `authenticate` / `session/new`.
   */
  async hasUsableLogin(key: string): Promise<boolean> {
    return (await this.accessToken(key)) !== "";
  }

  /**
   * Refresh after the API answered 401 and return the new access token.
   *
   * @throws {OAuthUnauthorized} when there is no login or the host rejects it.
   * @throws {OAuthError} when the host cannot be reached.
   */
  async refreshAfterUnauthorized(key: string): Promise<string> {
    const token = await this.#load(key);
    if (!token || !token.refresh_token) throw new OAuthUnauthorized("No refresh token stored.");
    return (await this.#refresh(key, token, true)).access_token;
  }

  #refresh(key: string, seen: StoredToken, force: boolean): Promise<StoredToken> {
    const shareDir = this.#opts.shareDir;
    return this.#serial(() =>
      withCredentialsLock(shareDir, key, async () => {
        // Another process (or an earlier call here) may have refreshed meanwhile.
        const current = await this.#load(key);
        if (!current) throw new OAuthUnauthorized("No login stored.");
        if (current.refresh_token !== seen.refresh_token) return current;
        if (!force && !needsRefresh(current, this.#now())) return current;
        try {
          const fresh = await refreshAccessToken(await this.#endpoint(), current.refresh_token);
          await saveToken(shareDir, key, fresh);
          log("INFO", "oauth", `refreshed the access token of ${key}`);
          return fresh;
        } catch (err) {
          if (err instanceof OAuthUnauthorized) {
            this.#rejected.set(key, current.refresh_token);
            log("WARNING", "oauth", `the OAuth host rejected the login of ${key}`);
          }
          throw err;
        }
      })
    );
  }
}

const managers = new Map<string, OAuthTokenManager>();

/** The process-wide manager of a share dir. */
export function tokenManagerFor(shareDir: string, getEnv: EnvReader): OAuthTokenManager {
  let m = managers.get(shareDir);
  if (!m) {
    m = new OAuthTokenManager({ shareDir, getEnv });
    managers.set(shareDir, m);
  }
  return m;
}
