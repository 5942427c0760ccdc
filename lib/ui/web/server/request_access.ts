/**
 * The access rule of one request of `kimi web`, shared by HTTP routes and the WebSocket:
 * LAN-only, Host (loopback binds), the ban after repeated wrong tokens, Origin (public mode),
 * then the token (each wrong token counts against the peer address).
 *
 * @module
 */
import { log } from "../../../log.ts";
import { hostAllowed, isLanAddress, originAllowed, requestToken } from "./access_guard.ts";
import type { WebContext } from "./web_context.ts";

/** Why a request is refused. */
export interface AccessRefusal {
  /** HTTP status. */
  status: 401 | 403 | 429;
  /** The `detail` message. */
  detail: string;
  /** Which rule refused it. */
  kind: "lan" | "host" | "origin" | "auth" | "ban";
}

/**
 * The access rule of one request, shared by HTTP and the WebSocket: null when it may proceed,
 * else the status and message to refuse it with.
 */
export function checkAccess(
  ctx: WebContext,
  req: Request,
  peer: string,
  opts: { tokenInQuery: boolean; skipToken?: boolean },
): AccessRefusal | null {
  const sec = ctx.security;
  if (sec.lanOnly && peer && !isLanAddress(peer)) {
    return {
      status: 403,
      detail: "Access denied: only local network access is allowed",
      kind: "lan",
    };
  }
  if (sec.loopback && !hostAllowed(req.headers.get("host"), sec.host)) {
    return {
      status: 403,
      detail: `Invalid Host header: ${req.headers.get("host")}`,
      kind: "host",
    };
  }
  if (opts.skipToken) return null;
  if (peer && ctx.failures.isBanned(peer)) {
    return { status: 429, detail: "Too many failed auth attempts", kind: "ban" };
  }
  const origin = req.headers.get("origin");
  if (sec.enforceOrigin && origin && !originAllowed(origin, sec.allowedOrigins)) {
    return { status: 403, detail: "Origin not allowed", kind: "origin" };
  }
  if (ctx.tokens) {
    const given = requestToken(req, { query: opts.tokenInQuery });
    if (given === null || !ctx.tokens.accepts(given)) {
      // a wrong token counts towards the ban; a missing one (a page opened without its
      // `#token=`) does not lock the user out
      if (peer && given !== null) ctx.failures.fail(peer);
      log("INFO", "web", `refused a request without a valid token from ${peer || "?"}`);
      return { status: 401, detail: "Unauthorized", kind: "auth" };
    }
  }
  return null;
}
