/**
 * `kimi login` / `kimi logout` for Kimi Code (reference §1.2): the OAuth device flow, then the
 * managed provider `managed:kimi-code`, its models `kimi-code/<id>`, the default model and the
 * search/fetch services written to the config file; logout removes all of it and the tokens.
 * Both report progress as {@link OAuthEvent}s (JSON lines with `--json`).
 *
 * @module
 */
import { loadConfig, saveConfig } from "../config/load.ts";
import {
  type Config,
  type ModelCapability,
  ModelConfigSchema,
  type OAuthRef,
  ProviderConfigSchema,
  ServiceConfigSchema,
} from "../config/schema.ts";
import type { EnvReader } from "../config/share_dir.ts";
import { log } from "../log.ts";
import {
  credentialsDir,
  credentialsPath,
  deleteToken,
  loadToken,
  saveToken,
  type StoredToken,
} from "./credentials.ts";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { join } from "node:path";
import { commonHeaders } from "./device.ts";
import { tokenManagerFor } from "./token_manager.ts";
import {
  KIMI_CODE_OAUTH_KEY,
  KIMI_CODE_PROVIDER_KEY,
  kimiCodeBaseUrl,
  managedModelKey,
  oauthHost,
} from "./kimi_code.ts";
import {
  DeviceExpired,
  type OAuthEndpoint,
  pollDeviceToken,
  requestDeviceAuthorization,
} from "./oauth_http.ts";

/**
 * Context size recorded for a listed model whose size the API does not report (Kimi Code's
 * models have 256 Ki tokens).
 */
const UNKNOWN_CONTEXT_FALLBACK = 262144;

/** Kinds of login/logout events (the reference's). */
export type OAuthEventType = "info" | "error" | "waiting" | "verification_url" | "success";

/** One progress event of login or logout. */
export interface OAuthEvent {
  /** Kind. */
  type: OAuthEventType;
  /** Human-readable text. */
  message: string;
  /** Machine-readable details, when any. */
  data?: Record<string, unknown>;
}

/** The JSON line of an event (`{type, message, data?}`). */
export function eventJson(e: OAuthEvent): string {
  return JSON.stringify(
    e.data === undefined
      ? { type: e.type, message: e.message }
      : { type: e.type, message: e.message, data: e.data },
  );
}

/** Options of {@link loginKimiCode} and {@link logoutKimiCode}. */
export interface AuthFlowOptions {
  /** Share dir (credentials, device id). */
  shareDir: string;
  /** The loaded config. */
  config: Config;
  /** Where it was loaded from; null when it came from `--config` text. */
  configPath: string | null;
  /** The default config file; login and logout only edit that one. */
  defaultConfigPath: string;
  /** Environment (host overrides). */
  getEnv: EnvReader;
  /** Called with the verification URL (e.g. to open a browser). */
  openUrl?: (url: string) => void;
  /** Sleep (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Stops polling. */
  signal?: AbortSignal;
  /** Fetch (tests). */
  fetch?: typeof fetch;
}

/** A model listed by the Kimi Code API. */
export interface PlatformModel {
  /** Model id. */
  id: string;
  /** Context window (0 when unknown). */
  contextLength: number;
  /** Whether it can think. */
  supportsReasoning: boolean;
  /** Whether it takes images (`supports_image_in`). */
  supportsImageIn?: boolean;
  /** Whether it takes videos (`supports_video_in`). */
  supportsVideoIn?: boolean;
  /** Display name, when given. */
  displayName: string | null;
}

/**
 * Capabilities of a listed model, for every model id: what the list says it supports
 * (`supports_reasoning`, `supports_image_in`, `supports_video_in`), plus `thinking` and
 * `always_thinking` for a "thinking" model.
 */
export function platformModelCapabilities(m: PlatformModel): ModelCapability[] {
  const caps = new Set<ModelCapability>();
  if (m.supportsReasoning) caps.add("thinking");
  if (m.supportsImageIn) caps.add("image_in");
  if (m.supportsVideoIn) caps.add("video_in");
  if (m.id.toLowerCase().includes("thinking")) {
    caps.add("thinking");
    caps.add("always_thinking");
  }
  return [...caps];
}

/** List the models of a Kimi Code API with a bearer token; throws an Error naming the cause. */
export async function listPlatformModels(
  baseUrl: string,
  token: string,
  headers: Record<string, string>,
  fetchImpl: typeof fetch = fetch,
): Promise<PlatformModel[]> {
  const url = `${baseUrl}/models`;
  let res: Response;
  try {
    res = await fetchImpl(url, {
      headers: { ...headers, Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new Error(`cannot reach ${url}: ${(err as Error)?.message ?? err}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${url} answered HTTP ${res.status}`);
  }
  const body = await res.json().catch(() => null) as { data?: unknown } | null;
  if (!body || !Array.isArray(body.data)) throw new Error(`Unexpected models response for ${url}`);
  const out: PlatformModel[] = [];
  for (const item of body.data as Record<string, unknown>[]) {
    if (!item || typeof item.id !== "string" || !item.id) continue;
    out.push({
      id: item.id,
      contextLength: Number(item.context_length) || 0,
      supportsReasoning: Boolean(item.supports_reasoning),
      supportsImageIn: Boolean(item.supports_image_in),
      supportsVideoIn: Boolean(item.supports_video_in),
      displayName: typeof item.display_name === "string" ? item.display_name : null,
    });
  }
  return out;
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });

function configGuard(opts: AuthFlowOptions, what: "Login" | "Logout"): OAuthEvent | null {
  if (opts.configPath === null || opts.configPath !== opts.defaultConfigPath) {
    return {
      type: "error",
      message: `${what} requires the default config file; restart without --config/--config-file.`,
    };
  }
  return null;
}

/** Run the device login and configure Kimi Code; yields the progress events. */
export async function* loginKimiCode(opts: AuthFlowOptions): AsyncGenerator<OAuthEvent> {
  const guard = configGuard(opts, "Login");
  if (guard) {
    yield guard;
    return;
  }
  const sleep = opts.sleep ?? defaultSleep;
  let ep: OAuthEndpoint;
  try {
    ep = {
      host: oauthHost(opts.getEnv),
      headers: await commonHeaders(opts.shareDir),
      fetch: opts.fetch,
    };
  } catch (err) {
    yield { type: "error", message: `Login failed: ${(err as Error).message}` };
    return;
  }
  let token: StoredToken | null = null;
  for (let round = 0; token === null; round++) {
    let auth;
    try {
      auth = await requestDeviceAuthorization(ep);
    } catch (err) {
      yield { type: "error", message: `Login failed: ${(err as Error).message}` };
      return;
    }
    yield { type: "info", message: "Please visit the following URL to finish authorization." };
    yield {
      type: "verification_url",
      message: `Verification URL: ${auth.verificationUriComplete}`,
      data: { verification_url: auth.verificationUriComplete, user_code: auth.userCode },
    };
    opts.openUrl?.(auth.verificationUriComplete);
    let interval = Math.max(auth.interval, 1);
    const deadline = auth.expiresIn === null ? Infinity : Date.now() + auth.expiresIn * 1000;
    let printedWait = false;
    try {
      while (true) {
        if (Date.now() >= deadline) throw new DeviceExpired();
        const poll = await pollDeviceToken(ep, auth);
        if (poll.kind === "token") {
          token = poll.token;
          break;
        }
        if (poll.error === "slow_down") {
          // RFC 8628 §3.5: add 5 s to the interval for this and every later poll.
          interval = Math.max(interval + 5, poll.interval ?? 0);
        } else if (poll.interval !== null) {
          interval = Math.max(poll.interval, 1);
        }
        if (!printedWait) {
          yield {
            type: "waiting",
            // the reference's words; without a description no dangling ": "
            message: poll.description.trim()
              ? `Waiting for user authorization...: ${poll.description.trim()}`
              : "Waiting for user authorization...",
            data: { error: poll.error, error_description: poll.description },
          };
          printedWait = true;
        }
        await sleep(interval * 1000, opts.signal);
      }
    } catch (err) {
      if (err instanceof DeviceExpired && round < 5) {
        yield { type: "info", message: "Device code expired, restarting login..." };
        continue;
      }
      if (opts.signal?.aborted) {
        yield { type: "error", message: "Login failed: cancelled." };
        return;
      }
      yield { type: "error", message: `Login failed: ${(err as Error).message}` };
      return;
    }
  }

  const ref: OAuthRef = { storage: "file", key: KIMI_CODE_OAUTH_KEY };
  try {
    await saveToken(opts.shareDir, ref.key, token);
  } catch (err) {
    yield {
      type: "error",
      message: `Login failed: cannot save the credentials: ${(err as Error).message}`,
    };
    return;
  }

  const baseUrl = kimiCodeBaseUrl(opts.getEnv);
  let models: PlatformModel[];
  try {
    models = await listPlatformModels(baseUrl, token.access_token, ep.headers, opts.fetch);
  } catch (err) {
    log("ERROR", "oauth", `failed to get models: ${(err as Error).message}`);
    yield { type: "error", message: `Failed to get models: ${(err as Error).message}` };
    return;
  }
  if (models.length === 0) {
    yield { type: "error", message: "No models available for the selected platform." };
    return;
  }
  // the login may have taken minutes: start from the file as it is now, not as it was
  const current = await loadConfig({ shareDir: opts.shareDir })
    .then((r) => r.config)
    .catch(() => opts.config);
  const config = applyKimiCodeConfig(current, { baseUrl, models, ref });
  try {
    // what logout restores: the default before the first login (a re-login keeps it)
    if (!isManagedModel(current, current.default_model)) {
      await savePreviousDefault(opts.shareDir, {
        default_model: current.default_model,
        default_thinking: current.default_thinking,
      });
    }
    await saveConfig(config, opts.defaultConfigPath);
  } catch (err) {
    yield { type: "error", message: `Failed to save the config: ${(err as Error).message}` };
    return;
  }
  yield { type: "success", message: "Logged in successfully." };
}

/**
 * The config with Kimi Code set up: the managed provider, one model per listed model (the old
 * managed models replaced), the first as default (thinking on when it can think), and the
 * search/fetch services. Other providers and models are untouched. Returns a copy.
 */
export function applyKimiCodeConfig(
  base: Config,
  opts: { baseUrl: string; models: PlatformModel[]; ref: OAuthRef },
): Config {
  const config = structuredClone(base);
  config.providers[KIMI_CODE_PROVIDER_KEY] = ProviderConfigSchema.parse({
    type: "kimi",
    base_url: opts.baseUrl,
    api_key: "",
    oauth: opts.ref,
  });
  for (const [key, m] of Object.entries(config.models)) {
    if (m.provider === KIMI_CODE_PROVIDER_KEY) delete config.models[key];
  }
  for (const m of opts.models) {
    const caps = platformModelCapabilities(m);
    config.models[managedModelKey(m.id)] = ModelConfigSchema.parse({
      provider: KIMI_CODE_PROVIDER_KEY,
      model: m.id,
      max_context_size: m.contextLength || UNKNOWN_CONTEXT_FALLBACK,
      capabilities: caps.length ? caps : null,
      display_name: m.displayName,
    });
  }
  const first = opts.models[0];
  config.default_model = managedModelKey(first.id);
  const caps = platformModelCapabilities(first);
  config.default_thinking = caps.includes("thinking") || caps.includes("always_thinking");
  config.services.moonshot_search = ServiceConfigSchema.parse({
    base_url: `${opts.baseUrl}/search`,
    api_key: "",
    oauth: opts.ref,
  });
  config.services.moonshot_fetch = ServiceConfigSchema.parse({
    base_url: `${opts.baseUrl}/fetch`,
    api_key: "",
    oauth: opts.ref,
  });
  return config;
}

/** Options of {@link refreshKimiCodeModels}. */
export interface RefreshModelsOptions {
  /** Share dir (credentials). */
  shareDir: string;
  /** Environment (host overrides). */
  getEnv: EnvReader;
  /** Fetch (tests). */
  fetch?: typeof fetch;
}

/**
 * The config with the managed Kimi Code models as the login's model list has them now (new
 * models added, gone ones removed, capabilities and context sizes updated); the default model
 * and thinking mode stay unless the default model is gone. Null when there is no Kimi Code
 * login or nothing changed. Throws an Error naming the cause when the list cannot be read.
 */
export async function refreshKimiCodeModels(
  config: Config,
  opts: RefreshModelsOptions,
): Promise<Config | null> {
  const provider = config.providers[KIMI_CODE_PROVIDER_KEY];
  if (!provider?.oauth) return null;
  const token = await tokenManagerFor(opts.shareDir, opts.getEnv).accessToken(provider.oauth.key);
  if (!token) return null;
  const headers = await commonHeaders(opts.shareDir);
  const models = await listPlatformModels(provider.base_url, token, headers, opts.fetch);
  if (models.length === 0) return null;
  const next = applyKimiCodeConfig(config, {
    baseUrl: provider.base_url,
    models,
    ref: provider.oauth,
  });
  if (Object.hasOwn(next.models, config.default_model)) {
    next.default_model = config.default_model;
    next.default_thinking = config.default_thinking;
  }
  next.services = config.services;
  return JSON.stringify(next) === JSON.stringify(config) ? null : next;
}

/** The default model and thinking mode before the login, restored by logout. */
export interface PreviousDefault {
  /** `default_model` before the login ("" for none). */
  default_model: string;
  /** `default_thinking` before the login. */
  default_thinking: boolean;
}

/** Whether `alias` names a model of the managed Kimi Code provider. */
function isManagedModel(config: Config, alias: string): boolean {
  return config.models[alias]?.provider === KIMI_CODE_PROVIDER_KEY;
}

/** Where login keeps {@link PreviousDefault} (beside the tokens, out of the agent's reach). */
function previousDefaultPath(shareDir: string): string {
  return join(credentialsDir(shareDir), "kimi-code.before-login.json");
}

async function savePreviousDefault(shareDir: string, prev: PreviousDefault): Promise<void> {
  await Deno.mkdir(credentialsDir(shareDir), { recursive: true, mode: 0o700 });
  await atomicWriteText(previousDefaultPath(shareDir), JSON.stringify(prev), { mode: 0o600 });
}

async function loadPreviousDefault(shareDir: string): Promise<PreviousDefault | null> {
  try {
    const data = JSON.parse(await Deno.readTextFile(previousDefaultPath(shareDir)));
    if (typeof data?.default_model !== "string") return null;
    return { default_model: data.default_model, default_thinking: data.default_thinking === true };
  } catch {
    return null;
  }
}

/**
 * The config without Kimi Code (provider, its models, the services). When the default was a
 * managed model, the default from before the login comes back (`previous`, when that model is
 * still configured), else there is none. Returns a copy.
 */
export function removeKimiCodeConfig(
  base: Config,
  previous: PreviousDefault | null = null,
): Config {
  const config = structuredClone(base);
  const defaultWasManaged = isManagedModel(config, config.default_model);
  delete config.providers[KIMI_CODE_PROVIDER_KEY];
  for (const [key, m] of Object.entries(config.models)) {
    if (m.provider === KIMI_CODE_PROVIDER_KEY) delete config.models[key];
  }
  if (defaultWasManaged) {
    const back = previous && Object.hasOwn(config.models, previous.default_model) ? previous : null;
    config.default_model = back?.default_model ?? "";
    if (back) config.default_thinking = back.default_thinking;
  }
  config.services.moonshot_search = null;
  config.services.moonshot_fetch = null;
  return config;
}

/** Whether anything of a Kimi Code login is present (tokens or managed config). */
async function hasKimiCodeLogin(opts: AuthFlowOptions): Promise<boolean> {
  if (await loadToken(opts.shareDir, KIMI_CODE_OAUTH_KEY)) return true;
  try {
    await Deno.stat(credentialsPath(opts.shareDir, KIMI_CODE_OAUTH_KEY));
    return true; // present but unreadable: still something to remove
  } catch {
    // none
  }
  const c = opts.config;
  return Object.hasOwn(c.providers, KIMI_CODE_PROVIDER_KEY) ||
    Object.values(c.models).some((m) => m.provider === KIMI_CODE_PROVIDER_KEY);
}

/**
 * Delete the tokens and remove Kimi Code from the config, restoring the default model from
 * before the login; yields the events. Without a login there is nothing to do, and it says so.
 */
export async function* logoutKimiCode(opts: AuthFlowOptions): AsyncGenerator<OAuthEvent> {
  const guard = configGuard(opts, "Logout");
  if (guard) {
    yield guard;
    return;
  }
  if (!(await hasKimiCodeLogin(opts))) {
    yield { type: "info", message: "Not logged in to Kimi Code: there is nothing to log out." };
    return;
  }
  let restored = "";
  try {
    const previous = await loadPreviousDefault(opts.shareDir);
    await deleteToken(opts.shareDir, KIMI_CODE_OAUTH_KEY);
    const config = removeKimiCodeConfig(opts.config, previous);
    await saveConfig(config, opts.defaultConfigPath);
    await Deno.remove(previousDefaultPath(opts.shareDir)).catch(() => {});
    if (config.default_model !== opts.config.default_model) restored = config.default_model;
  } catch (err) {
    yield { type: "error", message: `Logout failed: ${(err as Error).message}` };
    return;
  }
  yield {
    type: "success",
    message: restored
      ? `Logged out successfully. The default model is ${restored} again.`
      : "Logged out successfully.",
  };
}
