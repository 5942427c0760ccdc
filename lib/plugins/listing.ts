/**
 * The listing of installed plugins shared by `kimi plugin list` and the shell's `/plugins`:
 * one line per plugin directory in sorted order, as the reference prints them
 * (`  <name> v<version> (installed)`), with a remark for disabled, changed or untracked ones.
 *
 * @module
 */
import { join } from "node:path";
import { readBundleManifest } from "./bundle_manifest.ts";
import { changedMessage, pluginDirs, untrackedMessage } from "./discovery.ts";
import { detectFormat, type PluginFormat, readToolManifest } from "./manifest.ts";
import { contentHash, type PluginState, readPluginState } from "./store.ts";

/** Why a plugin is not loaded: a short remark for lists and a sentence for details. */
export interface PluginRemark {
  /** E.g. `disabled`, `changed since install`. */
  readonly short: string;
  /** The full explanation naming the fix. */
  readonly long: string;
}

/** The remark of an installed plugin (null when it is loaded). */
export async function pluginStatus(
  state: PluginState,
  name: string,
  dir: string,
): Promise<PluginRemark | null> {
  const rec = state.plugins[name];
  if (!rec) return { short: "not installed by kimi", long: untrackedMessage(name, dir) };
  if ((await contentHash(dir).catch(() => "")) !== rec.hash) {
    return { short: "changed since install", long: changedMessage(name, dir) };
  }
  if (!rec.enabled) {
    return { short: "disabled", long: `disabled (run \`kimi plugin enable ${name}\`)` };
  }
  return null;
}

/** The listing lines of the plugins under `root` (empty when none). */
export async function pluginListing(root: string): Promise<string[]> {
  const state = await readPluginState(root).catch(() =>
    ({ version: 1, plugins: {} }) as PluginState
  );
  const lines: string[] = [];
  for (const name of await pluginDirs(root)) {
    const dir = join(root, name);
    let format: PluginFormat | null;
    try {
      format = await detectFormat(dir);
    } catch {
      continue;
    }
    if (format === null) continue;
    const remark = await pluginStatus(state, name, dir);
    const tail = remark ? ` [${remark.short}]` : "";
    if (format === "tools") {
      const m = await readToolManifest(dir).catch(() => null);
      if (m === null) continue; // invalid plugins are skipped
      lines.push(
        `  ${m.name} v${m.version} (${m.runtime ? "installed" : "not configured"})${tail}`,
      );
    } else {
      const m = await readBundleManifest(dir).catch(() => null);
      if (m === null) continue;
      lines.push(`  ${m.name}${m.version ? ` v${m.version}` : ""} (bundle)${tail}`);
    }
  }
  return lines;
}
