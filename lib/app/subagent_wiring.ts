/**
 * Creating the subagent service of a root agent from the app's configuration: model aliases
 * resolve through the config (one LLM per alias, reused), instances live under the session.
 *
 * @module
 */
import type { ResolvedAgentSpec } from "../agent/spec.ts";
import { resolveModel } from "../config/model_resolution.ts";
import type { Config } from "../config/schema.ts";
import { createLLM } from "../llm/create.ts";
import type { LLM } from "../llm/provider.ts";
import type { KimiSoul } from "../soul/soul.ts";
import type { Tool, ToolEnv } from "../tooling/tool.ts";
import { SubagentStore } from "../subagents/instance_store.ts";
import { SubagentManager } from "../subagents/service.ts";

/** Options of {@link createSubagentService}. */
export interface CreateSubagentServiceOptions {
  /** The root soul. */
  parent: KimiSoul;
  /** The root agent's tool environment (read lazily). */
  parentEnv: () => ToolEnv;
  /** The root agent's spec. */
  rootSpec: ResolvedAgentSpec;
  /** The session directory (instances go to `<sessionDir>/subagents`). */
  sessionDir: string;
  /** Session id (prompt cache key of extra LLMs). */
  sessionId: string;
  /** Loaded configuration. */
  config: Config;
  /** Thinking setting of the run. */
  thinking: boolean | null;
  /** Reads the environment. */
  getEnv: (name: string) => string | undefined;
  /** Writes a line to stdout (scripted-echo trace). */
  writeStdout?: (line: string) => void;
  /** Renders a spec's system prompt. */
  renderSystemPrompt: (spec: ResolvedAgentSpec) => Promise<string>;
  /** Loads tools by name for an environment. */
  loadTools: (names: readonly string[], env: ToolEnv) => Promise<Tool[]>;
}

/**
 * The subagent service for a root agent, or undefined when the agent declares no subagent
 * types (the Agent tool then reports that subagents are unavailable).
 */
export function createSubagentService(
  opts: CreateSubagentServiceOptions,
): SubagentManager | undefined {
  if (Object.keys(opts.rootSpec.subagents).length === 0) return undefined;
  const llms = new Map<string, Promise<LLM | null>>();
  const hasModel = (alias: string) => Object.hasOwn(opts.config.models, alias);
  return new SubagentManager({
    parent: opts.parent,
    parentEnv: opts.parentEnv,
    rootSpec: opts.rootSpec,
    store: new SubagentStore(opts.sessionDir),
    hasModel,
    llmForAlias: (alias) => {
      let p = llms.get(alias);
      if (!p) {
        const resolved = resolveModel(opts.config, { modelAlias: alias, getEnv: opts.getEnv });
        p = createLLM(resolved, {
          thinking: opts.thinking,
          sessionId: opts.sessionId,
          getEnv: opts.getEnv,
          writeStdout: opts.writeStdout,
          streamLimits: opts.config.model_stream,
        });
        llms.set(alias, p);
      }
      return p;
    },
    renderSystemPrompt: opts.renderSystemPrompt,
    loadTools: opts.loadTools,
    agentTaskTimeoutS: opts.config.background.agent_task_timeout_s,
    swarmConcurrency: opts.config.swarm.max_concurrency,
  });
}
