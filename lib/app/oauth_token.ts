/**
 * Access tokens of OAuth-backed services and providers (`oauth` references in the config), for
 * the stages of the composition root that hand them on (plugin host values, web services).
 *
 * @module
 */

/** A token getter for an OAuth-backed service; loads the token manager on first use. */
export function oauthAccessToken(
  shareDir: string,
  key: string,
  getEnv: (name: string) => string | undefined,
): () => Promise<string> {
  return async () => {
    const { tokenManagerFor } = await import("../auth/token_manager.ts");
    return await tokenManagerFor(shareDir, getEnv).accessToken(key);
  };
}
