/**
 * The Kimi-TS bundle manifest (`kimi.plugin.json`, or `.kimi-plugin/plugin.json`): skills,
 * agents, MCP servers, a startup skill and system-prompt text (reference Part B §B1). Fields
 * of the other format (`tools`, `inject`, `config_file`, ...) are reported, not used.
 *
 * @module
 */
import { join } from "node:path";
import * as z from "zod";
import { BUNDLE_MANIFEST, insideDir, PluginError } from "./manifest.ts";

/** A bundle's name: lower-case letters, digits, `_` and `-`, at most 64 characters. */
export const BUNDLE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Largest `systemPrompt` / `systemPromptPath` text of one plugin. */
export const MAX_PLUGIN_PROMPT_BYTES = 32 * 1024;
/** Largest prompt text of all plugins together. */
export const MAX_TOTAL_PROMPT_BYTES = 64 * 1024;

const PathList = z.union([z.string(), z.array(z.string())]);

/** A bundle manifest. */
export const BundleManifestSchema = z.object({
  name: z.string(),
  version: z.string().default(""),
  description: z.string().default(""),
  skills: PathList.optional(),
  agents: PathList.optional(),
  sessionStart: z.object({ skill: z.string().optional() }).optional(),
  skillInstructions: z.string().optional(),
  systemPrompt: z.string().optional(),
  systemPromptPath: z.string().optional(),
  mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
});
/** A bundle manifest. */
export type BundleManifest = z.infer<typeof BundleManifestSchema>;

/** Fields of the tool-plugin format a bundle may not use. */
export const UNSUPPORTED_BUNDLE_FIELDS = [
  "tools",
  "apps",
  "inject",
  "configFile",
  "config_file",
  "bootstrap",
] as const;

/** The manifest file of a bundle directory (`kimi.plugin.json` wins). */
export async function bundleManifestPath(dir: string): Promise<string> {
  const primary = join(dir, BUNDLE_MANIFEST);
  try {
    await Deno.stat(primary);
    return primary;
  } catch {
    return join(dir, ".kimi-plugin", "plugin.json");
  }
}

/**
 * Read and check a bundle manifest.
 *
 * @throws {PluginError} for a missing/unparsable manifest or a bad name.
 */
export async function readBundleManifest(
  dir: string,
): Promise<BundleManifest & { warnings: string[] }> {
  const path = await bundleManifestPath(dir);
  let data: unknown;
  try {
    data = JSON.parse(await Deno.readTextFile(path));
  } catch (err) {
    throw new PluginError(`Cannot install plugin at ${dir}: ${path}: ${(err as Error).message}`);
  }
  const parsed = BundleManifestSchema.safeParse(data);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new PluginError(
      `Cannot install plugin at ${dir}: ${path}: ${i?.path.join(".")}: ${i?.message}`,
    );
  }
  const m = parsed.data;
  if (!BUNDLE_NAME.test(m.name.toLowerCase())) {
    throw new PluginError(
      `Cannot install plugin at ${dir}: name "${m.name}" must match ${BUNDLE_NAME.source}`,
    );
  }
  const warnings = UNSUPPORTED_BUNDLE_FIELDS
    .filter((f) => Object.hasOwn(data as object, f))
    .map((f) =>
      `"${f}" is present but not supported by Kimi plugins (${BUNDLE_MANIFEST}); ` +
      "tools with inject belong in a plugin.json plugin"
    );
  return { ...m, name: m.name.toLowerCase(), warnings };
}

/**
 * A manifest path (`./...`) resolved inside the bundle, following symlinks; null when it does
 * not start with `./` or leaves the bundle.
 */
export async function bundlePath(root: string, p: string): Promise<string | null> {
  if (!p.startsWith("./")) return null;
  const abs = insideDir(root, p) ?? (p === "./" ? root : null);
  if (abs === null) return null;
  const real = await Deno.realPath(abs).catch(() => null);
  const realRoot = await Deno.realPath(root).catch(() => root);
  if (real === null) return null;
  return real === realRoot || insideDir(realRoot, real) !== null ? real : null;
}
