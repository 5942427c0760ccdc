/**
 * The host of the model API a run would talk to, read from the configuration without creating
 * or migrating anything (for `kimi info` and the permission profiles).
 *
 * @module
 */
import { defaultConfigPath, loadConfigFromText } from "../config/load.ts";
import { resolveModel } from "../config/model_resolution.ts";
import { oauthHost } from "../auth/kimi_code.ts";
import { urlHost } from "./run_scope.ts";

/** Options of {@link modelHostFromConfig}. */
export interface ModelHostOptions {
  /** The share dir (its `config.toml` is read unless `configFile` is given). */
  shareDir: string;
  /** `--config-file`, when given. */
  configFile?: string;
  /** `--model`, when given. */
  modelAlias?: string;
  /** Reads the environment (`KIMI_BASE_URL`, `OPENAI_BASE_URL` overrides). */
  getEnv: (name: string) => string | undefined;
}

/**
 * `host[:port]` of the configured model's base URL, or `null` when there is no readable config,
 * no model, or no base URL.
 */
export async function modelHostFromConfig(opts: ModelHostOptions): Promise<string | null> {
  try {
    const text = await Deno.readTextFile(opts.configFile ?? defaultConfigPath(opts.shareDir));
    const config = loadConfigFromText(text);
    const resolved = resolveModel(config, { modelAlias: opts.modelAlias, getEnv: opts.getEnv });
    return urlHost(resolved.provider.base_url);
  } catch {
    return null;
  }
}

/**
 * `host[:port]` of the OAuth host the configured model's login refreshes at (the provider has an
 * `oauth` reference), or `null`.
 */
export async function oauthHostFromConfig(opts: ModelHostOptions): Promise<string | null> {
  try {
    const text = await Deno.readTextFile(opts.configFile ?? defaultConfigPath(opts.shareDir));
    const config = loadConfigFromText(text);
    const resolved = resolveModel(config, { modelAlias: opts.modelAlias, getEnv: opts.getEnv });
    return resolved.provider.oauth ? urlHost(oauthHost(opts.getEnv)) : null;
  } catch {
    return null;
  }
}
