/**
 * Loading installed plugins into an agent build: tool plugins' tools (after the agent's own
 * tools, for the root agent and every subagent), their config files registered as secret
 * control paths, and the parts of Kimi-TS bundles (see lib/plugins/bundle.ts).
 *
 * @module
 */
import { log } from "../log.ts";
import type { ControlPath, ControlPathSet } from "../tooling/control_paths.ts";
import type { Tool, ToolEnv } from "../tooling/tool.ts";
import { discoverPlugins, pluginDirs } from "../plugins/discovery.ts";
import { type HostValues, refreshPluginConfig } from "../plugins/install.ts";
import {
  insideDir,
  parseToolSpec,
  readToolManifest,
  toolEntryName,
  type ToolPluginManifest,
} from "../plugins/manifest.ts";
import { pluginsRoot } from "../plugins/store.ts";
import { pluginTool } from "../plugins/tool.ts";
import { type BundleAgent, loadBundles, type LoadedBundles } from "../plugins/bundle.ts";
import type { ResolvedAgentSpec } from "../agent/spec.ts";
import { join } from "node:path";

/** A tool plugin ready to offer its tools. */
interface ToolPlugin {
  readonly name: string;
  readonly dir: string;
  readonly manifest: ToolPluginManifest;
  readonly configPath: string | null;
}

/** The plugins of one agent build. */
export interface LoadedPlugins {
  /**
   * The plugin tools for an agent whose tools are named `taken`: conflicts and invalid
   * entries are skipped with the reference's warnings.
   */
  tools(env: ToolEnv, taken: ReadonlySet<string>): Tool[];
  /** What enabled bundles bring (skills dirs, MCP servers, prompt text, startup skill). */
  readonly bundles: LoadedBundles;
  /** Why plugins were refused (already logged). */
  readonly problems: readonly string[];
  /** Plugin directories not loaded (their skills are left out too). */
  readonly skipped: readonly string[];
}

/** Options of {@link loadPlugins}. */
export interface LoadPluginsOptions {
  /** Share dir (`<share>/plugins` is the root). */
  readonly shareDir: string;
  /** The host values for `inject`, resolved per call. */
  readonly hostValues: () => Promise<HostValues>;
  /** The session's control paths (each plugin's config file is registered as a secret). */
  readonly controls: ControlPathSet;
  /** Timeout of a plugin tool call (default 120 s, the reference's). */
  readonly timeoutMs?: number;
}

/**
 * Register the config file of every installed tool plugin as a secret control path: it holds
 * the values injected for the plugin (API keys). Call before the agent's tools run.
 */
async function registerPluginSecrets(root: string, controls: ControlPathSet): Promise<void> {
  const paths: ControlPath[] = [];
  for (const name of await pluginDirs(root).catch(() => [])) {
    const dir = join(root, name);
    const m = await readToolManifest(dir).catch(() => null);
    const file = m?.config_file ? insideDir(dir, m.config_file) : null;
    if (file) {
      paths.push({
        path: file,
        kind: "file",
        what: `the config file of plugin '${name}' (values injected for it)`,
        secret: true,
      });
    }
  }
  controls.register("plugins", paths);
}

/** Load the installed, enabled, unchanged plugins of a share dir. Never throws. */
export async function loadPlugins(opts: LoadPluginsOptions): Promise<LoadedPlugins> {
  const root = pluginsRoot(opts.shareDir);
  await registerPluginSecrets(root, opts.controls);
  const found = await discoverPlugins(root);
  for (const p of found.problems) log("WARNING", "plugins", p);
  const toolPlugins: ToolPlugin[] = [];
  for (const p of found.plugins) {
    if (p.format !== "tools") continue;
    try {
      const manifest = await readToolManifest(p.dir);
      if (manifest.config_file && Object.keys(manifest.inject).length > 0) {
        // like the reference's refresh at start: per-plugin failures only logged
        await refreshPluginConfig(root, {
          name: p.name,
          dir: p.dir,
          configFile: manifest.config_file,
          inject: manifest.inject,
        }, await opts.hostValues().catch(() => ({}))).catch((err) =>
          log("DEBUG", "plugins", `could not refresh ${p.name}'s config: ${err}`)
        );
      }
      toolPlugins.push({
        name: p.name,
        dir: p.dir,
        manifest,
        configPath: manifest.config_file ? insideDir(p.dir, manifest.config_file) : null,
      });
    } catch (err) {
      // the reference skips plugins with an unparsable plugin.json
      log("WARNING", "plugins", `Skipping plugin ${p.name}: ${(err as Error).message}`);
    }
  }
  const bundles = await loadBundles(found.plugins.filter((p) => p.format === "bundle"));
  for (const w of bundles.warnings) log("WARNING", "plugins", w);
  const injectEnv = (m: ToolPluginManifest) => async () => {
    const host = await opts.hostValues().catch(() => ({} as HostValues));
    const env: Record<string, string> = {};
    for (const [key, hostKey] of Object.entries(m.inject)) {
      if (host[hostKey]) env[key] = host[hostKey];
    }
    return env;
  };
  return {
    bundles,
    problems: [...found.problems, ...bundles.warnings],
    skipped: found.skipped,
    tools(env, taken) {
      const names = new Set(taken);
      const out: Tool[] = [];
      for (const p of toolPlugins) {
        for (const entry of p.manifest.tools) {
          const spec = parseToolSpec(entry);
          if (typeof spec === "string") {
            log(
              "WARNING",
              "plugins",
              `Skipping invalid plugin tool: ${toolEntryName(entry)} (from ${p.name}): ${spec}`,
            );
            continue;
          }
          if (names.has(spec.name)) {
            log(
              "WARNING",
              "plugins",
              `Plugin tool '${spec.name}' conflicts with an existing tool, skipping`,
            );
            continue;
          }
          names.add(spec.name);
          out.push(pluginTool({
            plugin: p.name,
            dir: p.dir,
            spec,
            wrapper: () => env.run.commands,
            childEnv: () => env.childEnv(),
            injectEnv: injectEnv(p.manifest),
            reveal: p.configPath ? [p.configPath] : [],
            isRoot: env.isRoot,
            refusal: () => env.shellConfinement?.refusal,
            timeoutMs: opts.timeoutMs,
          }));
        }
      }
      return out;
    },
  };
}

/** The prompt argument a plugin agent's system prompt is passed in (inserted verbatim). */
const AGENT_PROMPT_ARG = "KIMI_PLUGIN_AGENT_PROMPT";

/**
 * `spec` with the bundles' agents added as subagent types, below every type the spec declares
 * (a clash is skipped with a warning). Each runs like the spec's `coder` type (or its first),
 * with the agent file's body as its whole system prompt.
 */
export function withPluginAgents(
  spec: ResolvedAgentSpec,
  agents: readonly BundleAgent[],
): ResolvedAgentSpec {
  if (agents.length === 0) return spec;
  const subagents = { ...spec.subagents };
  const base = subagents.coder ?? Object.values(subagents)[0] ?? null;
  for (const a of agents) {
    if (Object.hasOwn(subagents, a.name)) {
      log(
        "WARNING",
        "plugins",
        `Plugin agent '${a.name}' (from ${a.plugin}) conflicts with an existing subagent type, ` +
          "skipping",
      );
      continue;
    }
    subagents[a.name] = {
      description: a.description,
      spec: async () => {
        const b = base ? await base.spec() : spec;
        return {
          ...b,
          name: a.name,
          systemPrompt: { template: `\${${AGENT_PROMPT_ARG}}`, source: a.file },
          systemPromptArgs: { ...b.systemPromptArgs, [AGENT_PROMPT_ARG]: a.prompt },
          whenToUse: a.description,
          subagents: {},
          file: a.file,
        };
      },
    };
  }
  return { ...spec, subagents };
}
