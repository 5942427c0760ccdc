/**
 * `kimi vis [session]`: the tracing viewer's own server — the page (read-only mode at `/vis`)
 * and the `/api/vis` routes over the share dir. Loopback by default (`--network` binds every
 * interface); unlike the reference it always requires `kimi web`'s token (the same 0600 file),
 * since any local process, agent Shell commands included, can reach a loopback port and the
 * records hold whole conversations. Port 5495 by default, with the next nine as fallback.
 *
 * @module
 */
import { Hono } from "hono";
import { pageAssets } from "../web/page_assets.ts";
import {
  AuthFailures,
  hostAllowed,
  isLoopbackHost,
  requestToken,
} from "../web/server/access_guard.ts";
import { tokensEqual, TokenStore } from "../web/server/token_store.ts";
import { mountVisRoutes } from "./vis_routes.ts";
import { findSessions } from "./vis_store.ts";

/** Default port of `kimi vis` (reference). */
export const VIS_DEFAULT_PORT = 5495;
/** How many ports after the first are tried when it is taken. */
export const VIS_PORT_FALLBACKS = 9;

/** Options of {@link startVisServer}. */
export interface VisServerOptions {
  /** Share dir (sessions and the token file). */
  shareDir: string;
  /** Bind host (default 127.0.0.1). */
  host: string;
  /** First port to try. */
  port: number;
  /** A fixed token instead of the persisted one. */
  authToken?: string;
  /** Session to open (`<id>`, looked up among the recorded sessions). */
  sessionId?: string;
}

/** A running vis server. */
export interface VisServer {
  /** The bound port. */
  port: number;
  /** URL to open (with the token in the fragment). */
  url: string;
  /** Stop serving. */
  shutdown(): Promise<void>;
  /** Resolves when the server stopped. */
  finished: Promise<void>;
}

type Env = { Bindings: { remoteAddr?: Deno.NetAddr } };

function detail(status: number, message: string): Response {
  return new Response(JSON.stringify({ detail: message }), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

/** Build the vis Hono app (exported for in-process tests). */
export function createVisApp(
  opts: { shareDir: string; host: string; tokens: TokenStore },
): Hono<Env> {
  const app = new Hono<Env>();
  const failures = new AuthFailures();
  const loopback = isLoopbackHost(opts.host);
  app.use("*", async (c, next) => {
    if (loopback && !hostAllowed(c.req.header("host") ?? null, opts.host)) {
      return detail(403, "Host not allowed");
    }
    if (!c.req.path.startsWith("/api/")) return await next();
    const peer = c.env?.remoteAddr?.hostname ?? "";
    if (failures.isBanned(peer)) {
      return detail(429, "Too many failed authentication attempts; try again in a minute.");
    }
    const given = requestToken(c.req.raw, { query: c.req.method === "GET" });
    if (!given || !tokensEqual(given, opts.tokens.current())) {
      failures.fail(peer);
      return detail(401, "Auth required");
    }
    await next();
  });
  mountVisRoutes(app, { shareDir: opts.shareDir, openInSupported: false });
  app.get("/", (c) => c.redirect("/vis"));
  app.get("*", async (c) => {
    const assets = await pageAssets();
    const path = c.req.path;
    const asset = path === "/vis" || path.startsWith("/vis/")
      ? assets.get("/index.html")
      : assets.get(path);
    if (!asset) return detail(404, "Not Found");
    return new Response(asset.body as BodyInit, {
      headers: {
        "Content-Type": asset.contentType,
        "Cache-Control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
        "X-Content-Type-Options": "nosniff",
      },
    });
  });
  return app;
}

function listen(
  handler: Deno.ServeHandler,
  host: string,
  port: number,
  signal: AbortSignal,
): Deno.HttpServer<Deno.NetAddr> {
  let lastErr: unknown;
  for (let p = port; p <= port + (port === 0 ? 0 : VIS_PORT_FALLBACKS); p++) {
    try {
      return Deno.serve({ hostname: host, port: p, signal, onListen: () => {} }, handler);
    } catch (err) {
      if (!(err instanceof Deno.errors.AddrInUse)) throw err;
      lastErr = err;
    }
  }
  throw new Error(
    `Ports ${port}-${port + VIS_PORT_FALLBACKS} are all in use; pass a free one with --port. (${
      (lastErr as Error).message
    })`,
  );
}

/** Start the server. */
export async function startVisServer(opts: VisServerOptions): Promise<VisServer> {
  const tokens = await TokenStore.open(opts.shareDir, opts.authToken);
  const app = createVisApp({ shareDir: opts.shareDir, host: opts.host, tokens });
  const abort = new AbortController();
  const server = listen(
    (req, info) => app.fetch(req, { remoteAddr: info.remoteAddr as Deno.NetAddr }),
    opts.host,
    opts.port,
    abort.signal,
  );
  const port = server.addr.port;
  const shownHost = opts.host === "0.0.0.0" || opts.host === "::" ? "127.0.0.1" : opts.host;
  const hostPart = shownHost.includes(":") ? `[${shownHost}]` : shownHost;
  let path = "/vis";
  if (opts.sessionId) {
    const ref = (await findSessions(opts.shareDir)).find((r) => r.id === opts.sessionId);
    if (!ref) {
      await server.shutdown();
      throw new Error(
        `Session ${opts.sessionId} was not found under ${opts.shareDir}/sessions; run \`kimi vis\` to browse them.`,
      );
    }
    path = `/vis/sessions/${ref.hash}/${ref.id}`;
  }
  return {
    port,
    url: `http://${hostPart}:${port}${path}#token=${tokens.current()}`,
    shutdown: async () => {
      abort.abort();
      await server.finished;
    },
    finished: server.finished,
  };
}
