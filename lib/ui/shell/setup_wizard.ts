/**
 * `/setup` (`/login`): choose a platform, enter the API key (masked), pick a model from the
 * endpoint's `/models` list (or type one), save to the config file and switch to it.
 *
 * @module
 */
import { saveConfig } from "../../config/load.ts";
import {
  type Config,
  ModelConfigSchema,
  ProviderConfigSchema,
  type ProviderType,
} from "../../config/schema.ts";
import type { ShellContext } from "./shell_context.ts";
import { style } from "./theme.ts";
import { select, textInput } from "./widgets.ts";

/** A platform the wizard offers. */
export interface Platform {
  /** Provider key in the config. */
  id: string;
  /** Shown name. */
  name: string;
  /** Provider type. */
  type: ProviderType;
  /** API base URL; null = ask the user. */
  baseUrl: string | null;
  /** Context size assumed when `/models` does not say. */
  defaultContext: number;
}

/** The platforms, in menu order. */
export const PLATFORMS: readonly Platform[] = [
  {
    id: "moonshot",
    name: "Moonshot AI Open Platform (api.moonshot.ai)",
    type: "kimi",
    baseUrl: "https://api.moonshot.ai/v1",
    defaultContext: 262144,
  },
  {
    id: "kimi-code",
    name: "Kimi Code (api.kimi.com)",
    type: "kimi",
    baseUrl: "https://api.kimi.com/coding/v1",
    defaultContext: 262144,
  },
  {
    id: "openai",
    name: "OpenAI (api.openai.com)",
    type: "openai_responses",
    baseUrl: "https://api.openai.com/v1",
    defaultContext: 128000,
  },
  {
    id: "openai-compatible",
    name: "Any OpenAI-compatible API (enter its base URL)",
    type: "openai_legacy",
    baseUrl: null,
    defaultContext: 128000,
  },
];

/** A model listed by an endpoint. */
export interface ListedModel {
  /** Model id. */
  id: string;
  /** Context length when the endpoint reports one. */
  contextLength: number | null;
}

/** Fetch `<baseUrl>/models`; throws an Error naming the cause (never the key). */
export async function fetchModels(baseUrl: string, apiKey: string): Promise<ListedModel[]> {
  const url = baseUrl.replace(/\/+$/, "") + "/models";
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(15000),
    });
  } catch (err) {
    throw new Error(
      `could not reach ${url}: ${
        (err as Error).name === "TimeoutError" ? "timed out" : (err as Error).message
      }`,
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    const hint = res.status === 401 || res.status === 403 ? " (check the API key)" : "";
    throw new Error(`${url} answered HTTP ${res.status}${hint}`);
  }
  const body = await res.json().catch(() => null) as { data?: unknown } | null;
  if (!body || !Array.isArray(body.data)) throw new Error(`${url} did not return a model list`);
  return body.data
    .filter((m): m is Record<string, unknown> =>
      !!m && typeof (m as { id?: unknown }).id === "string"
    )
    .map((m) => ({
      id: m.id as string,
      contextLength: typeof m.context_length === "number" ? m.context_length : null,
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/** Run the wizard; resolves true when a model was configured. */
export async function runSetup(ctx: ShellContext): Promise<boolean> {
  const term = ctx.term;
  const picked = await select(term, {
    title: [style.bold("Select a platform")],
    options: PLATFORMS.map((p) => ({ label: p.name })),
  });
  if (picked === null) return cancelled(ctx);
  const platform = PLATFORMS[picked[0]];
  let baseUrl = platform.baseUrl;
  if (baseUrl === null) {
    const entered = await textInput(term, {
      title: [style.bold("Base URL of the OpenAI-compatible API (e.g. http://localhost:8000/v1)")],
      label: "URL: ",
    });
    if (entered === null) return cancelled(ctx);
    baseUrl = entered.trim();
    if (!/^https?:\/\/\S+$/.test(baseUrl)) {
      ctx.print(style.error(`"${baseUrl}" is not an http(s) URL. Run /setup again.`));
      return false;
    }
  }
  const key = await textInput(term, {
    title: [style.bold(`API key for ${platform.name}`)],
    label: "Key: ",
    mask: true,
  });
  if (key === null) return cancelled(ctx);
  const apiKey = key.trim();
  if (!apiKey) {
    ctx.print(style.error("An API key is required. Run /setup again."));
    return false;
  }

  let models: ListedModel[] = [];
  ctx.print(style.dim(`Fetching the model list from ${baseUrl} …`));
  try {
    models = await fetchModels(baseUrl, apiKey);
  } catch (err) {
    ctx.print(
      style.warn(`Could not list models: ${(err as Error).message}. Type the model id instead.`),
    );
  }
  let modelId: string | null = null;
  let contextLength: number | null = null;
  if (models.length > 0) {
    const choice = await select(term, {
      title: [style.bold("Select a model")],
      options: [...models.map((m) => ({ label: m.id })), { label: "Type a model id…" }],
    });
    if (choice === null) return cancelled(ctx);
    if (choice[0] < models.length) {
      modelId = models[choice[0]].id;
      contextLength = models[choice[0]].contextLength;
    }
  }
  if (modelId === null) {
    const typed = await textInput(term, { title: [style.bold("Model id")], label: "Model: " });
    if (typed === null || !typed.trim()) return cancelled(ctx);
    modelId = typed.trim();
  }

  const config: Config = structuredClone(ctx.app.config);
  config.providers[platform.id] = ProviderConfigSchema.parse({
    type: platform.type,
    base_url: baseUrl,
    api_key: apiKey,
  });
  config.models[modelId] = ModelConfigSchema.parse({
    provider: platform.id,
    model: modelId,
    max_context_size: contextLength ?? platform.defaultContext,
  });
  config.default_model = modelId;
  if (ctx.configPath) {
    await saveConfig(config, ctx.configPath);
    ctx.print(style.ok(`✓ Saved ${platform.name} with model ${modelId} to ${ctx.configPath}`));
  } else {
    ctx.print(
      style.warn(`Using ${modelId} for this run only (the config came from --config text).`),
    );
  }
  await ctx.replaceApp({ config, modelAlias: modelId });
  return true;
}

function cancelled(ctx: ShellContext): boolean {
  ctx.print(style.dim("Setup cancelled. Run /setup at any time."));
  return false;
}
