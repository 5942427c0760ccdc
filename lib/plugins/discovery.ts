/**
 * Finding the plugins to load at agent build: every directory of the plugins root (sorted)
 * that holds a manifest, was installed through `kimi plugin install` (it has a record), is
 * enabled, and whose files still match the content hash recorded at install. Anything else
 * is reported and left out.
 *
 * @module
 */
import { join } from "node:path";
import { log } from "../log.ts";
import { detectFormat, PluginError, type PluginFormat } from "./manifest.ts";
import { contentHash, type PluginState, readPluginState } from "./store.ts";

/** A plugin that may be loaded. */
export interface VerifiedPlugin {
  /** Directory name (= manifest name). */
  readonly name: string;
  /** Absolute directory. */
  readonly dir: string;
  /** Manifest format. */
  readonly format: PluginFormat;
}

/** The outcome of {@link discoverPlugins}. */
export interface PluginDiscovery {
  /** Plugins to load, sorted by name. */
  readonly plugins: VerifiedPlugin[];
  /** Why plugins were refused, one line each (for stderr and the log). */
  readonly problems: string[];
  /** Plugin directories (names) not loaded: disabled, changed or not installed by kimi. */
  readonly skipped: string[];
}

/** The refusal of a plugin whose files changed since it was installed. */
export function changedMessage(name: string, dir: string): string {
  return `Plugin '${name}' was changed since it was installed (${dir}), so it is not loaded. ` +
    `If you trust the change, run \`kimi plugin install ${dir}\` to approve it again.`;
}

/** The refusal of a plugin directory kimi never installed. */
export function untrackedMessage(name: string, dir: string): string {
  return `Plugin '${name}' in ${dir} was not installed with \`kimi plugin install\`, so it is ` +
    `not loaded. If you trust it, run \`kimi plugin install ${dir}\`.`;
}

/** List the plugin directories of `root` (sorted; hidden and non-directories skipped). */
export async function pluginDirs(root: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(root)) {
      if (e.isDirectory && !e.name.startsWith(".")) names.push(e.name);
    }
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  return names.sort();
}

/** Find the plugins of `root` that may be loaded. Never throws. */
export async function discoverPlugins(root: string): Promise<PluginDiscovery> {
  const plugins: VerifiedPlugin[] = [];
  const problems: string[] = [];
  const skipped: string[] = [];
  let names: string[];
  try {
    names = await pluginDirs(root);
  } catch (err) {
    const message = `Cannot read the plugins in ${root}: ${(err as Error).message}`;
    // A run without read permission there has no plugins; that is not worth a warning.
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      log("INFO", "plugins", message);
      return { plugins, problems: [], skipped };
    }
    return { plugins, problems: [message], skipped };
  }
  if (names.length === 0) return { plugins, problems, skipped };
  let state: PluginState;
  try {
    state = await readPluginState(root);
  } catch (err) {
    // without a readable state file no plugin is trusted
    return { plugins, problems: [(err as Error).message], skipped: names };
  }
  for (const name of names) {
    const dir = join(root, name);
    let format: PluginFormat | null;
    try {
      format = await detectFormat(dir);
    } catch (err) {
      problems.push(err instanceof PluginError ? err.message : String(err));
      skipped.push(name);
      continue;
    }
    if (format === null) continue; // a skill folder, not a plugin
    const record = state.plugins[name];
    if (!record) {
      problems.push(untrackedMessage(name, dir));
      skipped.push(name);
      continue;
    }
    if (!record.enabled) {
      skipped.push(name);
      continue;
    }
    let hash: string;
    try {
      hash = await contentHash(dir);
    } catch (err) {
      problems.push(`Cannot read plugin '${name}' (${dir}): ${(err as Error).message}`);
      skipped.push(name);
      continue;
    }
    if (hash !== record.hash) {
      problems.push(changedMessage(name, dir));
      skipped.push(name);
      continue;
    }
    plugins.push({ name, dir, format });
  }
  return { plugins, problems, skipped };
}
