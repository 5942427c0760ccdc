/**
 * Picks the model and provider a run uses (`--model`, `default_model` or the placeholder),
 * applies the environment overrides and derives capabilities and generation settings.
 * Pure: the environment comes in through `getEnv`, nothing is read or written.
 *
 * @module
 */
import { ConfigError } from "./errors.ts";
import type {
  Config,
  ModelCapability,
  ModelConfig,
  ProviderConfig,
  ProviderType,
} from "./schema.ts";

/** Options of {@linkcode resolveModel}. */
export interface ResolveModelOptions {
  /** `--model`: a key of `models`. An unknown alias yields the placeholder (no fallback). */
  modelAlias?: string;
  /** Reads one environment variable. */
  getEnv: (key: string) => string | undefined;
}

/** Extra generation settings sent with each request (Kimi providers only). */
export interface GenerationKwargs {
  /** `KIMI_MODEL_TEMPERATURE`. */
  temperature?: number;
  /** `KIMI_MODEL_TOP_P`. */
  top_p?: number;
  /** `KIMI_MODEL_THINKING_KEEP`: sent verbatim as `thinking.keep` when thinking is on. */
  thinking_keep?: string;
}

/** The outcome of model resolution. */
export interface ResolvedModel {
  /** Config alias of the model, or `""` for the placeholder. */
  alias: string;
  /** The model, with environment overrides applied (a copy; the config is untouched). */
  model: ModelConfig;
  /** The provider, with environment overrides applied (a copy; the config is untouched). */
  provider: ProviderConfig;
  /** Configured (or env-overridden) capabilities plus those derived from the model id. */
  capabilities: ReadonlySet<ModelCapability>;
  /** Generation settings from the environment (empty unless the provider type is `kimi`). */
  generationKwargs: GenerationKwargs;
  /**
   * Completion-token hard cap from `KIMI_MODEL_MAX_COMPLETION_TOKENS` (or its alias
   * `KIMI_MODEL_MAX_TOKENS`), `kimi` providers only: `null` when unset (the budget is bounded
   * by the context size), a positive cap, or `0` when the variable is ≤ 0 (clamping disabled).
   */
  completionTokenCap: number | null;
  /**
   * Environment variables that were applied, for logging. The API key value is masked.
   */
  envOverrides: Readonly<Record<string, string>>;
}

/** Provider types that need no base URL or model id. */
const ECHO_TYPES: ReadonlySet<ProviderType> = new Set(["_echo", "_scripted_echo"]);
const ALL_CAPABILITIES: readonly ModelCapability[] = [
  "image_in",
  "video_in",
  "thinking",
  "always_thinking",
];

/**
 * Resolve the model for a run (§2.3 items 1, 2 and 5).
 *
 * @throws {ConfigError} when a numeric environment override is not a number.
 */
export function resolveModel(config: Config, opts: ResolveModelOptions): ResolvedModel {
  const name = opts.modelAlias ? opts.modelAlias : config.default_model;
  const configured = name ? lookup(config, name) : null;
  const alias = configured ? name : "";
  const m: ModelConfig = configured?.model ?? {
    provider: "",
    model: "",
    max_context_size: 100000,
    capabilities: null,
    display_name: null,
  };
  const p: ProviderConfig = configured?.provider ?? {
    type: "kimi",
    base_url: "",
    api_key: "",
    env: null,
    custom_headers: null,
    reasoning_key: null,
    oauth: null,
  };

  const env = (key: string): string | undefined => {
    const v = opts.getEnv(key);
    return v ? v : undefined; // empty means unset
  };
  const applied: Record<string, string> = {};
  const generationKwargs: GenerationKwargs = {};
  let completionTokenCap: number | null = null;
  if (!configured && !env("KIMI_BASE_URL") && env("OPENAI_BASE_URL")) {
    // no model configured: OPENAI_BASE_URL and OPENAI_API_KEY alone name an OpenAI-compatible
    // server (the model id from OPENAI_MODEL or KIMI_MODEL_NAME, else the server's first model,
    // which the caller looks up into OPENAI_MODEL)
    p.type = "openai_legacy";
    const id = env("OPENAI_MODEL") ?? env("KIMI_MODEL_NAME");
    if (id) {
      m.model = id;
      applied.OPENAI_MODEL = id;
    }
  }

  if (p.type === "kimi") {
    const baseUrl = env("KIMI_BASE_URL");
    if (baseUrl) {
      p.base_url = baseUrl;
      applied.KIMI_BASE_URL = baseUrl;
    }
    const apiKey = env("KIMI_API_KEY");
    if (apiKey) {
      p.api_key = apiKey;
      applied.KIMI_API_KEY = "******";
    }
    const modelName = env("KIMI_MODEL_NAME");
    if (modelName) {
      m.model = modelName;
      applied.KIMI_MODEL_NAME = modelName;
    }
    const maxContext = env("KIMI_MODEL_MAX_CONTEXT_SIZE");
    if (maxContext) {
      m.max_context_size = parseIntEnv("KIMI_MODEL_MAX_CONTEXT_SIZE", maxContext);
      applied.KIMI_MODEL_MAX_CONTEXT_SIZE = maxContext;
    }
    const caps = env("KIMI_MODEL_CAPABILITIES");
    if (caps) {
      m.capabilities = parseCapabilities(caps);
      applied.KIMI_MODEL_CAPABILITIES = caps;
    }
    const temperature = env("KIMI_MODEL_TEMPERATURE");
    if (temperature) {
      generationKwargs.temperature = parseFloatEnv("KIMI_MODEL_TEMPERATURE", temperature);
      applied.KIMI_MODEL_TEMPERATURE = temperature;
    }
    const topP = env("KIMI_MODEL_TOP_P");
    if (topP) {
      generationKwargs.top_p = parseFloatEnv("KIMI_MODEL_TOP_P", topP);
      applied.KIMI_MODEL_TOP_P = topP;
    }
    for (const key of ["KIMI_MODEL_MAX_COMPLETION_TOKENS", "KIMI_MODEL_MAX_TOKENS"]) {
      const raw = env(key);
      if (!raw) continue;
      completionTokenCap = Math.max(0, parseIntEnv(key, raw));
      applied[key] = raw;
      break;
    }
    const keep = env("KIMI_MODEL_THINKING_KEEP");
    if (keep) {
      generationKwargs.thinking_keep = keep;
      applied.KIMI_MODEL_THINKING_KEEP = keep;
    }
  } else if (p.type === "openai_legacy" || p.type === "openai_responses") {
    const baseUrl = env("OPENAI_BASE_URL");
    if (baseUrl) {
      p.base_url = baseUrl;
      applied.OPENAI_BASE_URL = baseUrl;
    }
    const apiKey = env("OPENAI_API_KEY");
    if (apiKey) {
      p.api_key = apiKey;
      applied.OPENAI_API_KEY = "******";
    }
  }

  return {
    alias,
    model: m,
    provider: p,
    capabilities: deriveCapabilities(m),
    generationKwargs,
    completionTokenCap,
    envOverrides: applied,
  };
}

/**
 * Capabilities of a model: the configured ones, plus `thinking` and `always_thinking` when the
 * model id contains "thinking" or "reason" (any case), else `thinking`, `image_in` and
 * `video_in` for `kimi-for-coding` / `kimi-code`.
 */
export function deriveCapabilities(model: ModelConfig): Set<ModelCapability> {
  const caps = new Set<ModelCapability>(model.capabilities ?? []);
  const id = model.model.toLowerCase();
  if (id.includes("thinking") || id.includes("reason")) {
    caps.add("thinking");
    caps.add("always_thinking");
  } else if (model.model === "kimi-for-coding" || model.model === "kimi-code") {
    caps.add("thinking");
    caps.add("image_in");
    caps.add("video_in");
  }
  return caps;
}

/**
 * Whether the resolved model can be used: echo providers always, others only with a base URL
 * and a model id (otherwise the LLM is "not set").
 */
export function isModelUsable(resolved: Pick<ResolvedModel, "model" | "provider">): boolean {
  if (ECHO_TYPES.has(resolved.provider.type)) return true;
  return resolved.provider.base_url !== "" && resolved.model.model !== "";
}

/** Copies of the model and provider named by `alias`, or `null` when either is missing. */
function lookup(
  config: Config,
  alias: string,
): { model: ModelConfig; provider: ProviderConfig } | null {
  if (!Object.hasOwn(config.models, alias)) return null;
  const model = config.models[alias];
  if (!Object.hasOwn(config.providers, model.provider)) return null;
  return {
    model: structuredClone(model),
    provider: structuredClone(config.providers[model.provider]),
  };
}

function parseCapabilities(raw: string): ModelCapability[] {
  const out: ModelCapability[] = [];
  for (const piece of raw.split(",")) {
    const cap = piece.trim().toLowerCase();
    if ((ALL_CAPABILITIES as readonly string[]).includes(cap) && !out.includes(cap as never)) {
      out.push(cap as ModelCapability);
    }
  }
  return out;
}

function parseIntEnv(name: string, raw: string): number {
  const text = raw.trim().replaceAll("_", "");
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new ConfigError(
      `Invalid ${name} value ${JSON.stringify(raw)}: expected an integer. ` +
        `Fix or unset the ${name} environment variable.`,
    );
  }
  return Number(text);
}

function parseFloatEnv(name: string, raw: string): number {
  const text = raw.trim();
  const value = Number(text);
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text) || !Number.isFinite(value)) {
    throw new ConfigError(
      `Invalid ${name} value ${JSON.stringify(raw)}: expected a number. ` +
        `Fix or unset the ${name} environment variable.`,
    );
  }
  return value;
}

/** What {@link explainModelNotSet} needs to know about the run. */
export interface ModelProblemContext {
  /** `--model`, if given. */
  modelAlias?: string;
  /** Environment reader. */
  getEnv: (key: string) => string | undefined;
  /** The config file in use, for the fix (null for `--config` text). */
  configPath: string | null;
}

/**
 * Why no model can be used for a run, and the fix: an unknown `--model` alias (listing the
 * configured ones), a default model that names a missing model or provider, no models at
 * all, or an environment variable set without its partner. Returns null when the model is
 * usable.
 */
export function explainModelNotSet(config: Config, ctx: ModelProblemContext): string | null {
  const env = (k: string) => ctx.getEnv(k) || undefined;
  let resolved: ResolvedModel;
  try {
    resolved = resolveModel(config, { modelAlias: ctx.modelAlias, getEnv: ctx.getEnv });
  } catch (err) {
    return (err as Error).message;
  }
  if (isModelUsable(resolved)) return null;
  const where = ctx.configPath ?? "the --config text";
  const names = Object.keys(config.models);
  const listed = names.length > 0
    ? `the models there are: ${names.join(", ")}`
    : "it has no models";
  const alias = ctx.modelAlias || config.default_model;
  const pairs: [string, string][] = [["KIMI_BASE_URL", "KIMI_MODEL_NAME"], [
    "KIMI_MODEL_NAME",
    "KIMI_BASE_URL",
  ], ["OPENAI_API_KEY", "OPENAI_BASE_URL"]];
  const half = pairs.find(([set, missing]) => env(set) && !env(missing));
  const envHint = half
    ? ` ${half[0]} is set but ${half[1]} is not: set both to use a model from the environment.`
    : "";
  if (alias && !Object.hasOwn(config.models, alias)) {
    const flag = ctx.modelAlias ? `--model ${alias}` : `default_model "${alias}"`;
    return `${flag} names no model in ${where} (${listed}). ` +
      `Pick one with --model, add [models.${alias}] to the config, or run /setup.${envHint}`;
  }
  if (alias) {
    const provider = config.models[alias].provider;
    if (!Object.hasOwn(config.providers, provider)) {
      return `Model "${alias}" uses provider "${provider}", which ${where} does not define. ` +
        `Add [providers.${provider}] (type, base_url, api_key) or run /setup.${envHint}`;
    }
    const missing = resolved.provider.base_url === "" ? "base_url" : "model";
    return `Model "${alias}" has no ${missing} in ${where}: set it, or run /setup.${envHint}`;
  }
  if (names.length > 0) {
    return `No default model: set default_model in ${where} (${listed}), or pass --model.` +
      envHint;
  }
  return `No model is configured yet (${where} has none). Run /setup in the shell, or set ` +
    `KIMI_BASE_URL, KIMI_API_KEY and KIMI_MODEL_NAME (or OPENAI_BASE_URL and OPENAI_API_KEY).` +
    envHint;
}
