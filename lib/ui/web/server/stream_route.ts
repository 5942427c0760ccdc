/**
 * `GET /api/sessions/{id}/stream` (reference §A4): the WebSocket of one session. The access
 * rules run on the upgrade; a refused socket is closed at once with `4403` (LAN-only, Host,
 * Origin), `4401` (token), `4429` (address banned) or `4004` (unknown session). An accepted
 * socket gets the session's history, `history_complete`, then live output and `session_status`;
 * its frames go to the session's wire server in order.
 *
 * @module
 */
import type { Context } from "hono";
import { log } from "../../../log.ts";
import { checkAccess } from "./request_access.ts";
import { SessionIdSchema } from "./schemas.ts";
import type { SocketPeer } from "./socket_peer.ts";
import type { WebContext } from "./web_context.ts";

/** Close codes of refused sockets. */
export const CLOSE_CODES = {
  auth: { code: 4401, reason: "Auth required" },
  lan: { code: 4403, reason: "Access denied: LAN only" },
  host: { code: 4403, reason: "Invalid Host header" },
  origin: { code: 4403, reason: "Origin not allowed" },
  ban: { code: 4429, reason: "Too many failed auth attempts" },
  missing: { code: 4004, reason: "Session not found" },
} as const;

/** Largest frame a client may send (the wire protocol's line limit is larger; a page needs less). */
export const MAX_CLIENT_FRAME_CHARS = 16 * 1024 * 1024;

/** Answer the upgrade of a session socket. */
// deno-lint-ignore no-explicit-any
export function attachStream(ctx: WebContext, c: Context<any>, peerAddr: string): Response {
  const req = c.req.raw;
  if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
    return c.json({ detail: "Expected a WebSocket upgrade" }, 400);
  }
  const refusal = checkAccess(ctx, req, peerAddr, { tokenInQuery: true });
  const id = c.req.param("id") ?? "";
  const { socket, response } = Deno.upgradeWebSocket(req);
  let peer: SocketPeer | null = null;
  let chain: Promise<void> = Promise.resolve();
  let release: () => void = () => {};
  const attached = new Promise<void>((res) => (release = res));

  socket.onopen = async () => {
    if (refusal) {
      const close = CLOSE_CODES[refusal.kind];
      socket.close(close.code, close.reason);
      return;
    }
    const session = SessionIdSchema.safeParse(id).success ? await ctx.registry.find(id) : null;
    if (!session) {
      socket.close(CLOSE_CODES.missing.code, CLOSE_CODES.missing.reason);
      return;
    }
    const host = ctx.registry.host(session);
    try {
      peer = await host.attach(socket);
    } catch (err) {
      log("WARNING", "web", `attaching a socket to ${id} failed: ${(err as Error).message}`);
      socket.close(1011, "Attach failed");
      return;
    } finally {
      release();
    }
    if (peer.closed) host.detach(peer);
  };
  socket.onmessage = (e) => {
    if (refusal) return;
    const data = e.data;
    if (typeof data !== "string") {
      socket.close(1003, "Text frames only");
      return;
    }
    if (data.length > MAX_CLIENT_FRAME_CHARS) {
      socket.close(1009, "Frame too large");
      return;
    }
    // one socket's frames reach the session in the order they came
    chain = chain.then(async () => {
      await attached;
      const p = peer;
      if (!p || p.closed) return;
      const host = ctx.registry.existingHost(id);
      if (!host) return;
      try {
        await host.handleFrame(p, data);
      } catch (err) {
        log("WARNING", "web", `frame handling failed: ${(err as Error).message}`);
      }
    });
  };
  socket.onclose = () => {
    const p = peer;
    if (p) {
      p.close();
      ctx.registry.existingHost(id)?.detach(p);
    }
  };
  socket.onerror = () => {};
  return response;
}
