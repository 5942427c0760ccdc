/**
 * The install transaction (reference §A5): the source tree is copied into a staging dir under
 * the plugins root, the config injected and `runtime` written there, its content hash taken,
 * and only then swapped in place of the previous version (kept until the swap succeeded; put
 * back when anything fails). Also `remove`, `enable`/`disable` and host-value injection.
 *
 * @module
 */
import { join, relative } from "node:path";
import { atomicWriteText } from "../fs/atomic_write.ts";
import {
  detectFormat,
  insideDir,
  parseToolSpec,
  PluginError,
  type PluginFormat,
  readToolManifest,
  TOOL_MANIFEST,
  toolEntryName,
  type ToolPluginManifest,
} from "./manifest.ts";
import { readBundleManifest } from "./bundle_manifest.ts";
import { contentHash, readPluginState, STATE_FILE, updatePluginState } from "./store.ts";

/** Values the host can inject (`api_key`, `base_url` of the default model's provider). */
export type HostValues = Readonly<Record<string, string>>;

/** What an install did. */
export interface InstallResult {
  /** Plugin name. */
  name: string;
  /** Its version (`""` when the manifest has none). */
  version: string;
  /** Manifest format. */
  format: PluginFormat;
}

/** Options of {@link installPlugin}. */
export interface InstallOptions {
  /** The plugins root. */
  root: string;
  /** Host values for `inject`. */
  hostValues: HostValues;
  /** Host version written into `runtime`. */
  hostVersion: string;
  /** What the user gave (recorded for `info`). */
  source: string;
}

/** The install directory of `name`, or null when the name would escape the root. */
export function pluginDir(root: string, name: string): string | null {
  if (!name || name.startsWith(".") || name.includes("/") || name.includes("\\")) return null;
  if (name === STATE_FILE) return null;
  const dir = insideDir(root, name);
  return dir !== null && relative(root, dir) === name ? dir : null;
}

/**
 * Install the plugin in `sourceDir` under `opts.root` (reinstall = upgrade). Nothing of a
 * previous version is lost when it fails.
 *
 * @throws {PluginError} with the reference's message.
 */
export async function installPlugin(
  sourceDir: string,
  opts: InstallOptions,
): Promise<InstallResult> {
  const format = await detectFormat(sourceDir);
  if (format === null) throw new PluginError(`No plugin.json found in ${sourceDir}`);
  const manifest = format === "tools"
    ? await readToolManifest(sourceDir)
    : await readBundleManifest(sourceDir);
  const { name, version } = manifest;
  if (format === "tools") {
    // a broken tool is refused here; at load time it would only be skipped with a warning
    (manifest as ToolPluginManifest).tools.forEach((entry, i) => {
      const spec = parseToolSpec(entry);
      if (typeof spec === "string") {
        throw new PluginError(
          `Invalid plugin.json schema in ${join(sourceDir, TOOL_MANIFEST)}: tools.${i} ` +
            `(${toolEntryName(entry)}): ${spec}`,
        );
      }
    });
  }
  const dest = pluginDir(opts.root, name);
  if (dest === null) throw new PluginError(`Invalid plugin name: ${name}`);
  await Deno.mkdir(opts.root, { recursive: true });
  // fail before touching anything when the state file is unreadable
  await readPluginState(opts.root);
  await removeStaleStaging(opts.root, name);
  const staging = await Deno.makeTempDir({ dir: opts.root, prefix: `.${name}-` });
  try {
    const staged = join(staging, name);
    await copyTree(sourceDir, staged);
    if (format === "tools") await finishToolPlugin(staged, opts);
    const hash = await contentHash(staged);
    const old = join(staging, ".previous");
    let hadOld = false;
    try {
      await Deno.rename(dest, old);
      hadOld = true;
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    try {
      await Deno.rename(staged, dest);
      await updatePluginState(opts.root, (s) => {
        const before = s.plugins[name];
        s.plugins[name] = {
          hash,
          enabled: before?.enabled ?? true,
          format,
          source: opts.source,
          installed_at: new Date().toISOString(),
        };
      });
    } catch (err) {
      // put the previous version back
      await Deno.remove(dest, { recursive: true }).catch(() => {});
      if (hadOld) await Deno.rename(old, dest).catch(() => {});
      throw err;
    }
    return { name, version, format };
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
}

/** How old a staging dir must be before an install counts it as left behind by a killed one. */
const STALE_STAGING_MS = 60 * 60 * 1000;

/** Remove staging dirs of `name` that an interrupted install left behind (older than an hour). */
async function removeStaleStaging(root: string, name: string): Promise<void> {
  const now = Date.now();
  for await (const e of Deno.readDir(root)) {
    if (!e.isDirectory || !e.name.startsWith(`.${name}-`)) continue;
    const path = join(root, e.name);
    const st = await Deno.stat(path).catch(() => null);
    if (st?.mtime && now - st.mtime.getTime() > STALE_STAGING_MS) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    }
  }
}

/** Inject the config and write `runtime` into a staged tool plugin. */
async function finishToolPlugin(staged: string, opts: InstallOptions): Promise<void> {
  const manifestPath = join(staged, TOOL_MANIFEST);
  const manifest = await readToolManifest(staged);
  if (manifest.config_file && Object.keys(manifest.inject).length > 0) {
    await injectConfig(staged, manifest.config_file, manifest.inject, opts.hostValues);
  }
  const raw = JSON.parse(await Deno.readTextFile(manifestPath));
  raw.runtime = { host: "kimi-code", host_version: opts.hostVersion };
  await Deno.writeTextFile(manifestPath, JSON.stringify(raw, null, 2));
}

/**
 * Set each `inject` key (a dotted path) of the plugin's JSON `configFile` to the host value it
 * names (reference §A4), written back with indent 2. Resolves with whether the file changed.
 */
export async function injectConfig(
  dir: string,
  configFile: string,
  inject: Readonly<Record<string, string>>,
  host: HostValues,
): Promise<boolean> {
  const path = insideDir(dir, configFile);
  if (path === null) throw new PluginError(`config_file escapes plugin directory: ${configFile}`);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new PluginError(`Config file not found: ${path}`);
    }
    throw new PluginError(`Failed to read config file ${path}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new PluginError(`Failed to read config file ${path}: ${(err as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) data = {};
  for (const [key, hostKey] of Object.entries(inject)) {
    const value = host[hostKey];
    if (!value) throw new PluginError(`Host does not provide required inject key '${hostKey}'`);
    const parts = key.split(".");
    let node = data as Record<string, unknown>;
    for (const p of parts.slice(0, -1)) {
      const next = node[p];
      if (typeof next !== "object" || next === null || Array.isArray(next)) node[p] = {};
      node = node[p] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = value;
  }
  const out = JSON.stringify(data, null, 2);
  if (out === text) return false;
  await atomicWriteText(path, out, { mode: 0o600 });
  return true;
}

/**
 * Re-inject the current host values into an installed, verified plugin's config file (the
 * reference does so at every start, so a renewed key reaches plugins) and record the new
 * content hash. Does nothing when nothing changed or the host has no API key.
 */
export async function refreshPluginConfig(
  root: string,
  plugin: { name: string; dir: string; configFile?: string; inject: Record<string, string> },
  host: HostValues,
): Promise<void> {
  if (!plugin.configFile || Object.keys(plugin.inject).length === 0 || !host.api_key) return;
  if (!(await injectConfig(plugin.dir, plugin.configFile, plugin.inject, host))) return;
  const hash = await contentHash(plugin.dir);
  await updatePluginState(root, (s) => {
    if (s.plugins[plugin.name]) s.plugins[plugin.name].hash = hash;
  });
}

/**
 * Copy `src` into the new directory `dest` (files, directories; a symlink's target is copied
 * when it stays inside `src`, like the reference's copytree).
 *
 * @throws {PluginError} for a symlink leaving the source.
 */
export async function copyTree(src: string, dest: string): Promise<void> {
  const realSrc = await Deno.realPath(src);
  const walk = async (from: string, to: string): Promise<void> => {
    await Deno.mkdir(to);
    for await (const e of Deno.readDir(from)) {
      const a = join(from, e.name);
      const b = join(to, e.name);
      let st = await Deno.lstat(a);
      if (st.isSymlink) {
        const real = await Deno.realPath(a).catch(() => null);
        if (real === null || insideDir(realSrc, real) === null) {
          throw new PluginError(
            `${a} is a symlink leading outside the plugin; replace it with the file itself`,
          );
        }
        st = await Deno.stat(a);
      }
      if (st.isDirectory) await walk(a, b);
      else if (st.isFile) {
        await Deno.copyFile(a, b);
        if (st.mode !== null) await Deno.chmod(b, st.mode & 0o777).catch(() => {});
      }
    }
  };
  await walk(src, dest);
}

/**
 * Remove an installed plugin and its record.
 *
 * @throws {PluginError} `Plugin '<name>' not found in <root>`.
 */
export async function removePlugin(root: string, name: string): Promise<void> {
  const dir = pluginDir(root, name);
  const state = await readPluginState(root);
  let exists = false;
  if (dir !== null) {
    try {
      exists = (await Deno.lstat(dir)).isDirectory;
    } catch {
      exists = false;
    }
  }
  if (dir === null || (!exists && !state.plugins[name])) {
    throw new PluginError(`Plugin '${name}' not found in ${root}`);
  }
  // Move it aside first so a half-deleted plugin is never loaded.
  const trash = join(root, `.${name}-removed-${crypto.randomUUID().slice(0, 8)}`);
  if (exists) await Deno.rename(dir, trash);
  await updatePluginState(root, (s) => void delete s.plugins[name]);
  await Deno.remove(trash, { recursive: true }).catch(() => {});
}

/**
 * Enable or disable an installed plugin.
 *
 * @throws {PluginError} `Plugin '<name>' is not installed` for an unknown plugin.
 */
export async function setPluginEnabled(
  root: string,
  name: string,
  enabled: boolean,
): Promise<void> {
  const state = await readPluginState(root);
  if (!Object.hasOwn(state.plugins, name)) {
    throw new PluginError(`Plugin '${name}' is not installed (see kimi plugin list)`);
  }
  await updatePluginState(root, (s) => void (s.plugins[name].enabled = enabled));
}
