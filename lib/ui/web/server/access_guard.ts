/**
 * The checks every request of `kimi web` passes before a route runs: the LAN-only rule (peer
 * address private, loopback or link-local), the Origin rule of public mode, the Host rule of
 * loopback binds (DNS rebinding), the token, and the ban of an address after repeated wrong
 * tokens.
 *
 * @module
 */

/** Failed token checks from one address before it is refused. */
export const MAX_AUTH_FAILURES = 10;
/** How long failures are counted, and how long a refused address stays refused (ms). */
export const AUTH_BAN_MS = 60_000;

function parseIPv4(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

function privateIPv4([a, b]: number[]): boolean {
  return a === 10 || a === 127 || (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) || (a === 169 && b === 254) || a === 0;
}

/**
 * Whether a peer address may use a LAN-only server: private (RFC 1918, unique local `fc00::/7`),
 * loopback or link-local; an IPv4-mapped IPv6 address counts as its IPv4 address. Anything
 * unparseable is refused.
 */
export function isLanAddress(address: string): boolean {
  let addr = address.trim().toLowerCase();
  if (addr.startsWith("[") && addr.endsWith("]")) addr = addr.slice(1, -1);
  const zone = addr.indexOf("%");
  if (zone >= 0) addr = addr.slice(0, zone);
  const v4 = parseIPv4(addr);
  if (v4) return privateIPv4(v4);
  if (!addr.includes(":") || !/^[0-9a-f:.]+$/.test(addr)) return false;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(addr) ??
    /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(addr);
  if (mapped) {
    const m = parseIPv4(mapped[1]);
    return m !== null && privateIPv4(m);
  }
  if (addr === "::1") return true;
  const first = parseInt(addr.split(":")[0] || "0", 16);
  if (Number.isNaN(first)) return false;
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80;
}

/** Whether a bind host is loopback (local mode). */
export function isLoopbackHost(host: string): boolean {
  return host === "127.0.0.1" || host === "localhost" || host === "::1";
}

/** Whether `origin` (an `Origin` header) is in `allowed` (`*` allows any). */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  const o = origin.replace(/\/+$/, "");
  return allowed.some((a) => a === "*" || a === o);
}

/** `--allowed-origins`: comma list, entries trimmed, trailing `/` removed, empties dropped. */
export function parseAllowedOrigins(text: string | undefined): string[] {
  if (!text) return [];
  return text.split(",").map((s) => s.trim().replace(/\/+$/, "")).filter((s) => s.length > 0);
}

/**
 * Whether a `Host` header names this loopback server: `localhost`, `*.localhost`, an IP
 * literal or `bindHost` (a page on another name that resolves here, DNS rebinding, is refused).
 */
export function hostAllowed(hostHeader: string | null, bindHost: string): boolean {
  if (!hostHeader) return true;
  let name = hostHeader.trim().toLowerCase();
  if (name.startsWith("[")) name = name.slice(1, name.indexOf("]"));
  else if (name.includes(":")) name = name.slice(0, name.lastIndexOf(":"));
  if (name === "localhost" || name.endsWith(".localhost") || name === bindHost) return true;
  return parseIPv4(name) !== null || name.includes(":");
}

/** The token a request carries: `Authorization: Bearer` (any case), or `?token=` when allowed. */
export function requestToken(req: Request, opts: { query: boolean }): string | null {
  const auth = req.headers.get("authorization");
  if (auth) {
    const m = /^bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1].trim();
  }
  if (opts.query) {
    const q = new URL(req.url).searchParams.get("token");
    if (q) return q;
  }
  return null;
}

/** Failed token checks per address; an address over the limit is refused for a while. */
export class AuthFailures {
  readonly #failures = new Map<string, number[]>();
  readonly #banned = new Map<string, number>();
  readonly #now: () => number;

  /** `now` gives the time in ms (tests pass a clock). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Whether `address` is refused now. */
  isBanned(address: string): boolean {
    const until = this.#banned.get(address);
    if (until === undefined) return false;
    if (this.#now() < until) return true;
    this.#banned.delete(address);
    return false;
  }

  /** Count a failure; resolves whether the address is now refused. */
  fail(address: string): boolean {
    const now = this.#now();
    const recent = (this.#failures.get(address) ?? []).filter((t) => now - t < AUTH_BAN_MS);
    recent.push(now);
    if (recent.length >= MAX_AUTH_FAILURES) {
      this.#failures.delete(address);
      this.#banned.set(address, now + AUTH_BAN_MS);
      return true;
    }
    this.#failures.set(address, recent);
    // bounded memory: forget addresses with no recent failure
    if (this.#failures.size > 4096) {
      for (const [a, ts] of this.#failures) {
        if (ts.every((t) => now - t >= AUTH_BAN_MS)) this.#failures.delete(a);
      }
    }
    return false;
  }
}
