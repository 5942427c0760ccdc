/**
 * The session's modes (default / plan / yolo) and models as ACP sees them: the `modes` state,
 * the `mode` and `model` config options, and model ids (`<alias>`, `<alias>,thinking` for
 * thinking-capable models; always-thinking models only as `<alias>,thinking`, reference §12).
 *
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { Config } from "../../config/schema.ts";

/** Mode ids. */
export type ModeId = "default" | "plan" | "yolo";

/** The modes offered to the client. */
export const MODES: readonly acp.SessionMode[] = [
  { id: "default", name: "Default", description: "Ask before editing files or running commands." },
  {
    id: "plan",
    name: "Plan",
    description: "Research and write a plan; no changes until it is approved.",
  },
  { id: "yolo", name: "YOLO", description: "Approve every action automatically." },
];

/** Whether `id` names a mode. */
export function isModeId(id: string): id is ModeId {
  return MODES.some((m) => m.id === id);
}

/** The mode of a session: plan mode wins over yolo. */
export function currentMode(s: { planMode: boolean; yolo: boolean }): ModeId {
  return s.planMode ? "plan" : s.yolo ? "yolo" : "default";
}

/** The config option id of the mode selector. */
export const MODE_OPTION = "mode";
/** The config option id of the model selector. */
export const MODEL_OPTION = "model";

const THINKING_SUFFIX = ",thinking";

/** One selectable model. */
export interface ModelChoice {
  /** The ACP model id (`alias` or `alias,thinking`). */
  id: string;
  /** Config alias. */
  alias: string;
  /** Thinking on. */
  thinking: boolean;
  /** Display name. */
  name: string;
}

/** The models of a config, with their thinking variants. */
export function modelChoices(config: Config): ModelChoice[] {
  const out: ModelChoice[] = [];
  for (const [alias, m] of Object.entries(config.models)) {
    const caps = new Set<string>(m.capabilities ?? []);
    const name = m.display_name ?? (m.model && m.model !== alias ? `${alias} (${m.model})` : alias);
    if (!caps.has("always_thinking")) out.push({ id: alias, alias, thinking: false, name });
    if (caps.has("thinking") || caps.has("always_thinking")) {
      out.push({ id: alias + THINKING_SUFFIX, alias, thinking: true, name: `${name}, thinking` });
    }
  }
  return out;
}

/** The model id of an alias and thinking flag. */
export function modelId(alias: string, thinking: boolean, config: Config): string {
  const choices = modelChoices(config).filter((c) => c.alias === alias);
  return (choices.find((c) => c.thinking === thinking) ?? choices[0])?.id ?? alias;
}

/** Resolve a model id from the client; null when unknown. */
export function parseModelId(id: string, config: Config): ModelChoice | null {
  return modelChoices(config).find((c) => c.id === id) ?? null;
}

/** The session's config options (mode, then model when any model is configured). */
export function configOptions(
  opts: { mode: ModeId; modelId: string; config: Config },
): acp.SessionConfigOption[] {
  const out: acp.SessionConfigOption[] = [{
    type: "select",
    id: MODE_OPTION,
    name: "Mode",
    category: "mode",
    currentValue: opts.mode,
    options: MODES.map((m) => ({ value: m.id, name: m.name, description: m.description })),
  }];
  const models = modelChoices(opts.config);
  if (models.length > 0) {
    out.push({
      type: "select",
      id: MODEL_OPTION,
      name: "Model",
      category: "model",
      currentValue: models.some((m) => m.id === opts.modelId) ? opts.modelId : models[0].id,
      options: models.map((m) => ({ value: m.id, name: m.name })),
    });
  }
  return out;
}
