/**
 * The MCP client manager (reference §6.2, §7.9): one connection per configured server, all
 * connected concurrently in the background; each server's tools are added to the agent's
 * toolset as it connects. A failing server is reported with its reason and does not affect
 * the others. The agent loop waits for loading at the start of a turn ({@link McpManager.waitReady}).
 *
 * @module
 */
import { log } from "../log.ts";
import type { CommandWrapper } from "../process/command_wrapper.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import type { Tool } from "../tooling/tool.ts";
import { event, type MCPStatus, statusUpdate, type WireMessage } from "../wire/messages.ts";
import { isStdioServer, type McpServerConfig, type McpServers } from "./config.ts";
import { DEFAULT_CONNECT_TIMEOUT_MS, McpConnection } from "./connection.ts";
import { hasOAuthTokens, McpOAuthProvider } from "./oauth.ts";
import { mcpTool } from "./tool.ts";

/** Connection state of one server. */
export type McpServerState = "pending" | "connecting" | "connected" | "failed" | "unauthorized";

/** What the manager knows about one server. */
export interface McpServerInfo {
  /** Server name. */
  readonly name: string;
  /** Its configuration. */
  readonly config: McpServerConfig;
  /** Connection state. */
  status: McpServerState;
  /** Names of the tools added to the toolset. */
  tools: string[];
  /** Why it failed or is unauthorized, when it did. */
  error: string | null;
}

/** Where the manager puts the tools (the root soul's toolset). */
export interface McpToolSink {
  /** Add a tool. */
  add(tool: Tool): void;
  /** Whether a tool of this name exists already. */
  get(name: string): Tool | undefined;
}

/** Options of {@link McpManager}. */
export interface McpManagerOptions {
  /** Servers by name. */
  servers: McpServers;
  /** Where tools go. */
  toolset: McpToolSink;
  /** `mcp.client.tool_call_timeout_ms`. */
  toolCallTimeoutMs: number;
  /** `mcp.client.connect_timeout_ms`: how long a server may take to start. */
  connectTimeoutMs?: number;
  /** After how many ms a server still starting is reported as such. Default 5000. */
  startingNoticeMs?: number;
  /** Secret-free environment for stdio servers (merged under each server's `env`). */
  childEnv: () => Record<string, string>;
  /** How stdio servers are spawned, read per start (the session's process isolation). */
  spawn?: () => CommandWrapper;
  /** Working directory (client root; default cwd of stdio servers). */
  workDir: string;
  /** Share dir (`mcp-oauth/` token store). */
  shareDir: string;
  /** What this run may touch; a server outside it is reported failed with the denial. */
  scope: PermissionScope;
  /** Receives one line per failed or unauthorized server (e.g. written to stderr). */
  report?: (line: string) => void;
}

/** Runs the MCP clients of one agent. */
export class McpManager {
  readonly #opts: McpManagerOptions;
  readonly #servers = new Map<string, McpServerInfo>();
  readonly #connections = new Map<string, McpConnection>();
  #loading: Promise<void> | null = null;
  #done = false;

  /** Create the manager (call {@link start} to connect). */
  constructor(opts: McpManagerOptions) {
    this.#opts = opts;
    for (const [name, config] of Object.entries(opts.servers)) {
      this.#servers.set(name, { name, config, status: "pending", tools: [], error: null });
    }
  }

  /** Whether any server is configured. */
  get configured(): boolean {
    return this.#servers.size > 0;
  }

  /** Whether servers are still connecting. */
  get loading(): boolean {
    return this.#loading !== null && !this.#done;
  }

  /** Servers in configuration order. */
  servers(): McpServerInfo[] {
    return [...this.#servers.values()];
  }

  /** Start connecting every server in the background (idempotent). */
  start(): void {
    if (this.#loading) return;
    const all = [...this.#servers.values()].map((s) => this.#connectServer(s));
    this.#loading = Promise.all(all).then(() => {
      this.#done = true;
    });
  }

  /** The status for `StatusUpdate.mcp_status`. */
  status(): MCPStatus {
    const servers = this.servers();
    return {
      loading: this.loading,
      connected: servers.filter((s) => s.status === "connected").length,
      total: servers.length,
      tools: servers.reduce((n, s) => n + s.tools.length, 0),
      servers: servers.map((s) => ({ name: s.name, status: s.status, tools: [...s.tools] })),
    };
  }

  /**
   * Wait for loading at the start of a turn: when still loading, emit `StatusUpdate{mcp_status}`
   * and `MCPLoadingBegin`, wait, then `StatusUpdate{mcp_status}` and `MCPLoadingEnd`.
   */
  async waitReady(emit: (msg: WireMessage) => void, signal?: AbortSignal): Promise<void> {
    this.start();
    if (!this.loading) return;
    emit(statusUpdate({ mcp_status: this.status() }));
    emit(event("MCPLoadingBegin", {}));
    await abortable(this.#loading!, signal);
    emit(statusUpdate({ mcp_status: this.status() }));
    emit(event("MCPLoadingEnd", {}));
  }

  async #connectServer(info: McpServerInfo): Promise<void> {
    const { config, name } = info;
    const denial = this.#scopeDenial(config);
    if (denial) return this.#fail(info, denial);
    let authProvider: McpOAuthProvider | undefined;
    if (!isStdioServer(config) && config.auth === "oauth") {
      if (!(await hasOAuthTokens(this.#opts.shareDir, name))) {
        info.status = "unauthorized";
        info.error = "authorization required";
        this.#opts.report?.(
          `MCP server '${name}' requires authorization - run: kimi mcp auth ${name}`,
        );
        return;
      }
      authProvider = new McpOAuthProvider({ shareDir: this.#opts.shareDir, server: name });
    }
    const conn = new McpConnection({
      name,
      config,
      childEnv: this.#opts.childEnv,
      spawn: this.#opts.spawn,
      workDir: this.#opts.workDir,
      authProvider,
      connectTimeoutMs: this.#opts.connectTimeoutMs,
    });
    this.#connections.set(name, conn);
    info.status = "connecting";
    // A first start may download the server's package: say it is starting, not failing.
    const timeoutMs = this.#opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const notice = setTimeout(() => {
      if (info.status !== "connecting") return;
      this.#opts.report?.(
        `MCP server '${name}' is still starting (a first start may download its package); ` +
          `waiting up to ${Math.round(timeoutMs / 1000)} s (mcp.client.connect_timeout_ms).`,
      );
    }, this.#opts.startingNoticeMs ?? 5000);
    try {
      const tools = await conn.listTools();
      for (const t of tools) {
        if (this.#opts.toolset.get(t.name)) {
          log("WARNING", "mcp", `MCP tool ${t.name} of ${name} clashes with an existing tool`);
          continue;
        }
        this.#opts.toolset.add(mcpTool({
          server: name,
          info: t,
          connection: conn,
          timeoutMs: this.#opts.toolCallTimeoutMs,
          isRoot: true,
        }));
        info.tools.push(t.name);
      }
      info.status = "connected";
      log("INFO", "mcp", `Connected MCP server: ${name} (${info.tools.length} tools)`);
    } catch (err) {
      if (authProvider && (err as Error)?.name === "UnauthorizedError") {
        info.status = "unauthorized";
        info.error = "authorization required";
        this.#opts.report?.(
          `MCP server '${name}' requires authorization - run: kimi mcp auth ${name}`,
        );
        await conn.close();
        return;
      }
      let reason = describeError(err);
      if (isRequestTimeout(err)) {
        reason = `it did not finish starting within ${Math.round(timeoutMs / 1000)} s; raise ` +
          "mcp.client.connect_timeout_ms if its first start downloads a large package";
      }
      const tail = conn.stderrTail.trim();
      if (tail) reason += ` (stderr: ${tail.split("\n").slice(-3).join(" | ")})`;
      await conn.close();
      this.#fail(info, reason);
    } finally {
      clearTimeout(notice);
    }
  }

  #fail(info: McpServerInfo, reason: string): void {
    info.status = "failed";
    info.error = reason;
    log("ERROR", "mcp", `Failed to connect MCP server: ${info.name}, error: ${reason}`);
    this.#opts.report?.(`MCP server '${info.name}' failed to connect: ${reason}`);
  }

  #scopeDenial(config: McpServerConfig): string | null {
    if (isStdioServer(config)) {
      const d = this.#opts.scope.check("run", config.command);
      return d.allowed ? null : d.message;
    }
    const d = this.#opts.scope.check("net", new URL(config.url).host);
    return d.allowed ? null : d.message;
  }

  /** Close every connection (stops stdio server processes). */
  async close(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((c) => c.close().catch(() => {})));
  }
}

/** Whether an error is the SDK's request timeout (MCP error -32001). */
function isRequestTimeout(err: unknown): boolean {
  return (err as { code?: unknown })?.code === -32001;
}

/** `Type: message` of an error (the reference's failure format). */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name || "Error"}: ${err.message}`;
  return String(err);
}

function abortable(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
