/**
 * Constants of the Kimi Code platform: the OAuth client, the hosts (with the reference's
 * environment overrides) and the names of the managed provider, models and credentials.
 *
 * @module
 */
import type { EnvReader } from "../config/share_dir.ts";

/** OAuth client id of Kimi Code CLIs. */
export const KIMI_CODE_CLIENT_ID = "17e5f671-d194-4dfb-9706-5516cb48c098";
/** Credentials key of the Kimi Code login (`<share>/credentials/kimi-code.json`). */
export const KIMI_CODE_OAUTH_KEY = "oauth/kimi-code";
/** Platform id of Kimi Code. */
export const KIMI_CODE_PLATFORM_ID = "kimi-code";
/** Provider key written by `kimi login`. */
export const KIMI_CODE_PROVIDER_KEY = `managed:${KIMI_CODE_PLATFORM_ID}`;
/** Default OAuth host. */
export const DEFAULT_OAUTH_HOST = "https://auth.kimi.com";
/** Default API base URL of Kimi Code. */
export const DEFAULT_KIMI_CODE_BASE_URL = "https://api.kimi.com/coding/v1";

/** The OAuth host: `KIMI_CODE_OAUTH_HOST`, else `KIMI_OAUTH_HOST`, else the default. */
export function oauthHost(getEnv: EnvReader): string {
  return (getEnv("KIMI_CODE_OAUTH_HOST") || getEnv("KIMI_OAUTH_HOST") || DEFAULT_OAUTH_HOST)
    .replace(/\/+$/, "");
}

/** The Kimi Code API base URL: `KIMI_CODE_BASE_URL` or the default. */
export function kimiCodeBaseUrl(getEnv: EnvReader): string {
  return (getEnv("KIMI_CODE_BASE_URL") || DEFAULT_KIMI_CODE_BASE_URL).replace(/\/+$/, "");
}

/** Config key of a managed model: `kimi-code/<model id>`. */
export function managedModelKey(modelId: string): string {
  return `${KIMI_CODE_PLATFORM_ID}/${modelId}`;
}
