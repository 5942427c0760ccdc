/**
 * The config routes' logic: the model list without secrets, saving `default_model` and
 * `default_thinking`, and `config.toml` as text with every secret value replaced by a marker
 * (a saved text gets the real values back), so no API key ever leaves the server.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { atomicWriteText } from "../../../fs/atomic_write.ts";
import { ConfigError, loadConfig, loadConfigFromText, saveConfig } from "../../../config/load.ts";
import type { Config } from "../../../config/schema.ts";
import type { GlobalConfig } from "./schemas.ts";

/** The config as `GET /api/config/` shows it (models whose provider is missing are skipped). */
export function globalConfig(config: Config): GlobalConfig {
  const models = Object.entries(config.models).flatMap(([name, m]) => {
    const p = config.providers[m.provider];
    if (!p) return [];
    return [{
      name,
      provider: m.provider,
      provider_type: p.type,
      model: m.model,
      max_context_size: m.max_context_size,
      capabilities: m.capabilities,
    }];
  });
  return { default_model: config.default_model, default_thinking: config.default_thinking, models };
}

/** A config change refused (the message is the API's `detail`). */
export class ConfigChangeError extends Error {}

/** Save `default_model` / `default_thinking` to the config file; resolves with the new config. */
export async function patchConfig(
  shareDir: string,
  path: string | null,
  patch: { default_model?: string; default_thinking?: boolean },
): Promise<Config> {
  if (path === null) {
    throw new ConfigChangeError(
      "The configuration came from --config text, so it cannot be saved; start kimi web " +
        "without --config to change it here.",
    );
  }
  const { config } = await loadConfig({ shareDir, configFile: path });
  if (patch.default_model !== undefined) {
    if (!config.models[patch.default_model]) {
      throw new ConfigChangeError(`Model '${patch.default_model}' not found in config`);
    }
    config.default_model = patch.default_model;
  }
  if (patch.default_thinking !== undefined) config.default_thinking = patch.default_thinking;
  await saveConfig(config, path);
  return config;
}

/** The secret values of a config (API keys, provider env values, custom header values). */
export function secretValues(config: Config): string[] {
  const out = new Set<string>();
  for (const p of Object.values(config.providers)) {
    if (p.api_key) out.add(p.api_key);
    for (const v of Object.values(p.env ?? {})) if (v) out.add(v);
    for (const v of Object.values(p.custom_headers ?? {})) if (v) out.add(v);
  }
  for (const s of Object.values(config.services)) {
    if (s && typeof s === "object" && "api_key" in s && typeof s.api_key === "string") {
      if (s.api_key) out.add(s.api_key);
    }
  }
  return [...out].filter((v) => v.length >= 4).sort((a, b) => b.length - a.length);
}

function marker(secret: string): string {
  return `kimi-secret-${createHash("sha256").update(secret).digest("hex").slice(0, 16)}`;
}

/** `text` with every secret value of `config` replaced by its marker. */
export function redactSecrets(text: string, config: Config | null): string {
  if (!config) return text;
  let out = text;
  for (const s of secretValues(config)) out = out.split(s).join(marker(s));
  return out;
}

/** `text` with the markers of `config`'s secrets turned back into the values; unknown ones throw. */
export function restoreSecrets(text: string, config: Config | null): string {
  const bySecret = new Map((config ? secretValues(config) : []).map((s) => [marker(s), s]));
  return text.replace(/kimi-secret-[0-9a-f]{16}/g, (m) => {
    const s = bySecret.get(m);
    if (s === undefined) {
      throw new ConfigChangeError(
        `Unknown secret marker ${m}: write the real value instead of the marker.`,
      );
    }
    return s;
  });
}

/** `GET /api/config/toml`: the file's text, secrets masked (`""` when it does not exist). */
export async function readConfigText(
  shareDir: string,
  path: string,
): Promise<{ content: string; path: string }> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { content: "", path };
    throw err;
  }
  let config: Config | null = null;
  try {
    config = (await loadConfig({ shareDir, configFile: path })).config;
  } catch {
    config = null;
  }
  if (!config) {
    // unparseable: mask anything that looks like a key value
    return {
      content: text.replace(/((?:api_key|token|secret|password)\s*=\s*)"[^"]*"/gi, '$1"********"'),
      path,
    };
  }
  return { content: redactSecrets(text, config), path };
}

/** `PUT /api/config/toml`: validate the text (markers restored), then write it (mode 0600). */
export async function writeConfigText(
  shareDir: string,
  path: string,
  content: string,
): Promise<{ success: boolean; error?: string }> {
  let current: Config | null = null;
  try {
    current = (await loadConfig({ shareDir, configFile: path })).config;
  } catch {
    current = null;
  }
  let text: string;
  try {
    text = restoreSecrets(content, current);
    loadConfigFromText(text);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof ConfigChangeError) {
      return { success: false, error: err.message };
    }
    throw err;
  }
  await atomicWriteText(path, text, { mode: 0o600 });
  return { success: true };
}
