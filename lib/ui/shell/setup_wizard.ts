/**
 * `/login` (`/setup`): choose a platform — Kimi Code (sign in with a Kimi account, or an API
 * key), Moonshot (international or China endpoint), OpenAI, Anthropic, Gemini or any
 * OpenAI-compatible URL — enter the key (masked), pick a model from the platform's list (or type
 * one), give its context size when the platform does not say, save to the config file and switch
 * to it. Kimi Code also gets the search and fetch services. An existing provider is never
 * pointed somewhere else: a different endpoint gets its own provider entry.
 *
 * @module
 */
import { defaultConfigPath, loadConfig, saveConfig } from "../../config/load.ts";
import {
  type Config,
  type ModelCapability,
  ModelConfigSchema,
  ProviderConfigSchema,
  type ProviderType,
  ServiceConfigSchema,
} from "../../config/schema.ts";
import { readProcessEnv } from "../../config/share_dir.ts";
import { kimiCodeBaseUrl } from "../../auth/kimi_code.ts";
import type { ShellContext } from "./shell_context.ts";
import { style } from "./theme.ts";
import { select, textInput } from "./widgets.ts";

/** How a platform's models are listed. */
type ListingKind = "openai" | "anthropic" | "gemini";

/** A platform the wizard offers. */
export interface Platform {
  /** Provider key in the config (a suffix is added when that key points elsewhere). */
  id: string;
  /** Its name in sentences (`API key for <name>`, `Saved <name> …`). */
  name: string;
  /** Its line in the platform menu (the name with what to expect). */
  menu: string;
  /** Provider type. */
  type: ProviderType;
  /** API base URL; null = ask the user. */
  baseUrl: string | null;
  /** How to list models. */
  listing: ListingKind;
  /** Only models whose id starts with one of these are offered (Moonshot: `kimi-k`). */
  modelPrefixes?: string[];
  /** Configure `moonshot_search` / `moonshot_fetch` at `<base>/search` and `<base>/fetch`. */
  services?: boolean;
  /** Sign in with the OAuth device login instead of asking for a key. */
  deviceLogin?: boolean;
}

/** The platforms, in menu order. */
export function platforms(getEnv: (k: string) => string | undefined = readProcessEnv): Platform[] {
  const kimiCode = kimiCodeBaseUrl(getEnv);
  return [
    {
      id: "managed:kimi-code",
      name: "Kimi Code",
      menu: "Kimi Code — sign in with your Kimi account",
      type: "kimi",
      baseUrl: kimiCode,
      listing: "openai",
      services: true,
      deviceLogin: true,
    },
    {
      id: "kimi-code",
      name: "Kimi Code",
      menu: "Kimi Code — API key",
      type: "kimi",
      baseUrl: kimiCode,
      listing: "openai",
      services: true,
    },
    {
      id: "moonshot-ai",
      name: "Moonshot AI Open Platform",
      menu: "Moonshot AI Open Platform (api.moonshot.ai)",
      type: "kimi",
      baseUrl: "https://api.moonshot.ai/v1",
      listing: "openai",
      modelPrefixes: ["kimi-k"],
    },
    {
      id: "moonshot-cn",
      name: "Moonshot AI Open Platform, China",
      menu: "Moonshot AI Open Platform, China (api.moonshot.cn)",
      type: "kimi",
      baseUrl: "https://api.moonshot.cn/v1",
      listing: "openai",
      modelPrefixes: ["kimi-k"],
    },
    {
      id: "openai",
      name: "OpenAI",
      menu: "OpenAI (api.openai.com)",
      type: "openai_responses",
      baseUrl: "https://api.openai.com/v1",
      listing: "openai",
    },
    {
      id: "anthropic",
      name: "Anthropic",
      menu: "Anthropic (api.anthropic.com)",
      type: "anthropic",
      baseUrl: "https://api.anthropic.com",
      listing: "anthropic",
    },
    {
      id: "gemini",
      name: "Google Gemini",
      menu: "Google Gemini (generativelanguage.googleapis.com)",
      type: "gemini",
      baseUrl: "https://generativelanguage.googleapis.com",
      listing: "gemini",
    },
    {
      id: "openai-compatible",
      name: "the OpenAI-compatible API",
      menu: "Any OpenAI-compatible API (enter its base URL)",
      type: "openai_legacy",
      baseUrl: null,
      listing: "openai",
    },
  ];
}

/** A model listed by an endpoint. */
export interface ListedModel {
  /** Model id. */
  id: string;
  /** Context length when the endpoint reports one. */
  contextLength: number | null;
  /** Whether the endpoint says the model can reason (Moonshot / Kimi Code lists). */
  supportsReasoning?: boolean;
}

/**
 * Capabilities to record for a model the wizard configures: what the platform's list says, plus
 * what the vendor's model families are known to have (Claude 3.7/4.x and Gemini 2.5/3 think and
 * see images; OpenAI o-series and GPT-5 reason).
 */
export function inferCapabilities(
  type: ProviderType,
  modelId: string,
  supportsReasoning = false,
): ModelCapability[] {
  const id = modelId.toLowerCase();
  const caps = new Set<ModelCapability>();
  if (supportsReasoning) caps.add("thinking");
  if (type === "anthropic" && /claude-(?:3-7|(?:opus|sonnet|haiku)-[4-9]|[4-9])/.test(id)) {
    caps.add("thinking");
    caps.add("image_in");
  }
  if ((type === "gemini" || type === "vertexai") && /gemini-(?:2\.5|[3-9])/.test(id)) {
    caps.add("thinking");
    caps.add("image_in");
    caps.add("video_in");
  }
  if (type === "openai_responses" && /^(?:o\d|gpt-5)/.test(id)) {
    caps.add("thinking");
    caps.add("image_in");
  }
  return [...caps];
}

async function getJson(url: string, headers: Record<string, string>, what: string) {
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(15000) });
  } catch (err) {
    throw new Error(
      `could not reach ${what}: ${
        (err as Error).name === "TimeoutError" ? "timed out" : (err as Error).message
      }`,
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    const hint = res.status === 401 || res.status === 403 ? " (check the API key)" : "";
    throw new Error(`${what} answered HTTP ${res.status}${hint}`);
  }
  return await res.json().catch(() => null) as Record<string, unknown> | null;
}

/** List an endpoint's models; throws an Error naming the cause (never the key). */
export async function fetchModels(
  baseUrl: string,
  apiKey: string,
  listing: ListingKind = "openai",
): Promise<ListedModel[]> {
  const base = baseUrl.replace(/\/+$/, "");
  let out: ListedModel[];
  if (listing === "gemini") {
    const url = `${base}/v1beta/models`;
    const body = await getJson(url, { "x-goog-api-key": apiKey }, url);
    if (!body || !Array.isArray(body.models)) throw new Error(`${url} did not return a model list`);
    out = (body.models as Record<string, unknown>[])
      .filter((m) =>
        typeof m?.name === "string" &&
        (!Array.isArray(m.supportedGenerationMethods) ||
          m.supportedGenerationMethods.includes("generateContent"))
      )
      .map((m) => ({
        id: (m.name as string).replace(/^models\//, ""),
        contextLength: typeof m.inputTokenLimit === "number" ? m.inputTokenLimit : null,
      }));
  } else {
    const url = listing === "anthropic" ? `${base}/v1/models` : `${base}/models`;
    const headers: Record<string, string> = listing === "anthropic"
      ? { "x-api-key": apiKey, "anthropic-version": "2023-06-01" }
      : { authorization: `Bearer ${apiKey}` };
    const body = await getJson(url, headers, url);
    if (!body || !Array.isArray(body.data)) throw new Error(`${url} did not return a model list`);
    out = (body.data as Record<string, unknown>[])
      .filter((m) => !!m && typeof m.id === "string")
      .map((m) => ({
        id: m.id as string,
        contextLength: typeof m.context_length === "number"
          ? m.context_length
          : typeof m.max_input_tokens === "number"
          ? m.max_input_tokens
          : null,
        supportsReasoning: m.supports_reasoning === true,
      }));
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * The provider key to write for `platform` at `baseUrl`: the platform's own key when it is free
 * or already points at this endpoint (same type and URL), else the first free `<id>-<n>`.
 */
export function providerKeyFor(
  config: Config,
  platform: Pick<Platform, "id" | "type">,
  baseUrl: string,
): string {
  const same = (key: string) => {
    const p = config.providers[key];
    return p.type === platform.type &&
      p.base_url.replace(/\/+$/, "") === baseUrl.replace(/\/+$/, "");
  };
  if (!Object.hasOwn(config.providers, platform.id) || same(platform.id)) return platform.id;
  for (let n = 2;; n++) {
    const key = `${platform.id}-${n}`;
    if (!Object.hasOwn(config.providers, key) || same(key)) return key;
  }
}

/** The model alias: the model id, unless another provider already uses that alias. */
export function modelAliasFor(config: Config, providerKey: string, modelId: string): string {
  const existing = config.models[modelId];
  if (!existing || existing.provider === providerKey) return modelId;
  return `${providerKey}/${modelId}`;
}

async function askBaseUrl(ctx: ShellContext): Promise<string | null> {
  let note: string[] = [];
  while (true) {
    const entered = await textInput(ctx.term, {
      title: [
        style.bold("Base URL of the OpenAI-compatible API (e.g. http://localhost:8000/v1)"),
        ...note,
      ],
      label: "URL: ",
    });
    if (entered === null) return null;
    const url = entered.trim();
    try {
      const parsed = new URL(url);
      if ((parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.host) {
        return url.replace(/\/+$/, "");
      }
    } catch {
      // asked again below
    }
    note = [style.error(`"${url}" is not an http(s) URL. Enter a URL such as https://host/v1.`)];
  }
}

async function askContextSize(ctx: ShellContext, modelId: string): Promise<number | null> {
  let note: string[] = [];
  while (true) {
    const entered = await textInput(ctx.term, {
      title: [
        style.bold(`Context window of ${modelId} in tokens (the platform does not report it)`),
        style.dim("See the model's documentation, e.g. 131072 or 200000."),
        ...note,
      ],
      label: "Tokens: ",
    });
    if (entered === null) return null;
    const text = entered.trim().replaceAll(/[_,\s]/g, "").toLowerCase();
    const m = /^(\d+)(k)?$/.exec(text);
    const value = m ? Number(m[1]) * (m[2] ? 1024 : 1) : NaN;
    if (Number.isSafeInteger(value) && value >= 1000) return value;
    note = [style.error(`"${entered.trim()}" is not a token count of at least 1000.`)];
  }
}

/** Run the wizard; resolves true when a model was configured. */
export async function runSetup(ctx: ShellContext): Promise<boolean> {
  const term = ctx.term;
  const list = platforms();
  const picked = await select(term, {
    title: [style.bold("Select a platform")],
    options: list.map((p) => ({ label: p.menu })),
  });
  if (picked === null) return cancelled(ctx);
  const platform = list[picked[0]];
  if (platform.deviceLogin) return await runDeviceLogin(ctx);

  const baseUrl = platform.baseUrl ?? await askBaseUrl(ctx);
  if (baseUrl === null) return cancelled(ctx);
  const key = await textInput(term, {
    title: [style.bold(`API key for ${platform.name}`)],
    label: "Key: ",
    mask: true,
  });
  if (key === null) return cancelled(ctx);
  const apiKey = key.trim();
  if (!apiKey && platform.baseUrl !== null) {
    ctx.print(style.error("An API key is required. Run /login again."));
    return false;
  }

  let models: ListedModel[] = [];
  ctx.print(style.dim(`Fetching the model list from ${baseUrl} …`));
  try {
    models = await fetchModels(baseUrl, apiKey, platform.listing);
    const prefixes = platform.modelPrefixes;
    if (prefixes) models = models.filter((m) => prefixes.some((p) => m.id.startsWith(p)));
  } catch (err) {
    ctx.print(
      style.warn(`Could not list models: ${(err as Error).message}. Type the model id instead.`),
    );
  }
  let modelId: string | null = null;
  let contextLength: number | null = null;
  let supportsReasoning = false;
  if (models.length > 0) {
    const choice = await select(term, {
      title: [style.bold("Select a model")],
      options: [
        ...models.map((m) => ({
          label: m.id,
          hint: m.contextLength ? `${m.contextLength} tokens` : undefined,
        })),
        { label: "Type a model id…" },
      ],
    });
    if (choice === null) return cancelled(ctx);
    if (choice[0] < models.length) {
      modelId = models[choice[0]].id;
      contextLength = models[choice[0]].contextLength;
      supportsReasoning = models[choice[0]].supportsReasoning ?? false;
    }
  }
  if (modelId === null) {
    const typed = await textInput(term, { title: [style.bold("Model id")], label: "Model: " });
    if (typed === null || !typed.trim()) return cancelled(ctx);
    modelId = typed.trim();
  }
  if (!contextLength) {
    contextLength = await askContextSize(ctx, modelId);
    if (contextLength === null) return cancelled(ctx);
  }

  const config: Config = structuredClone(ctx.app.config);
  const providerKey = providerKeyFor(config, platform, baseUrl);
  if (providerKey !== platform.id) {
    ctx.print(
      style.dim(
        `Provider "${platform.id}" points at another endpoint; adding this one as "${providerKey}".`,
      ),
    );
  }
  const previous = config.providers[providerKey];
  config.providers[providerKey] = ProviderConfigSchema.parse({
    ...(previous ?? {}),
    type: platform.type,
    base_url: baseUrl,
    api_key: apiKey,
  });
  const alias = modelAliasFor(config, providerKey, modelId);
  const caps = inferCapabilities(platform.type, modelId, supportsReasoning);
  config.models[alias] = ModelConfigSchema.parse({
    provider: providerKey,
    model: modelId,
    max_context_size: contextLength,
    ...(caps.length ? { capabilities: caps } : {}),
  });
  config.default_model = alias;
  if (platform.services) {
    config.services.moonshot_search = ServiceConfigSchema.parse({
      base_url: `${baseUrl}/search`,
      api_key: apiKey,
    });
    config.services.moonshot_fetch = ServiceConfigSchema.parse({
      base_url: `${baseUrl}/fetch`,
      api_key: apiKey,
    });
  }
  if (ctx.configPath) {
    await saveConfig(config, ctx.configPath);
    ctx.print(style.ok(`✓ Saved ${platform.name} with model ${modelId} to ${ctx.configPath}`));
  } else {
    ctx.print(
      style.warn(`Using ${modelId} for this run only (the config came from --config text).`),
    );
  }
  await ctx.replaceApp({ config, modelAlias: alias });
  return true;
}

/** `/login` → Kimi Code account: the device flow, then reload the config it wrote. */
export async function runDeviceLogin(ctx: ShellContext): Promise<boolean> {
  return await runAuthFlow(ctx, "login");
}

/** `/logout`: forget the Kimi Code login and reload the config. */
export async function runLogout(ctx: ShellContext): Promise<boolean> {
  return await runAuthFlow(ctx, "logout");
}

async function runAuthFlow(ctx: ShellContext, which: "login" | "logout"): Promise<boolean> {
  const { loginKimiCode, logoutKimiCode } = await import("../../auth/login.ts");
  const shareDir = ctx.app.session.shareDir;
  const opts = {
    shareDir,
    config: ctx.app.config,
    configPath: ctx.configPath,
    defaultConfigPath: defaultConfigPath(shareDir),
    getEnv: readProcessEnv,
  };
  // Esc or Ctrl-C stops waiting for the browser
  const ac = new AbortController();
  if (which === "login") {
    ctx.print(style.dim("Waiting for the sign-in in your browser (Esc to cancel)…"));
    ctx.term.setHandler((key) => {
      if (key.name === "escape" || key.name === "ctrl-c") ac.abort();
    });
  }
  let ok = true;
  try {
    for await (
      const e of which === "login"
        ? loginKimiCode({ ...opts, signal: ac.signal })
        : logoutKimiCode(opts)
    ) {
      if (e.type === "error") {
        ok = false;
        ctx.print(style.error(e.message));
      } else if (e.type === "verification_url") {
        ctx.print(style.bold(e.message));
        ctx.print(`User code: ${style.bold(String(e.data?.user_code ?? ""))}`);
      } else if (e.type === "success") ctx.print(style.ok(`✓ ${e.message}`));
      else ctx.print(style.dim(e.message));
    }
  } finally {
    if (which === "login") ctx.term.setHandler(null);
  }
  if (!ok) return false;
  const { config } = await loadConfig({ shareDir, configFile: ctx.configPath ?? undefined });
  await ctx.replaceApp({ config, modelAlias: config.default_model || undefined });
  return true;
}

function cancelled(ctx: ShellContext): boolean {
  ctx.print(style.dim("Setup cancelled. Run /login at any time."));
  return false;
}
