/**
 * MCP server configuration (`{"mcpServers": {name: server}}`, the common MCP client format):
 * schemas, loading from `<share>/mcp.json`, `--mcp-config-file` and `--mcp-config`, and merging
 * (reference §1.1, §7.9). Errors name the source and the offending field.
 *
 * @module
 */
import { isPresent, pathStatus } from "../fs/exists.ts";
import * as z from "zod";
import { describeJsonSyntaxError } from "../config/json_syntax.ts";
import { describeFsError } from "../config/share_dir.ts";

const StringMap = z.record(z.string(), z.string());

/** A server started as a child process speaking MCP over stdin/stdout. */
export const StdioServerSchema = z.looseObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: StringMap.default({}),
  cwd: z.string().optional(),
  transport: z.literal("stdio").optional(),
});
/** A stdio server. */
export type StdioServerConfig = z.infer<typeof StdioServerSchema>;

/** A server reached over HTTP (Streamable HTTP or the legacy SSE transport). */
export const RemoteServerSchema = z.looseObject({
  url: z.url({ protocol: /^https?$/ }),
  transport: z.enum(["http", "streamable-http", "sse"]).optional(),
  headers: StringMap.default({}),
  /** `"oauth"` for the OAuth flow; any other string is sent as a bearer token. */
  auth: z.string().optional(),
});
/** A remote server. */
export type RemoteServerConfig = z.infer<typeof RemoteServerSchema>;

/** One configured server. */
export type McpServerConfig = StdioServerConfig | RemoteServerConfig;

/** Whether a server is started as a child process. */
export function isStdioServer(server: McpServerConfig): server is StdioServerConfig {
  return "command" in server;
}

/** Servers by name, in configuration order. */
export type McpServers = Record<string, McpServerConfig>;

/** A problem with an MCP configuration: the message names the source and the field. */
export class McpConfigError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "McpConfigError";
  }
}

/** Where a configuration came from, for error messages. */
export type McpConfigSource = { file: string } | { inline: number };

function describeSource(source: McpConfigSource): string {
  return "file" in source ? `MCP config file '${source.file}'` : `--mcp-config #${source.inline}`;
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    out += typeof p === "number" ? `[${p}]` : `${out ? "." : ""}${String(p)}`;
  }
  return out || "(root)";
}

function validateServer(name: string, raw: unknown, where: string): McpServerConfig {
  const base = `mcpServers.${name}`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new McpConfigError(`Invalid MCP config in ${where}: ${base}: expected an object.`);
  }
  const obj = raw as Record<string, unknown>;
  const hasCommand = "command" in obj;
  const hasUrl = "url" in obj;
  if (hasCommand === hasUrl) {
    throw new McpConfigError(
      `Invalid MCP config in ${where}: ${base}: set either "command" (stdio server) or "url" ` +
        `(remote server)${hasCommand ? ", not both" : ""}.`,
    );
  }
  const schema = hasCommand ? StdioServerSchema : RemoteServerSchema;
  const parsed = schema.safeParse(obj);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new McpConfigError(
      `Invalid MCP config in ${where}: ${base}.${fieldPath(issue.path)}: ${issue.message}.`,
    );
  }
  return parsed.data;
}

/**
 * Parse one configuration text. Invalid JSON → `Invalid JSON in <source>: <problem>`; a schema
 * error → `Invalid MCP config in <source>: mcpServers.<name>.<field>: <problem>`.
 */
export function parseMcpConfig(text: string, source: McpConfigSource): McpServers {
  const where = describeSource(source);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new McpConfigError(`Invalid JSON in ${where}: ${describeJsonSyntaxError(text)}`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new McpConfigError(`Invalid MCP config in ${where}: expected a JSON object.`);
  }
  const servers = (raw as Record<string, unknown>).mcpServers;
  if (servers === undefined) return {};
  if (servers === null || typeof servers !== "object" || Array.isArray(servers)) {
    throw new McpConfigError(
      `Invalid MCP config in ${where}: mcpServers: expected an object of servers by name.`,
    );
  }
  const out: McpServers = {};
  for (const [name, server] of Object.entries(servers as Record<string, unknown>)) {
    out[name] = validateServer(name, server, where);
  }
  return out;
}

/** Options of {@link loadMcpServers}. */
export interface LoadMcpOptions {
  /** Share dir; `<share>/mcp.json` is read when no files are given and it exists. */
  shareDir: string;
  /** `--mcp-config-file` paths (absolute). */
  files?: readonly string[];
  /** `--mcp-config` JSON strings (merged after the files). */
  inline?: readonly string[];
}

/**
 * Load and merge every configured source: the files (or the default `<share>/mcp.json`), then
 * the inline configs; a later source's server replaces an earlier one of the same name.
 */
export async function loadMcpServers(opts: LoadMcpOptions): Promise<McpServers> {
  const files = opts.files && opts.files.length > 0 ? [...opts.files] : [];
  if (files.length === 0) {
    const dflt = defaultMcpConfigFile(opts.shareDir);
    if (isPresent(await pathStatus(dflt))) files.push(dflt);
  }
  const merged: McpServers = {};
  for (const file of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (err) {
      const why = err instanceof Deno.errors.NotFound
        ? "the file does not exist."
        : describeFsError(err);
      throw new McpConfigError(`Cannot read MCP config file '${file}': ${why}`);
    }
    Object.assign(merged, parseMcpConfig(text, { file }));
  }
  (opts.inline ?? []).forEach((text, i) => {
    Object.assign(merged, parseMcpConfig(text, { inline: i + 1 }));
  });
  return merged;
}

/** `<share>/mcp.json`, the file `kimi mcp` edits. */
export function defaultMcpConfigFile(shareDir: string): string {
  return `${shareDir}/mcp.json`;
}
