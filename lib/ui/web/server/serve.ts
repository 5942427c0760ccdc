/**
 * Running `kimi web`: the bind address and port (ten ports tried from the first), the token,
 * the security mode (local, LAN, public; reference §A2 with the token always on), the banner,
 * the browser, and a clean stop on Ctrl-C / SIGTERM (every running turn cancelled, every
 * session's records closed).
 *
 * @module
 */
import type { KimiApp } from "../../../app/kimi_app.ts";
import type { BackgroundTaskManager } from "../../../background/task_manager.ts";
import type { Config } from "../../../config/schema.ts";
import type { LLM } from "../../../llm/provider.ts";
import { log } from "../../../log.ts";
import type { Session } from "../../../session/session.ts";
import type { ControlPath } from "../../../tooling/control_paths.ts";
import type { PermissionScope } from "../../../tooling/scope.ts";
import { AuthFailures, isLanAddress, isLoopbackHost, parseAllowedOrigins } from "./access_guard.ts";
import { createWebApp, type PageAssetsLoader } from "./app.ts";
import { SessionRegistry } from "./session_registry.ts";
import { TokenStore } from "./token_store.ts";
import type { WebContext, WebSecurity } from "./web_context.ts";

/** Ports tried: the first and the nine after it. */
export const PORT_ATTEMPTS = 10;
/** The reference's default port. */
export const DEFAULT_PORT = 5494;
/** What must be typed to run without a token on a public host. */
export const OMIT_AUTH_CONFIRMATION = "I UNDERSTAND THE RISKS";

/** The command line of `kimi web`. */
export interface WebServeOptions {
  /** `--host`. */
  host?: string;
  /** `--network`. */
  network: boolean;
  /** `--port` (0: any free port). */
  port: number;
  /** `--open / --no-open`. */
  open: boolean;
  /** `--auth-token`. */
  authToken?: string;
  /** `--allowed-origins`. */
  allowedOrigins?: string;
  /** `--dangerously-omit-auth`. */
  omitAuth: boolean;
  /** `--restrict-sensitive-apis / --no-…` (undefined: on in public mode). */
  restrictSensitiveApis?: boolean;
  /** `--lan-only` (true) / `--public` (false). */
  lanOnly: boolean;
  /** The session the browser opens (`/web` in the shell; null or "": the page's start). */
  openSession?: string | null;
}

/** What the server runs sessions with. */
export interface WebRuntime {
  /** The share dir. */
  shareDir: string;
  /** The configuration and its file. */
  config: Config;
  /** The config file (null: `--config` text). */
  configPath: string | null;
  /**
   * Build the agent of a session with the current config (`tasks`: the session's background
   * tasks from an earlier build, kept across a restart).
   */
  buildApp(
    session: Session,
    opts: { resumed: boolean; config: Config; tasks: BackgroundTaskManager | null },
  ): Promise<KimiApp>;
  /** Tidy up a stopped agent (`final`: the session is closed, its tasks stop too). */
  closeApp(app: KimiApp, opts: { final: boolean }): Promise<void>;
  /** The default model of `config`, for titles (null when none is usable). */
  createModel(config: Config, session: Session): Promise<LLM | null>;
  /** The process's permission scope. */
  scope: PermissionScope;
  /** kimi's control paths: file routes never serve them. */
  controls: readonly ControlPath[];
  /** The user's home. */
  home: string | null;
  /** The page's assets. */
  page: PageAssetsLoader;
  /** The page's Content-Security-Policy. */
  pageCsp?: string;
  /** Prints a line of the banner (stdout). */
  print(line: string): void;
  /** Reads the typed confirmation (null: stdin is not a terminal). */
  confirm(prompt: string): Promise<string | null>;
  /** Opens a URL in the browser. */
  openBrowser(url: string): Promise<void>;
  /** Resolves when the server should stop (signals). */
  stopped: Promise<void>;
}

/** A start-up problem the user can fix (printed, exit 1). */
export class WebStartError extends Error {}

/** The IPv4 addresses of this machine (for the banner and public-mode origins). */
function localIPv4s(privateOnly: boolean): string[] {
  try {
    return Deno.networkInterfaces()
      .filter((i) => i.family === "IPv4" && !i.address.startsWith("127."))
      .map((i) => i.address)
      .filter((a) => !privateOnly || isLanAddress(a));
  } catch {
    return [];
  }
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** Bind the first free port of `port … port+9` (any port for 0). */
function bind(
  host: string,
  port: number,
  handler: Deno.ServeHandler<Deno.NetAddr>,
  signal: AbortSignal,
  print: (line: string) => void,
): Deno.HttpServer<Deno.NetAddr> {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new WebStartError(`Invalid port ${port}: use 1-65535 (or 0 for any free port).`);
  }
  const attempts = port === 0 ? 1 : PORT_ATTEMPTS;
  for (let i = 0; i < attempts; i++) {
    const p = port + i;
    if (p > 65535) break;
    try {
      const server = Deno.serve({ hostname: host, port: p, signal, onListen: () => {} }, handler);
      if (i > 0) print(`Port ${port} is in use, using port ${p} instead`);
      return server;
    } catch (err) {
      if (err instanceof Deno.errors.AddrInUse) continue;
      if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
        throw new WebStartError(
          `Cannot listen on ${host}:${p}: ${(err as Error).message}. Run kimi with ` +
            `--allow-net=${urlHost(host)}:${p} (or a profile that allows it).`,
        );
      }
      throw new WebStartError(`Cannot listen on ${host}:${p}: ${(err as Error).message}`);
    }
  }
  const last = Math.min(port + PORT_ATTEMPTS - 1, 65535);
  throw new WebStartError(`Cannot find available port in range ${port}-${last}`);
}

/** Serve until stopped; resolves with the exit code. */
export async function serveWeb(opts: WebServeOptions, rt: WebRuntime): Promise<number> {
  const host = opts.host ?? (opts.network ? "0.0.0.0" : "127.0.0.1");
  const loopback = isLoopbackHost(host);
  const publicMode = !loopback && !opts.lanOnly;
  if (opts.omitAuth && !loopback) {
    rt.print(
      [
        "┌──────────────────────────────────────────────────────────────┐",
        "│ SECURITY WARNING                                             │",
        "│ Authentication is DISABLED while running on a public host.   │",
        "│ Anyone who can reach this port can run commands as you.      │",
        "└──────────────────────────────────────────────────────────────┘",
      ].join("\n"),
    );
    const answer = await rt.confirm(`Type '${OMIT_AUTH_CONFIRMATION}' to continue: `);
    if (answer === null) {
      throw new WebStartError("Refusing to start without auth in non-interactive mode.");
    }
    if (answer.trim() !== OMIT_AUTH_CONFIRMATION) throw new WebStartError("Aborted by user.");
  }
  const tokens = opts.omitAuth ? null : await TokenStore.open(rt.shareDir, opts.authToken);
  let allowedOrigins = parseAllowedOrigins(opts.allowedOrigins);
  let currentConfig = rt.config;
  const registry = new SessionRegistry({
    shareDir: rt.shareDir,
    buildApp: (s, o) => rt.buildApp(s, { ...o, config: currentConfig }),
    closeApp: rt.closeApp,
  });
  const security: WebSecurity = {
    host,
    loopback,
    lanOnly: opts.lanOnly,
    enforceOrigin: publicMode,
    allowedOrigins,
    restricted: opts.restrictSensitiveApis ?? publicMode,
    maxPublicDepth: 6,
  };
  const ctx: WebContext = {
    security,
    tokens,
    failures: new AuthFailures(),
    registry,
    shareDir: rt.shareDir,
    controls: rt.controls,
    startupDir: Deno.cwd(),
    home: rt.home,
    scope: rt.scope,
    titleModel: async (session) =>
      registry.existingHost(session.id)?.app?.llm ?? await rt.createModel(currentConfig, session),
    config: {
      current: () => currentConfig,
      set: (c) => (currentConfig = c),
      path: rt.configPath,
    },
  };
  const app = createWebApp(ctx, rt.page, rt.pageCsp);
  const abort = new AbortController();
  const server = bind(
    host,
    opts.port,
    (req, info) => app.fetch(req, { remoteAddr: info.remoteAddr }),
    abort.signal,
    rt.print,
  );
  const port = server.addr.port;
  if (publicMode && allowedOrigins.length === 0) {
    const hosts = host === "0.0.0.0" ? localIPv4s(false) : [urlHost(host)];
    allowedOrigins = [
      `http://localhost:${port}`,
      `http://127.0.0.1:${port}`,
      ...hosts.map((h) => `http://${h}:${port}`),
    ];
    security.allowedOrigins = allowedOrigins;
  }
  const token = tokens?.current() ?? null;
  const fragment = token ? `/#token=${encodeURIComponent(token)}` : "/";
  const browserHost = host === "0.0.0.0" || host === "::" ? "localhost" : urlHost(host);
  const lines = ["", "  kimi web (Technical Preview)", ""];
  if (host === "0.0.0.0" || host === "::") {
    lines.push(`  ➜  Local    http://localhost:${port}${fragment}`);
    for (const ip of localIPv4s(opts.lanOnly)) {
      lines.push(`  ➜  Network  http://${ip}:${port}${fragment}`);
    }
  } else {
    lines.push(
      `  ➜  ${loopback ? "Local  " : "Network"}  http://${browserHost}:${port}${fragment}`,
    );
  }
  lines.push("");
  if (token) lines.push(`  Token:   ${token}`, "           (kimi web rotate-token replaces it)");
  else lines.push("  ⚠ AUTH DISABLED - Anyone who can reach this port can use it");
  if (security.restricted) lines.push("  ⚠ Sensitive APIs are restricted");
  if (publicMode) lines.push(`  Public mode: Origin must be one of ${allowedOrigins.join(", ")}`);
  else if (!loopback) lines.push("  LAN mode: only private, loopback and link-local peers");
  lines.push("  API:     /openapi.json", "  Stop:    Ctrl+C", "");
  rt.print(lines.join("\n"));
  log(
    "INFO",
    "web",
    `serving on ${host}:${port} (${publicMode ? "public" : loopback ? "local" : "LAN"})`,
  );
  const sessionQuery = opts.openSession ? `?session=${encodeURIComponent(opts.openSession)}` : "";
  const openUrl = `http://${browserHost}:${port}/${sessionQuery}${fragment.slice(1)}`;
  if (opts.openSession) rt.print(`  Opening session ${opts.openSession}: ${openUrl}\n`);
  if (opts.open) {
    rt.openBrowser(openUrl).catch((err) =>
      log("WARNING", "web", `could not open the browser: ${(err as Error).message}`)
    );
  }
  await rt.stopped;
  rt.print("Stopping: cancelling running turns and closing sessions…");
  let shutdownTimer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    registry.shutdown(),
    new Promise((r) => (shutdownTimer = setTimeout(r, 10_000))),
  ]);
  clearTimeout(shutdownTimer);
  abort.abort();
  // open connections get 3 s to finish (the process exits after that anyway)
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    server.finished.catch(() => {}),
    new Promise((r) => (timer = setTimeout(r, 3000))),
  ]);
  clearTimeout(timer);
  return 0;
}
