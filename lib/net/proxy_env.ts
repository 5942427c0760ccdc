/**
 * Proxy environment variables as the reference reads them: a `socks://` proxy means SOCKS5.
 * Deno's fetch honours `socks5://` and `socks5h://` in `HTTP_PROXY`/`HTTPS_PROXY` but would
 * silently connect directly for a `socks://` value, bypassing the proxy the user set.
 *
 * @module
 */

/** The proxy variables rewritten, in both spellings. */
export const PROXY_ENV_VARS: readonly string[] = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
];

/** The value with a `socks://` scheme spelled `socks5://`; other values unchanged. */
export function normalizeProxyUrl(value: string): string {
  return /^socks:\/\//i.test(value) ? `socks5://${value.slice("socks://".length)}` : value;
}

/**
 * Rewrite `socks://` proxies in this process's environment to `socks5://` (so fetch and the
 * commands kimi starts use them). Variables the run may not read or write are left alone.
 * Returns the names rewritten.
 */
export function normalizeSocksProxyEnv(): string[] {
  const changed: string[] = [];
  for (const name of PROXY_ENV_VARS) {
    try {
      const value = Deno.env.get(name);
      if (value === undefined) continue;
      const fixed = normalizeProxyUrl(value);
      if (fixed !== value) {
        Deno.env.set(name, fixed);
        changed.push(name);
      }
    } catch {
      // no env permission for this name: nothing kimi can read or fix
    }
  }
  return changed;
}
