/**
 * `kimi acp`: the Agent Client Protocol server (reference §12) for Zed, JetBrains and every
 * ACP editor, over newline-delimited JSON-RPC on stdin/stdout. Many sessions per connection;
 * each is a kimi session in the client's `cwd`, with the client's MCP servers added to the
 * user's, and the client's files and terminal used when it offers them.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import * as z from "zod";
import type { Config } from "../../config/schema.ts";
import { BackgroundTaskManager } from "../../background/task_manager.ts";
import { backgroundSettings } from "../../background/settings.ts";
import { warnOnce } from "../../sandbox/setup.ts";
import { runSessionEnd, runSessionStart } from "../../hooks/session_hooks.ts";
import { log, withLogSession } from "../../log.ts";
import type { McpServerConfig, McpServers } from "../../mcp/config.ts";
import { canonicalWorkDir, loadMetadata } from "../../session/metadata.ts";
import { Session } from "../../session/session.ts";
import { SessionLock, SessionLockedError } from "../../session/lock.ts";
import { KimiApp, type KimiAppOptions } from "../../app/kimi_app.ts";
import { VERSION } from "../../version.ts";
import { type AcpLogin, NO_LOGIN, noModelError } from "./auth.ts";
import { clientFileBackend, clientTerminalBackend } from "./client_backends.ts";
import { AcpSession } from "./session.ts";
import { isModeId, MODE_OPTION, MODEL_OPTION, parseModelId } from "./session_config.ts";

/** The agent's name in `initialize`. */
export const AGENT_NAME = "Kimi Code CLI";

/** What every session's agent is built with (the command line's choices). */
export type SessionDefaults = Pick<
  KimiAppOptions,
  | "modelAlias"
  | "thinking"
  | "yolo"
  | "agent"
  | "maxStepsPerTurn"
  | "maxRetriesPerStep"
  | "skillsDirs"
  | "maxRalphIterations"
  | "getEnv"
  | "plan"
  | "controlPaths"
>;

/** Options of {@link AcpServer}. */
export interface AcpServerOptions {
  /** The share dir. */
  shareDir: string;
  /** Loaded configuration. */
  config: Config;
  /** The user's config file: model switches and saved approval rules (null: `--config` text). */
  configPath: string | null;
  /** The user's MCP servers (the client's are added per session). */
  mcpServers: McpServers;
  /** Agent settings from the command line. */
  defaults: SessionDefaults;
  /** The login flow, when one exists (default: none, API-key configs need no auth). */
  login?: AcpLogin;
}

/** The legacy `session/set_model` params (older clients). */
const SetModelParamsSchema = z.object({ sessionId: z.string(), modelId: z.string() });

/** ACP MCP servers as kimi's MCP configuration. */
export function clientMcpServers(servers: readonly acp.McpServer[]): McpServers {
  const out: McpServers = {};
  for (const s of servers) {
    let cfg: McpServerConfig;
    if ("type" in s && (s.type === "http" || s.type === "sse")) {
      cfg = {
        url: s.url,
        transport: s.type,
        headers: Object.fromEntries(s.headers.map((h) => [h.name, h.value])),
      };
    } else {
      const stdio = s as acp.McpServerStdio;
      cfg = {
        command: stdio.command,
        args: stdio.args,
        env: Object.fromEntries(stdio.env.map((e) => [e.name, e.value])),
      };
    }
    out[s.name] = cfg;
  }
  return out;
}

/** Check a client `cwd`: an absolute path of an existing directory. */
async function checkCwd(cwd: string): Promise<void> {
  if (!cwd.startsWith("/")) {
    throw acp.RequestError.invalidParams({ cwd }, `cwd must be an absolute path, got "${cwd}"`);
  }
  let isDir = false;
  try {
    isDir = (await Deno.stat(cwd)).isDirectory;
  } catch {
    // reported below
  }
  if (!isDir) {
    throw acp.RequestError.invalidParams({ cwd }, `cwd "${cwd}" is not an existing directory`);
  }
}

/** The ACP agent: sessions and the handlers of every method. */
export class AcpServer {
  readonly #opts: AcpServerOptions;
  readonly #login: AcpLogin;
  /** The configuration new sessions get (replaced when a login rewrites it). */
  #config: Config;
  readonly #sessions = new Map<string, AcpSession>();
  /** Locks of the open sessions, by session id. */
  readonly #locks = new Map<string, SessionLock>();
  /** The "shell commands are not confined" warning, printed once for all sessions. */
  readonly #warnShell = warnOnce();
  #clientCaps: acp.ClientCapabilities | undefined;

  /** Create a server. */
  constructor(opts: AcpServerOptions) {
    this.#opts = opts;
    this.#login = opts.login ?? NO_LOGIN;
    this.#config = opts.config;
  }

  /** The agent app with every handler registered. */
  app(): acp.AgentApp {
    return acp.agent({ name: "kimi" })
      .onRequest(acp.methods.agent.initialize, ({ params }) => this.#initialize(params))
      .onRequest(acp.methods.agent.authenticate, async ({ params }) => {
        const config = await this.#login.authenticate(params.methodId);
        if (config) this.#config = config;
        return {};
      })
      .onRequest(
        acp.methods.agent.session.new,
        ({ params, client }) => this.#newSession(params, client),
      )
      .onRequest(
        acp.methods.agent.session.load,
        ({ params, client }) => this.#loadSession(params, client, true),
      )
      .onRequest(
        acp.methods.agent.session.resume,
        ({ params, client }) => this.#loadSession(params, client, false),
      )
      .onRequest(acp.methods.agent.session.list, ({ params }) => this.#list(params))
      .onRequest(acp.methods.agent.session.close, async ({ params }) => {
        const s = this.#session(params.sessionId);
        this.#sessions.delete(s.id);
        await this.#closeSession(s);
        return {};
      })
      .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
        const s = this.#session(params.sessionId);
        if (!isModeId(params.modeId)) {
          throw acp.RequestError.invalidParams(
            { modeId: params.modeId },
            `unknown mode "${params.modeId}" (modes: default, plan, yolo)`,
          );
        }
        await s.setMode(params.modeId);
        return {};
      })
      .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
        const s = this.#session(params.sessionId);
        const value = params.value;
        if (params.configId === MODE_OPTION && typeof value === "string" && isModeId(value)) {
          await s.setMode(value);
        } else if (params.configId === MODEL_OPTION && typeof value === "string") {
          await s.setModel(this.#model(s, value));
        } else {
          throw acp.RequestError.invalidParams(
            { configId: params.configId, value },
            `unknown config option or value: ${params.configId} = ${JSON.stringify(value)}`,
          );
        }
        return { configOptions: s.configOptions() };
      })
      .onRequest("session/set_model", SetModelParamsSchema, async ({ params }) => {
        const s = this.#session(params.sessionId);
        await s.setModel(this.#model(s, params.modelId));
        return {};
      })
      .onRequest(acp.methods.agent.session.prompt, async ({ params }) => {
        const s = this.#session(params.sessionId);
        return { stopReason: await withLogSession(s.id, () => s.prompt(params.prompt)) };
      })
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
        const s = this.#sessions.get(params.sessionId);
        if (!s) log("WARNING", "acp", `session/cancel for unknown session ${params.sessionId}`);
        else if (!s.cancel()) log("INFO", "acp", `session/cancel with no prompt running`);
      });
  }

  #initialize(params: acp.InitializeRequest): acp.InitializeResponse {
    this.#clientCaps = params.clientCapabilities;
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      authMethods: this.#login.methods(params.clientCapabilities),
      agentInfo: { name: AGENT_NAME, title: "Kimi Code", version: VERSION },
    };
  }

  #session(id: string): AcpSession {
    const s = this.#sessions.get(id);
    if (!s) throw acp.RequestError.sessionNotFound(id);
    return s;
  }

  #model(s: AcpSession, id: string) {
    const choice = parseModelId(id, s.app.config);
    if (!choice) {
      throw acp.RequestError.invalidParams({ modelId: id }, `unknown model "${id}"`);
    }
    return choice;
  }

  /**
   * Open a session for writing: take its lock (refused, naming the holder, while another
   * process works in it), then build its agent. The lock is let go when the session closes.
   */
  async #open(
    session: Session,
    client: acp.AgentContext,
    opts: { mcpServers: readonly acp.McpServer[]; resumed: boolean },
  ): Promise<AcpSession> {
    let lock: SessionLock;
    try {
      lock = await SessionLock.acquire(session.dir, { sessionId: session.id });
    } catch (err) {
      if (err instanceof SessionLockedError) {
        throw new acp.RequestError(-32603, err.message, {
          pid: err.holder.pid,
          since: err.holder.since,
        });
      }
      throw err;
    }
    try {
      const s = await withLogSession(session.id, () => this.#build(session, client, opts));
      this.#locks.set(session.id, lock);
      return s;
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  /** Build the agent of a session, with the client's files/terminal and MCP servers. */
  async #build(
    session: Session,
    client: acp.AgentContext,
    opts: { mcpServers: readonly acp.McpServer[]; resumed: boolean },
  ): Promise<AcpSession> {
    const { defaults } = this.#opts;
    const config = this.#config;
    const files = clientFileBackend(client, session.id, this.#clientCaps);
    let self: AcpSession | null = null;
    const terminal = this.#clientCaps?.terminal === true
      ? clientTerminalBackend({
        client,
        sessionId: session.id,
        onTerminal: (toolCallId, terminalId) =>
          self?.showTerminal(toolCallId, terminalId) ?? Promise.resolve(),
      })
      : undefined;
    const mcpServers = { ...this.#opts.mcpServers, ...clientMcpServers(opts.mcpServers) };
    // The session's background tasks outlive a rebuild of its app (a model switch).
    const tasks = new BackgroundTaskManager(session.dir, backgroundSettings(config.background));
    const s = await AcpSession.open({
      client,
      session,
      configPath: this.#opts.configPath,
      modelAlias: defaults.modelAlias,
      thinking: defaults.thinking,
      resumed: opts.resumed,
      isAuthError: this.#login.isAuthError?.bind(this.#login),
      createApp: async (sess, o) => {
        const app = await KimiApp.create({
          ...defaults,
          config,
          session: sess,
          modelAlias: o.modelAlias,
          thinking: o.thinking,
          yolo: o.applyFlags && defaults.yolo,
          plan: o.applyFlags && defaults.plan,
          afk: false,
          runtimeAfk: false,
          resumed: o.resumed,
          mcpServers,
          reportMcp: (line) => console.error(line),
          configFile: this.#opts.configPath,
          reportRules: (line) => console.error(line),
          reportPlugins: (line) => console.error(line),
          writeStdout: (line) => console.error(line),
          files: files ?? undefined,
          terminal,
          tasks,
          warnShell: this.#warnShell,
        });
        return app;
      },
    });
    self = s;
    if (!s.app.llm) {
      await s.close();
      throw noModelError();
    }
    await runSessionStart(s.app.hooks, session.wireFile).catch(() => {});
    return s;
  }

  async #newSession(
    params: acp.NewSessionRequest,
    client: acp.AgentContext,
  ): Promise<acp.NewSessionResponse> {
    await checkCwd(params.cwd);
    const session = await Session.create({ shareDir: this.#opts.shareDir, workDir: params.cwd });
    let s: AcpSession;
    try {
      s = await this.#open(session, client, { mcpServers: params.mcpServers, resumed: false });
    } catch (err) {
      await session.delete().catch(() => {});
      throw err;
    }
    this.#sessions.set(s.id, s);
    setTimeout(() => void s.announceCommands(), 0); // after the response names the session
    return { sessionId: s.id, modes: s.modes(), configOptions: s.configOptions() };
  }

  async #loadSession(
    params: acp.LoadSessionRequest | acp.ResumeSessionRequest,
    client: acp.AgentContext,
    replay: boolean,
  ): Promise<acp.LoadSessionResponse> {
    await checkCwd(params.cwd);
    let s = this.#sessions.get(params.sessionId);
    if (s && s.app.session.workDir !== canonicalWorkDir(params.cwd)) {
      throw acp.RequestError.sessionNotFound(params.sessionId); // not a session of this cwd
    }
    if (!s) {
      const session = await Session.find({
        shareDir: this.#opts.shareDir,
        workDir: params.cwd,
        id: params.sessionId,
      });
      if (!session) throw acp.RequestError.sessionNotFound(params.sessionId);
      s = await this.#open(session, client, {
        mcpServers: params.mcpServers ?? [],
        resumed: true,
      });
      this.#sessions.set(s.id, s);
    }
    if (replay) await s.replay();
    const opened = s;
    setTimeout(() => void opened.announceCommands(), 0);
    return { modes: s.modes(), configOptions: s.configOptions() };
  }

  async #list(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const shareDir = this.#opts.shareDir;
    let workDirs: string[];
    if (params.cwd) workDirs = [params.cwd];
    else {
      const meta = await loadMetadata(shareDir);
      workDirs = meta.work_dirs.map((w) => w.path);
    }
    const found: { info: acp.SessionInfo; updated: number }[] = [];
    for (const workDir of workDirs) {
      for (const session of await Session.list({ shareDir, workDir })) {
        const updated = await session.updatedAt();
        found.push({
          updated,
          info: {
            sessionId: session.id,
            cwd: session.workDir,
            title: await session.title(),
            updatedAt: updated ? new Date(updated).toISOString() : null,
          },
        });
      }
    }
    found.sort((a, b) => b.updated - a.updated);
    return { sessions: found.map((f) => f.info) };
  }

  async #closeSession(s: AcpSession): Promise<void> {
    await s.close();
    await runSessionEnd(s.app.hooks).catch(() => {});
    const session = s.app.session;
    if (!s.app.config.background.keep_alive_on_exit) {
      await s.app.tasks.stopAll("ACP session closed").catch(() => {});
    }
    if (await session.isEmpty()) await session.delete().catch(() => {});
    const lock = this.#locks.get(session.id);
    this.#locks.delete(session.id);
    await lock?.release();
  }

  /** Close every session (connection closed or the process is stopping). */
  async shutdown(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(all.map((s) => this.#closeSession(s)));
  }
}

/** Options of {@link runAcp}. */
export interface RunAcpOptions extends AcpServerOptions {
  /** Input (default: stdin). */
  stdin?: ReadableStream<Uint8Array>;
  /** Output (default: stdout). */
  stdout?: WritableStream<Uint8Array>;
}

/** Serve ACP until stdin closes or SIGTERM/SIGINT; resolves with the exit code (0). */
export async function runAcp(opts: RunAcpOptions): Promise<number> {
  const server = new AcpServer(opts);
  const conn = server.app().connect(
    acp.ndJsonStream(opts.stdout ?? Deno.stdout.writable, opts.stdin ?? Deno.stdin.readable),
  );
  const onSignal = () => conn.close();
  const signals: Deno.Signal[] = ["SIGTERM", "SIGINT"];
  for (const sig of signals) {
    try {
      Deno.addSignalListener(sig, onSignal);
    } catch {
      // not supported here
    }
  }
  try {
    await conn.closed.catch((err) => {
      log("WARNING", "acp", `connection closed with an error: ${(err as Error)?.message ?? err}`);
    });
  } finally {
    for (const sig of signals) {
      try {
        Deno.removeSignalListener(sig, onSignal);
      } catch {
        // ignore
      }
    }
    await server.shutdown();
  }
  return 0;
}
