/**
 * `kimi web`: load the configuration and MCP servers of the command line, then run the web
 * server (`lib/ui/web/server/serve.ts`) with sessions built by the composition root the way
 * `kimi acp` builds them.
 *
 * @module
 */
import { BackgroundTaskManager } from "../background/task_manager.ts";
import { backgroundSettings } from "../background/settings.ts";
import { ensureShareDir, readProcessEnv as safeGetEnv } from "../config/share_dir.ts";
import { runSessionEnd, runSessionStart } from "../hooks/session_hooks.ts";
import { log } from "../log.ts";
import { KimiApp } from "../app/kimi_app.ts";
import { resolveModel } from "../config/model_resolution.ts";
import { createLLM } from "../llm/create.ts";
import { ControlPathSet } from "../tooling/control_paths.ts";
import { warnOnce } from "../sandbox/setup.ts";
import { cliControlPaths } from "./cli_control_paths.ts";
import { DenoPermissionScope } from "../tooling/scope.ts";
import { homeDir } from "../tooling/workspace.ts";
import { serveWeb, WebStartError } from "../ui/web/server/serve.ts";
import { rotateToken, tokenPath } from "../ui/web/server/token_store.ts";
import { PAGE_CSP, pageAssets } from "../ui/web/page_assets.ts";
import { serverSetup } from "./server_setup.ts";
import { type CliOptions, UsageError } from "./options.ts";

/** The options of `kimi web` as commander parses them. */
export interface WebFlags {
  /** `--host`. */
  host?: string;
  /** `--network`. */
  network?: boolean;
  /** `--port`. */
  port?: string;
  /** `--open` / `--no-open`. */
  open?: boolean;
  /** `--reload`. */
  reload?: boolean;
  /** `--auth-token`. */
  authToken?: string;
  /** `--allowed-origins`. */
  allowedOrigins?: string;
  /** `--dangerously-omit-auth`. */
  dangerouslyOmitAuth?: boolean;
  /** `--restrict-sensitive-apis` / `--no-restrict-sensitive-apis`. */
  restrictSensitiveApis?: boolean;
  /** `--lan-only` (true) / `--public` (false). */
  lanOnly?: boolean;
  /** `--public`. */
  public?: boolean;
}

/** The port of `--port` (integer 0–65535), else a usage error. */
export function parsePort(text: string | undefined): number {
  const port = Number(text ?? "5494");
  if (!/^\d+$/.test(text ?? "5494") || port > 65535) {
    throw new UsageError(`Invalid value for '--port' / '-p': '${text}' is not a port (0-65535).`);
  }
  return port;
}

/** Root flags that make no sense for the server (sessions come from the browser). */
function refuseSessionFlags(opts: CliOptions): void {
  const bad: string[] = [];
  if (opts.ui !== "shell") bad.push(`--${opts.ui}`);
  if (opts.session !== undefined) bad.push("--session");
  if (opts.continue) bad.push("--continue");
  if (opts.prompt !== undefined) bad.push("--prompt");
  if (bad.length > 0) throw new UsageError(`Cannot combine web, ${bad.join(", ")}.`);
}

async function openBrowser(url: string): Promise<void> {
  const cmd = Deno.build.os === "darwin"
    ? ["open", url]
    : Deno.build.os === "windows"
    ? ["cmd", "/c", "start", "", url]
    : ["xdg-open", url];
  await new Deno.Command(cmd[0], { args: cmd.slice(1), stdout: "null", stderr: "null" }).output();
}

async function readConfirmation(prompt: string): Promise<string | null> {
  if (!Deno.stdin.isTerminal()) return null;
  await Deno.stdout.write(new TextEncoder().encode(prompt));
  const buf = new Uint8Array(1024);
  const n = await Deno.stdin.read(buf);
  return n === null ? "" : new TextDecoder().decode(buf.subarray(0, n));
}

function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    for (const sig of ["SIGINT", "SIGTERM"] as Deno.Signal[]) {
      try {
        Deno.addSignalListener(sig, () => resolve());
      } catch {
        // not supported here
      }
    }
  });
}

/** Run `kimi web`; resolves with the exit code. */
export async function runWebCommand(
  opts: CliOptions,
  raw: Record<string, unknown>,
  openSession: string | null = null,
): Promise<number> {
  const flags = raw as WebFlags;
  if (openSession === null) refuseSessionFlags(opts);
  if (flags.reload) {
    throw new UsageError(
      "--reload is not supported: kimi web runs its sessions in this process; restart it to " +
        "load changed code.",
    );
  }
  const port = parsePort(flags.port);
  const setup = await serverSetup(opts);
  if (typeof setup === "number") return setup;
  const { shareDir, config, configPath, mcpServers } = setup;
  const scope = new DenoPermissionScope();
  // the config file in use, the MCP config files and kimi's cache: control paths of every
  // session, and never served by the file routes
  const cli = cliControlPaths(opts);
  const controls = new ControlPathSet(shareDir, { cli }).list();
  // "shell commands are not confined" is said once for all sessions
  const warnShell = warnOnce((line) => log("WARNING", "web", line));
  try {
    return await serveWeb({
      host: flags.host,
      network: Boolean(flags.network),
      port,
      open: flags.open !== false,
      authToken: flags.authToken,
      allowedOrigins: flags.allowedOrigins,
      omitAuth: Boolean(flags.dangerouslyOmitAuth),
      restrictSensitiveApis: flags.restrictSensitiveApis,
      lanOnly: !flags.public,
      openSession,
    }, {
      shareDir,
      config,
      configPath,
      scope,
      controls,
      home: homeDir(),
      page: pageAssets,
      pageCsp: PAGE_CSP,
      print: (line) => console.log(line),
      confirm: readConfirmation,
      openBrowser,
      stopped: stopSignal(),
      buildApp: async (session, o) => {
        const app = await KimiApp.create({
          config: o.config,
          session,
          modelAlias: opts.model,
          thinking: opts.thinking,
          yolo: opts.yolo,
          plan: opts.plan,
          afk: false,
          runtimeAfk: false,
          resumed: o.resumed,
          agent: opts.agentFile ? { file: opts.agentFile } : { builtin: opts.agent ?? "default" },
          maxStepsPerTurn: opts.maxStepsPerTurn,
          maxRetriesPerStep: opts.maxRetriesPerStep,
          skillsDirs: opts.skillsDirs,
          maxRalphIterations: opts.maxRalphIterations,
          getEnv: safeGetEnv,
          mcpServers,
          configFile: configPath,
          controlPaths: { cli },
          tasks: o.tasks ??
            new BackgroundTaskManager(session.dir, backgroundSettings(o.config.background)),
          warnShell,
          reportMcp: (line) => log("WARNING", "web", line),
          reportRules: (line) => log("WARNING", "web", line),
          writeStdout: (line) => log("INFO", "web", line),
        });
        await runSessionStart(app.hooks, session.wireFile).catch(() => {});
        return app;
      },
      createModel: async (config, session) => {
        try {
          return await createLLM(
            resolveModel(config, { modelAlias: opts.model, getEnv: safeGetEnv }),
            {
              thinking: false,
              sessionId: session.id,
              getEnv: safeGetEnv,
              streamLimits: config.model_stream,
              shareDir,
            },
          );
        } catch (err) {
          log("WARNING", "web", `no model for titles: ${(err as Error).message}`);
          return null;
        }
      },
      closeApp: async (app, { final }) => {
        await runSessionEnd(app.hooks).catch(() => {});
        app.closeNotifications();
        await app.mcp?.close().catch(() => {});
        if (final && !app.config.background.keep_alive_on_exit) {
          await app.tasks.stopAll("kimi web closed the session").catch(() => {});
        }
      },
    });
  } catch (err) {
    if (err instanceof WebStartError) {
      console.error(`Error: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

/**
 * `/web` in the shell: the shell has ended; start `kimi web` with its defaults and open
 * `sessionId` (null: the page's start) in the browser.
 */
export function runWebFromShell(opts: CliOptions, sessionId: string | null): Promise<number> {
  const cleaned: CliOptions = {
    ...opts,
    session: undefined,
    continue: false,
    prompt: undefined,
    ui: "shell",
  };
  return runWebCommand(cleaned, { open: true }, sessionId ?? "");
}

/** `kimi web rotate-token`: write a new token; a running server accepts only it from now on. */
export async function rotateTokenCommand(): Promise<number> {
  const shareDir = await ensureShareDir(safeGetEnv);
  const token = await rotateToken(shareDir);
  console.log(`New token written to ${tokenPath(shareDir)} (mode 0600).`);
  console.log(`Token:   ${token}`);
  console.log("A running kimi web server accepts only this token from now on.");
  return 0;
}
