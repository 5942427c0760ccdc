/**
 * The fix for a model provider's error, in words a user can act on (shared by the shell and
 * print mode).
 *
 * @module
 */
import { APIConnectionError, APIStatusError, type ChatProviderError } from "../llm/errors.ts";

/** A hint for an error of the model's API, or null when there is nothing to add. */
export function providerErrorHint(err: ChatProviderError): string | null {
  if (err instanceof APIStatusError) {
    if (err.statusCode === 401) {
      return "The model's API rejected the credentials (401). Run /login (Kimi Code) or /setup, " +
        "or fix api_key of the provider in the config file (~/.kimi/config.toml).";
    }
    if (err.statusCode === 403) {
      return "The model's API refused access (403): check the API key's plan and permissions.";
    }
    if (err.statusCode === 404) {
      return "The model's API has no such endpoint or model (404): check base_url and the " +
        "model id in the config file.";
    }
  }
  if (err instanceof APIConnectionError) {
    return "Could not reach the model's API: check base_url in the config file and the network.";
  }
  return null;
}
