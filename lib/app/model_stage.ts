/**
 * First stage of the composition root: the model and its provider, the agent spec (both load at
 * once: the provider's SDK and the spec's files) and the installed plugins, which add tools,
 * subagent types, skills, MCP servers and prompt text to the agent. Nothing here depends on a
 * later stage.
 *
 * @module
 */
import { agentControlPaths, loadAgentSpec, type ResolvedAgentSpec } from "../agent/spec.ts";
import { type ResolvedModel, resolveModel } from "../config/model_resolution.ts";
import { createLLM } from "../llm/create.ts";
import type { LLM } from "../llm/provider.ts";
import type { ControlPathSet } from "../tooling/control_paths.ts";
import type { KimiAppOptions } from "./app_options.ts";
import { oauthAccessToken } from "./oauth_token.ts";
import { type LoadedPlugins, loadPlugins, withPluginAgents } from "./plugin_loading.ts";

/** Environment variable overriding the 120 s timeout of plugin tool calls (seconds). */
export const PLUGIN_TIMEOUT_ENV = "KIMI_PLUGIN_TOOL_TIMEOUT_S";

/** What {@link buildModel} built. */
export interface ModelStage {
  /** The model and provider the config and `--model` resolve to. */
  readonly resolved: ResolvedModel;
  /** Thinking setting of the run (`--thinking`, else the config's default). */
  readonly thinking: boolean;
  /** The model, or null when none is set. */
  readonly llm: LLM | null;
  /** The agent spec, with the subagent types of enabled plugin bundles. */
  readonly agent: ResolvedAgentSpec;
  /** The installed plugins (their tools, and what enabled bundles bring). */
  readonly plugins: LoadedPlugins;
}

/** What {@link buildModel} needs besides the options. */
export interface ModelStageInputs {
  /**
   * The session's control paths: an agent file may not live in one; the agent's own files and
   * the plugins' config files are registered in it.
   */
  controls: ControlPathSet;
}

/**
 * Resolve the model, create its provider, load the agent spec (model errors first) and the
 * installed plugins.
 */
export async function buildModel(
  opts: KimiAppOptions,
  inputs: ModelStageInputs,
): Promise<ModelStage> {
  const { config, session } = opts;
  const resolved = resolveModel(config, { modelAlias: opts.modelAlias, getEnv: opts.getEnv });
  const thinking = opts.thinking ?? config.default_thinking;
  // The provider (e.g. the OpenAI SDK) and the agent spec load at once. Errors keep their
  // order: model first.
  const [llmResult, agentResult] = await Promise.allSettled([
    createLLM(resolved, {
      thinking,
      sessionId: session.id,
      getEnv: opts.getEnv,
      writeStdout: opts.writeStdout,
      streamLimits: config.model_stream,
      shareDir: session.shareDir,
    }),
    loadAgentSpec(opts.agent, inputs.controls.list()),
  ]);
  if (llmResult.status === "rejected") throw llmResult.reason;
  if (agentResult.status === "rejected") throw agentResult.reason;
  const spec = agentResult.value;
  inputs.controls.register("agent", agentControlPaths(spec));

  // Installed plugins: tools (after the agent's own), and what enabled bundles bring.
  const pluginTimeout = Number(opts.getEnv(PLUGIN_TIMEOUT_ENV) ?? "");
  const plugins = await loadPlugins({
    shareDir: session.shareDir,
    controls: inputs.controls,
    timeoutMs: pluginTimeout > 0 ? pluginTimeout * 1000 : undefined,
    hostValues: async () => {
      const p = resolved.provider;
      const apiKey = p.oauth
        ? await oauthAccessToken(session.shareDir, p.oauth.key, opts.getEnv)().catch(() => "")
        : p.api_key;
      return {
        ...(apiKey ? { api_key: apiKey } : {}),
        ...(p.base_url ? { base_url: p.base_url } : {}),
      };
    },
  });
  for (const line of plugins.problems) opts.reportPlugins?.(line);
  const agent = withPluginAgents(spec, plugins.bundles.agents);
  return { resolved, thinking, llm: llmResult.value, agent, plugins };
}
