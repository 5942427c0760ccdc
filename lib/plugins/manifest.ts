/**
 * Plugin manifests: `plugin.json` (the reference's Kimi-Py tool plugins: subprocess tools and
 * `inject`) and `kimi.plugin.json` (Kimi-TS bundles of skills, agents, MCP servers and prompt
 * text). The two formats are told apart by the file name; a directory holding both is an error.
 *
 * @module
 */
import { join, relative, resolve } from "node:path";
import * as z from "zod";

/** File name of a tool plugin's manifest. */
export const TOOL_MANIFEST = "plugin.json";
/** File name of a bundle's manifest (Kimi-TS). */
export const BUNDLE_MANIFEST = "kimi.plugin.json";

/** Raised for a manifest that cannot be used; the message is the reference's. */
export class PluginError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "PluginError";
  }
}

/** One tool of a `plugin.json`. */
export const PluginToolSpecSchema = z.object({
  name: z.string(),
  description: z.string(),
  command: z.array(z.string()).min(1),
  parameters: z.record(z.string(), z.unknown()).default({}).refine(
    (p) => p.type === undefined || p.type === "object",
    { message: 'a tool\'s parameters must be a JSON Schema of type "object"' },
  ),
});
/** One tool of a `plugin.json`. */
export type PluginToolSpec = z.infer<typeof PluginToolSpecSchema>;

/** `runtime` written into `plugin.json` by the installer. */
export const PluginRuntimeSchema = z.object({
  host: z.string(),
  host_version: z.string(),
});
/** `runtime` written into `plugin.json` by the installer. */
export type PluginRuntime = z.infer<typeof PluginRuntimeSchema>;

/** A parsed `plugin.json` (unknown fields ignored). */
export const ToolPluginManifestSchema = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string().default(""),
  config_file: z.string().optional(),
  inject: z.record(z.string(), z.string()).default({}),
  // entries are checked one by one (a bad tool is skipped with a warning, not the plugin)
  tools: z.array(z.unknown()).default([]),
  runtime: PluginRuntimeSchema.optional(),
});
/** A parsed `plugin.json`. */
export type ToolPluginManifest = z.infer<typeof ToolPluginManifestSchema>;

function zodMessage(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? i.path.join(".") + ": " : ""}${i.message}`)
    .join("; ");
}

/**
 * Parse a `plugin.json` text read from `path`, with the reference's messages
 * (`Missing required field 'name' in <path>`, `Invalid plugin.json schema in <path>: ...`,
 * `'inject' requires 'config_file' in <path>`).
 *
 * @throws {PluginError} when it cannot be used.
 */
export function parseToolManifest(text: string, path: string): ToolPluginManifest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new PluginError(`Failed to read ${path}: ${(err as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new PluginError(`Invalid plugin.json schema in ${path}: expected a JSON object`);
  }
  for (const field of ["name", "version"]) {
    if (!Object.hasOwn(data, field)) {
      throw new PluginError(`Missing required field '${field}' in ${path}`);
    }
  }
  const parsed = ToolPluginManifestSchema.safeParse(data);
  if (!parsed.success) {
    throw new PluginError(`Invalid plugin.json schema in ${path}: ${zodMessage(parsed.error)}`);
  }
  const m = parsed.data;
  if (Object.keys(m.inject).length > 0 && !m.config_file) {
    throw new PluginError(`'inject' requires 'config_file' in ${path}`);
  }
  return m;
}

/** Read and parse `<dir>/plugin.json`. @throws {PluginError} */
export async function readToolManifest(dir: string): Promise<ToolPluginManifest> {
  const path = join(dir, TOOL_MANIFEST);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new PluginError(`Failed to read ${path}: ${(err as Error).message}`);
  }
  return parseToolManifest(text, path);
}

/**
 * Check one `tools` entry. Returns the tool, or a message saying what is wrong (the entry is
 * then skipped with `Skipping invalid plugin tool`).
 */
export function parseToolSpec(entry: unknown): PluginToolSpec | string {
  const parsed = PluginToolSpecSchema.safeParse(entry);
  if (parsed.success) return parsed.data;
  return zodMessage(parsed.error);
}

/** The name of a tools entry for messages (`<unnamed>` when it has none). */
export function toolEntryName(entry: unknown): string {
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === "string" ? name : "<unnamed>";
}

/** The manifest format of a plugin directory. */
export type PluginFormat = "tools" | "bundle";

/**
 * Which format the plugin at `dir` uses, by file name: `plugin.json` (tools) or
 * `kimi.plugin.json` / `.kimi-plugin/plugin.json` (bundle). `null` when it has neither.
 *
 * @throws {PluginError} when it holds both (mixed formats).
 */
export async function detectFormat(dir: string): Promise<PluginFormat | null> {
  const isFile = async (p: string) => {
    try {
      return (await Deno.stat(p)).isFile;
    } catch {
      return false;
    }
  };
  const tools = await isFile(join(dir, TOOL_MANIFEST));
  const bundle = await isFile(join(dir, BUNDLE_MANIFEST)) ||
    await isFile(join(dir, ".kimi-plugin", "plugin.json"));
  if (tools && bundle) {
    throw new PluginError(
      `${dir} holds both ${TOOL_MANIFEST} (a tool plugin) and ${BUNDLE_MANIFEST} (a skill/MCP ` +
        "bundle); a plugin uses one format: remove one of the two manifests.",
    );
  }
  return tools ? "tools" : bundle ? "bundle" : null;
}

/**
 * The absolute path of `file` inside `dir`, or null when it escapes it (`..`, an absolute path).
 * Symlinks are not followed here; callers that read the file resolve it again.
 */
export function insideDir(dir: string, file: string): string | null {
  const abs = resolve(dir, file);
  const rel = relative(resolve(dir), abs);
  if (rel === "" || rel.startsWith("..") || rel.startsWith("/")) return null;
  return abs;
}
