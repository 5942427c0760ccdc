/**
 * One MCP server connection on `@modelcontextprotocol/sdk`: builds the transport (stdio child
 * with the secret-free environment, Streamable HTTP or SSE), lists tools, calls tools with a
 * timeout and reconnects when the server went away.
 *
 * @module
 */
import { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/sse"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/auth"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
import { ErrorCode, ListRootsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import { type CommandWrapper, wrapCommand } from "../process/command_wrapper.ts";
import { resolveProgram } from "../sandbox/process_isolation.ts";
import { VERSION } from "../version.ts";
import { isStdioServer, type McpServerConfig, type RemoteServerConfig } from "./config.ts";
import type { McpCallResult } from "./result.ts";

/** A tool as listed by a server. */
export interface McpToolInfo {
  /** Tool name. */
  name: string;
  /** Description, when given. */
  description?: string;
  /** JSON Schema of the arguments. */
  inputSchema: Record<string, unknown>;
}

/** Options of {@link McpConnection}. */
export interface McpConnectionOptions {
  /** Server name (for messages and logs). */
  name: string;
  /** Server configuration. */
  config: McpServerConfig;
  /** Base environment of a stdio child (the user's, without the agent's secrets). */
  childEnv: () => Record<string, string>;
  /**
   * How a stdio server is spawned, read per start (the session's process isolation: a pid
   * namespace of its own, so it cannot read kimi's `/proc/<pid>/environ`). Default: as given.
   */
  spawn?: () => CommandWrapper;
  /** Working directory offered as the client's root and default cwd of stdio servers. */
  workDir: string;
  /** OAuth provider for remote servers with `auth: "oauth"`. */
  authProvider?: OAuthClientProvider;
  /**
   * How long starting the server and its handshake may take (`mcp.client.connect_timeout_ms`).
   * Generous by default: `npx -y` / `deno run npm:` download the package on first start.
   */
  connectTimeoutMs?: number;
}

/** Default of `mcp.client.connect_timeout_ms`. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 180_000;

/** Why a call did not produce a result. */
export class McpCallError extends Error {
  /** `timeout`, `closed` (the server went away) or `failed`. */
  readonly kind: "timeout" | "closed" | "failed";
  /** Create the error. */
  constructor(kind: "timeout" | "closed" | "failed", message: string) {
    super(message);
    this.name = "McpCallError";
    this.kind = kind;
  }
}

const STDERR_TAIL = 2000;
/** How long a stdio server may take to exit after stdin closes before it gets SIGTERM. */
const GRACE_MS = 300;

/** A (re)connectable client for one server. */
export class McpConnection {
  readonly #opts: McpConnectionOptions;
  #client: Client | null = null;
  #connecting: Promise<Client> | null = null;
  #alive = false;
  #closed = false;
  #stderrTail = "";
  #pid: () => number | null = () => null;

  /** Create the connection (nothing is started until {@link connect}). */
  constructor(opts: McpConnectionOptions) {
    this.#opts = opts;
  }

  /** Server name. */
  get name(): string {
    return this.#opts.name;
  }

  /** Whether the server is connected and has not gone away. */
  get alive(): boolean {
    return this.#alive;
  }

  /** The last lines the stdio server wrote to stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** Connect (or reuse the live connection). */
  connect(): Promise<Client> {
    if (this.#closed) return Promise.reject(new Error("MCP client is closed"));
    if (this.#alive && this.#client) return Promise.resolve(this.#client);
    if (!this.#connecting) {
      this.#connecting = this.#open().finally(() => {
        this.#connecting = null;
      });
    }
    return this.#connecting;
  }

  async #open(): Promise<Client> {
    await this.#dispose();
    const client = new Client(
      { name: "kimi-cli", version: VERSION },
      { capabilities: { roots: { listChanged: false } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: new URL(`file://${this.#opts.workDir}`).href, name: "workdir" }],
    }));
    client.onclose = () => {
      if (this.#client === client) this.#alive = false;
    };
    const transport = this.#transport();
    this.#pid = () => transport instanceof StdioClientTransport ? transport.pid : null;
    try {
      await client.connect(transport, {
        timeout: this.#opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      });
    } catch (err) {
      await client.close().catch(() => {});
      throw err;
    }
    if (this.#closed) {
      await client.close().catch(() => {});
      throw new Error("MCP client is closed");
    }
    this.#client = client;
    this.#alive = true;
    return client;
  }

  #transport() {
    const { config, name } = this.#opts;
    if (isStdioServer(config)) {
      const env = { ...this.#opts.childEnv(), ...config.env };
      const cwd = config.cwd ?? this.#opts.workDir;
      const given = [config.command, ...(config.args ?? [])];
      const spawn = this.#opts.spawn?.();
      // Inside the pid namespace a missing program is bwrap's complaint; say it as a spawn would.
      if (spawn && resolveProgram(config.command, env.PATH, cwd) === null) {
        throw new Error(`spawn ${config.command} ENOENT`);
      }
      const argv = spawn ? wrapCommand(spawn, given, { cwd, env }) : given;
      const t = new StdioClientTransport({
        command: argv[0],
        args: argv.slice(1),
        env,
        cwd,
        stderr: "pipe",
      });
      t.stderr?.on("data", (chunk: Uint8Array | string) => {
        const text = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
        this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL);
        log("DEBUG", "mcp", `[${name}] ${text.trimEnd()}`);
      });
      return t;
    }
    const url = new URL(config.url);
    const headers: Record<string, string> = { ...config.headers };
    if (config.auth && config.auth !== "oauth") headers["Authorization"] = `Bearer ${config.auth}`;
    const requestInit: RequestInit = { headers };
    const authProvider = config.auth === "oauth" ? this.#opts.authProvider : undefined;
    if (remoteTransport(config) === "sse") {
      return new SSEClientTransport(url, { requestInit, authProvider });
    }
    return new StreamableHTTPClientTransport(url, { requestInit, authProvider });
  }

  /** List all tools (following pagination). */
  async listTools(): Promise<McpToolInfo[]> {
    const client = await this.connect();
    const out: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, {
        timeout: this.#opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      });
      for (const t of page.tools) {
        out.push({
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema as Record<string, unknown>,
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  /**
   * Call a tool. A server that went away is restarted first. Throws {@link McpCallError}
   * (`timeout` after `timeoutMs`, `closed` when the server dies during the call).
   */
  async callTool(
    tool: string,
    args: Record<string, unknown>,
    opts: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<McpCallResult> {
    const client = await this.connect();
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: opts.timeoutMs,
        signal: opts.signal,
      });
      return result as McpCallResult;
    } catch (err) {
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
        throw new McpCallError("timeout", err.message);
      }
      if (!this.#alive || (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)) {
        this.#alive = false;
        throw new McpCallError("closed", (err as Error).message);
      }
      throw err;
    }
  }

  async #dispose(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    this.#alive = false;
    if (!client) return;
    // The SDK ends stdin and waits up to 2 s before SIGTERM; many servers ignore stdin EOF.
    const pid = this.#pid();
    const term = pid === null ? undefined : setTimeout(() => {
      try {
        Deno.kill(pid, "SIGTERM");
      } catch {
        // already gone, or killing is outside the scope
      }
    }, GRACE_MS);
    await client.close().catch(() => {});
    clearTimeout(term);
  }

  /** Close the connection and stop the server process; later calls fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const pending = this.#connecting;
    if (pending) await pending.catch(() => {});
    await this.#dispose();
  }
}

/** The transport a remote server uses: explicit, or `sse` for URLs ending in `/sse`. */
export function remoteTransport(config: RemoteServerConfig): "http" | "sse" {
  if (config.transport === "sse") return "sse";
  if (config.transport) return "http";
  return /\/sse\/?$/.test(new URL(config.url).pathname) ? "sse" : "http";
}
