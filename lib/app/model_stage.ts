/**
 * First stage of the composition root: the model and its provider, and the agent spec. Both
 * load at once (the provider's SDK and the spec's files); nothing here depends on a later stage.
 *
 * @module
 */
import { loadAgentSpec, type ResolvedAgentSpec } from "../agent/spec.ts";
import { type ResolvedModel, resolveModel } from "../config/model_resolution.ts";
import { createLLM } from "../llm/create.ts";
import type { LLM } from "../llm/provider.ts";
import type { ControlPathSet } from "../tooling/control_paths.ts";
import type { KimiAppOptions } from "./app_options.ts";

/** What {@link buildModel} built. */
export interface ModelStage {
  /** The model and provider the config and `--model` resolve to. */
  readonly resolved: ResolvedModel;
  /** Thinking setting of the run (`--thinking`, else the config's default). */
  readonly thinking: boolean;
  /** The model, or null when none is set. */
  readonly llm: LLM | null;
  /** The agent spec. */
  readonly agent: ResolvedAgentSpec;
}

/** What {@link buildModel} needs besides the options. */
export interface ModelStageInputs {
  /** The session's control paths (an agent file may not live in one). */
  controls: ControlPathSet;
}

/** Resolve the model, create its provider and load the agent spec. Model errors come first. */
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
  return { resolved, thinking, llm: llmResult.value, agent: agentResult.value };
}
