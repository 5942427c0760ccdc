/**
 * What `kimi plugin install|list|info|remove|enable|disable` do, with the reference's output
 * (§A5): results on stdout, errors on stderr as `Error: <msg>` with exit code 1.
 *
 * @module
 */
import { join } from "node:path";
import { ensureShareDir, readProcessEnv } from "../config/share_dir.ts";
import { ConfigError, loadConfig } from "../config/load.ts";
import { resolveModel } from "../config/model_resolution.ts";
import { VERSION } from "../version.ts";
import {
  type HostValues,
  installPlugin,
  removePlugin,
  setPluginEnabled,
} from "../plugins/install.ts";
import { pluginListing, pluginStatus } from "../plugins/listing.ts";
import {
  BUNDLE_MANIFEST,
  detectFormat,
  PluginError,
  readToolManifest,
} from "../plugins/manifest.ts";
import { readBundleManifest } from "../plugins/bundle_manifest.ts";
import { resolveSource } from "../plugins/source.ts";
import { pluginsRoot, readPluginState } from "../plugins/store.ts";

function fail(message: string): number {
  console.error(`Error: ${message}`);
  return 1;
}

async function guard(f: () => Promise<number>): Promise<number> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof PluginError || err instanceof ConfigError) return fail(err.message);
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      return fail(`${(err as Error).message}. Run kimi with the permission named above.`);
    }
    throw err;
  }
}

async function root(): Promise<string> {
  return pluginsRoot(await ensureShareDir(readProcessEnv));
}

/** The host values of the default model's provider, with environment overrides applied. */
async function hostValues(shareDir: string, configFile: string | undefined): Promise<HostValues> {
  const { config } = await loadConfig({ shareDir, configFile });
  if (!config.default_model) return {};
  const p = resolveModel(config, { getEnv: readProcessEnv }).provider;
  return {
    ...(p.api_key ? { api_key: p.api_key } : {}),
    ...(p.base_url ? { base_url: p.base_url } : {}),
  };
}

/** `kimi plugin install <target>`. */
export function install(target: string, opts: { configFile?: string }): Promise<number> {
  return guard(async () => {
    const shareDir = await ensureShareDir(readProcessEnv);
    const home = readProcessEnv("HOME") ?? null;
    const src = await resolveSource(target, {
      progress: (line) => console.log(line),
      cwd: Deno.cwd(),
      home,
      hasManifest: async (dir) => (await detectFormat(dir)) !== null,
    });
    try {
      const host = await hostValues(shareDir, opts.configFile);
      if (!host.api_key) {
        console.error(
          "Warning: No LLM provider configured. Plugins requiring API key injection will fail. " +
            "Run 'kimi login' or configure a provider first.",
        );
      }
      const r = await installPlugin(src.dir, {
        root: pluginsRoot(shareDir),
        hostValues: host,
        hostVersion: VERSION,
        source: target,
      });
      console.log(`Installed plugin '${r.name}'${r.version ? ` v${r.version}` : ""}`);
      if (r.format === "tools") console.log(`  runtime: host=kimi-code, version=${VERSION}`);
      else console.log(`  format: ${BUNDLE_MANIFEST} (skills, agents, MCP servers)`);
      return 0;
    } finally {
      if (src.tempDir) await Deno.remove(src.tempDir, { recursive: true }).catch(() => {});
    }
  });
}

/** `kimi plugin list`. */
export function list(): Promise<number> {
  return guard(async () => {
    const lines = await pluginListing(await root());
    console.log(lines.length ? lines.join("\n") : "No plugins installed.");
    return 0;
  });
}

/** `kimi plugin info <name>`. */
export function info(name: string): Promise<number> {
  return guard(async () => {
    const r = await root();
    const dir = join(r, name);
    const format = name.includes("/") || name.startsWith(".") ? null : await detectFormat(dir);
    if (format === null) return fail(`Plugin '${name}' not found`);
    const state = await readPluginState(r);
    const remark = await pluginStatus(state, name, dir);
    const out: string[] = [];
    if (format === "tools") {
      const m = await readToolManifest(dir);
      out.push(
        `Name:        ${m.name}`,
        `Version:     ${m.version}`,
        `Description: ${m.description || "(none)"}`,
        `Config file: ${m.config_file || "(none)"}`,
      );
      const inject = Object.entries(m.inject);
      if (inject.length) {
        out.push(`Inject:      ${inject.map(([k, v]) => `${k} <- ${v}`).join(", ")}`);
      }
      out.push(
        m.runtime
          ? `Runtime:     host=${m.runtime.host}, version=${m.runtime.host_version}`
          : "Runtime:     (not installed via host)",
      );
    } else {
      const m = await readBundleManifest(dir);
      out.push(
        `Name:        ${m.name}`,
        `Version:     ${m.version || "(none)"}`,
        `Description: ${m.description || "(none)"}`,
        `Format:      ${BUNDLE_MANIFEST}`,
      );
      for (const w of m.warnings) out.push(`Note:        ${w}`);
    }
    out.push(`Status:      ${remark ? remark.long : "enabled"}`);
    console.log(out.join("\n"));
    return 0;
  });
}

/** `kimi plugin remove <name>`. */
export function remove(name: string): Promise<number> {
  return guard(async () => {
    await removePlugin(await root(), name);
    console.log(`Removed plugin '${name}'`);
    return 0;
  });
}

/** `kimi plugin enable|disable <name>`. */
export function setEnabled(name: string, enabled: boolean): Promise<number> {
  return guard(async () => {
    await setPluginEnabled(await root(), name, enabled);
    console.log(
      `${enabled ? "Enabled" : "Disabled"} plugin '${name}'. It applies to new sessions.`,
    );
    return 0;
  });
}
