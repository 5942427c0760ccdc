/**
 * What `kimi mcp add|list|remove|test|auth|reset-auth` do: manage the servers in
 * `<share>/mcp.json` (reference §7.9; outputs and messages as the reference prints them).
 * Loaded only when an `mcp` subcommand runs (mcp_commands.ts registers them), so `kimi --help`
 * never loads MCP or zod.
 *
 * @module
 */
import { ensureShareDir, readProcessEnv } from "../config/share_dir.ts";
import {
  defaultMcpConfigFile,
  isStdioServer,
  McpConfigError,
  type McpServerConfig,
  parseMcpConfig,
} from "../mcp/config.ts";
import { childEnvironment, readableEnvironment } from "../app/child_env.ts";
import type { CommandWrapper } from "../process/command_wrapper.ts";

/** Thrown to stop a command with an exit code after its message was printed. */
export class McpCommandExit extends Error {
  /** The exit code. */
  readonly code: number;
  /** Create the error. */
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}

function fail(message: string): never {
  console.error(message);
  throw new McpCommandExit(1);
}

async function configPath(): Promise<{ shareDir: string; file: string }> {
  const shareDir = await ensureShareDir(readProcessEnv);
  return { shareDir, file: defaultMcpConfigFile(shareDir) };
}

/** The raw `mcp.json` object (other keys kept); validated. */
async function loadRaw(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { mcpServers: {} };
    throw err;
  }
  try {
    parseMcpConfig(text, { file });
  } catch (err) {
    if (err instanceof McpConfigError) fail(`Error: ${err.message}`);
    throw err;
  }
  return JSON.parse(text) as Record<string, unknown>;
}

function serversOf(raw: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const s = raw.mcpServers;
  if (s && typeof s === "object" && !Array.isArray(s)) {
    return s as Record<string, Record<string, unknown>>;
  }
  raw.mcpServers = {};
  return raw.mcpServers as Record<string, Record<string, unknown>>;
}

async function save(file: string, raw: Record<string, unknown>): Promise<void> {
  await Deno.writeTextFile(file, JSON.stringify(raw, null, 2));
}

async function getServer(
  name: string,
  opts: { requireRemote?: boolean } = {},
): Promise<{ shareDir: string; server: McpServerConfig }> {
  const { shareDir, file } = await configPath();
  const raw = await loadRaw(file);
  const servers = serversOf(raw);
  if (!Object.hasOwn(servers, name)) fail(`MCP server '${name}' not found.`);
  const server = parseMcpConfig(JSON.stringify({ mcpServers: { [name]: servers[name] } }), {
    file,
  })[name];
  if (opts.requireRemote && isStdioServer(server)) {
    fail(`MCP server '${name}' is not a remote server.`);
  }
  return { shareDir, server };
}

function parsePairs(
  items: string[],
  option: string,
  opts: { separator: string; strip: boolean },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const i = item.indexOf(opts.separator);
    if (i < 0) fail(`Invalid ${option} format: ${item} (expected KEY${opts.separator}VALUE).`);
    let key = item.slice(0, i);
    let value = item.slice(i + 1);
    if (opts.strip) {
      key = key.trim();
      value = value.trim();
    }
    if (!key) fail(`Invalid ${option} format: ${item} (empty key).`);
    out[key] = value;
  }
  return out;
}

/** Options of `kimi mcp add`. */
export interface AddOptions {
  /** `--transport`. */
  transport: string;
  /** `--env` pairs. */
  env: string[];
  /** `--header` pairs. */
  header: string[];
  /** `--auth`. */
  auth?: string;
  /** `--force`: replace a server of the same name. */
  force?: boolean;
}

/** `kimi mcp add`. */
export async function add(name: string, targets: string[], o: AddOptions): Promise<void> {
  const { file } = await configPath();
  const raw = await loadRaw(file);
  let server: Record<string, unknown>;
  if (!["stdio", "http", "sse"].includes(o.transport)) {
    fail(`Unsupported transport: ${o.transport}.`);
  }
  if (o.transport === "stdio") {
    if (targets.length === 0) {
      fail("For stdio transport, provide the command to start the MCP server after `--`.");
    }
    if (o.header.length > 0) fail("--header is only valid for http transport.");
    if (o.auth) fail("--auth is only valid for http transport.");
    const [command, ...args] = targets;
    server = { command, args };
    if (o.env.length > 0) {
      server.env = parsePairs(o.env, "env", { separator: "=", strip: false });
    }
  } else {
    if (o.env.length > 0) fail("--env is only supported for stdio transport.");
    if (targets.length === 0) fail("URL is required for http transport.");
    if (targets.length > 1) {
      fail("Multiple targets provided. Supply a single URL for http transport.");
    }
    server = { url: targets[0], transport: o.transport };
    if (o.header.length > 0) {
      server.headers = parsePairs(o.header, "header", { separator: ":", strip: true });
    }
    if (o.auth) server.auth = o.auth;
  }
  const servers = serversOf(raw);
  const replaced = Object.hasOwn(servers, name);
  if (replaced && !o.force) {
    fail(
      `MCP server '${name}' already exists in ${file}. Use --force to replace it, or ` +
        `\`kimi mcp remove ${name}\` first.`,
    );
  }
  servers[name] = server;
  await save(file, raw);
  console.log(
    replaced
      ? `Replaced MCP server '${name}' in ${file}.`
      : `Added MCP server '${name}' to ${file}.`,
  );
}

/** `kimi mcp list`. */
export async function list(): Promise<void> {
  const { shareDir, file } = await configPath();
  const raw = await loadRaw(file);
  const servers = serversOf(raw);
  console.log(`MCP config file: ${file}`);
  const names = Object.keys(servers);
  if (names.length === 0) {
    console.log("No MCP servers configured.");
    return;
  }
  const { hasOAuthTokens } = await import("../mcp/oauth.ts");
  for (const name of names) {
    const s = servers[name];
    let line: string;
    if ("command" in s) {
      const args = Array.isArray(s.args) ? s.args.join(" ") : "";
      line = `${name} (stdio): ${s.command} ${args}`.trimEnd();
    } else if ("url" in s) {
      let transport = typeof s.transport === "string" && s.transport ? s.transport : "http";
      if (transport === "streamable-http") transport = "http";
      line = `${name} (${transport}): ${s.url}`;
      if (s.auth === "oauth" && !(await hasOAuthTokens(shareDir, name))) {
        line += ` [authorization required - run: kimi mcp auth ${name}]`;
      }
    } else {
      line = `${name}: ${JSON.stringify(s)}`;
    }
    console.log(`  ${line}`);
  }
}

/** `kimi mcp remove`. */
export async function remove(name: string): Promise<void> {
  const { file } = await configPath();
  const raw = await loadRaw(file);
  const servers = serversOf(raw);
  if (!Object.hasOwn(servers, name)) fail(`MCP server '${name}' not found.`);
  delete servers[name];
  await save(file, raw);
  console.log(`Removed MCP server '${name}' from ${file}.`);
}

function describe(err: unknown): string {
  if (err instanceof Error) return `${err.name || "Error"}: ${err.message}`;
  return String(err);
}

/**
 * How `kimi mcp test` starts a stdio server: in a pid namespace of its own, as a session does
 * (so the server cannot read this process's `/proc/<pid>/environ`); without a usable bwrap, as
 * given, after the same warning a session prints.
 */
async function testSpawnWrapper(): Promise<CommandWrapper | undefined> {
  const [{ startBwrapLookup }, { isolationWarning, pidNamespaceWrapper }, { DenoPermissionScope }] =
    await Promise.all([
      import("../sandbox/bwrap.ts"),
      import("../sandbox/process_isolation.ts"),
      import("../tooling/scope.ts"),
    ]);
  const scope = new DenoPermissionScope();
  const lookup = await startBwrapLookup().result(scope);
  if (lookup.ok) return pidNamespaceWrapper(lookup.path, scope);
  console.error(isolationWarning(lookup));
  return undefined;
}

/** `kimi mcp test`. */
export async function test(name: string): Promise<void> {
  const { shareDir, server } = await getServer(name);
  const [{ McpConnection }, { McpOAuthProvider }] = await Promise.all([
    import("../mcp/connection.ts"),
    import("../mcp/oauth.ts"),
  ]);
  const spawn = isStdioServer(server) ? await testSpawnWrapper() : undefined;
  console.log(`Testing connection to '${name}'...`);
  const conn = new McpConnection({
    name,
    config: server,
    childEnv: () => childEnvironment(readableEnvironment(), { values: [] }),
    workDir: Deno.cwd(),
    authProvider: new McpOAuthProvider({ shareDir, server: name }),
    ...(spawn ? { spawn: () => spawn } : {}),
  });
  try {
    const tools = await conn.listTools();
    console.log(`✓ Connected to '${name}'`);
    console.log(`  Available tools: ${tools.length}`);
    if (tools.length > 0) {
      console.log("  Tools:");
      for (const t of tools) {
        let desc = t.description ?? "";
        if (desc.length > 50) desc = desc.slice(0, 47) + "...";
        console.log(`    - ${t.name}: ${desc}`);
      }
    }
  } catch (err) {
    fail(`✗ Connection failed: ${describe(err)}`);
  } finally {
    await conn.close();
  }
}

function openBrowser(url: string): void {
  const cmd = Deno.build.os === "darwin"
    ? "open"
    : Deno.build.os === "windows"
    ? "explorer"
    : "xdg-open";
  try {
    if (Deno.permissions.querySync({ name: "run", command: cmd }).state !== "granted") return;
    const child = new Deno.Command(cmd, {
      args: [url],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.status.catch(() => {});
  } catch {
    // no browser: the URL is printed
  }
}

/** `kimi mcp auth`. */
export async function authCommand(name: string): Promise<void> {
  const { shareDir, server } = await getServer(name, { requireRemote: true });
  if (isStdioServer(server) || server.auth !== "oauth") {
    fail(`MCP server '${name}' does not use OAuth. Add with --auth oauth.`);
  }
  const [{ authorizeServer, McpOAuthProvider }, { McpConnection }] = await Promise.all([
    import("../mcp/oauth.ts"),
    import("../mcp/connection.ts"),
  ]);
  console.log(`Authorizing with '${name}'...`);
  console.log("A browser window will open for authorization.");
  try {
    await authorizeServer({
      shareDir,
      server: name,
      url: server.url,
      onAuthorizationUrl: (url) => {
        console.log(`If it does not open, visit: ${url.href}`);
        if (!readProcessEnv("KIMI_MCP_OAUTH_NO_BROWSER")) openBrowser(url.href);
      },
    });
    const conn = new McpConnection({
      name,
      config: server,
      childEnv: () => ({}),
      workDir: Deno.cwd(),
      authProvider: new McpOAuthProvider({ shareDir, server: name }),
    });
    try {
      const tools = await conn.listTools();
      console.log(`Successfully authorized with '${name}'.`);
      console.log(`Available tools: ${tools.length}`);
    } finally {
      await conn.close();
    }
  } catch (err) {
    fail(`Authorization failed: ${describe(err)}`);
  }
}

/** `kimi mcp reset-auth`. */
export async function resetAuth(name: string): Promise<void> {
  const { shareDir } = await getServer(name, { requireRemote: true });
  const { clearOAuthTokens } = await import("../mcp/oauth.ts");
  try {
    await clearOAuthTokens(shareDir, name);
  } catch (err) {
    fail(`Failed to clear tokens: ${describe(err)}`);
  }
  console.log(`OAuth tokens cleared for '${name}'.`);
}
