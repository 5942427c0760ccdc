/**
 * ACP authentication. Configs with an API key need none, so no auth methods are advertised
 * and `authenticate` answers with the protocol's error. When a login flow exists, give the
 * server an {@link AcpLogin} that lists its methods and runs it: that is the only integration
 * point.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";

/**
 * A login flow the ACP server can offer (e.g. `kimi login` as a terminal auth method, which a
 * client may only be offered when it declares `clientCapabilities.auth.terminal`).
 */
export interface AcpLogin {
  /** Auth methods advertised in `initialize`, given the client's capabilities. */
  methods(client: acp.ClientCapabilities | undefined): acp.AuthMethod[];
  /** Run (or check) the login of `methodId`; rejects with a `RequestError` when it fails. */
  authenticate(methodId: string): Promise<void>;
  /**
   * Whether an error of a prompt means the login is missing or expired (answered with
   * `auth_required`); a provider's HTTP 401 always is.
   */
  isAuthError?(err: unknown): boolean;
}

/** No login flow: nothing advertised, `authenticate` fails with invalid params. */
export const NO_LOGIN: AcpLogin = {
  methods: () => [],
  authenticate: (methodId) =>
    Promise.reject(
      acp.RequestError.invalidParams(
        { methodId },
        `unknown auth method "${methodId}": kimi offers no login here; put an API key in ` +
          "the `providers` section of ~/.kimi/config.toml instead",
      ),
    ),
};

/** The error for a session without a usable model (`auth_required`, with the fix). */
export function noModelError(): acp.RequestError {
  return acp.RequestError.authRequired(
    undefined,
    "no model is configured. Add a provider with an API key and a model to ~/.kimi/config.toml " +
      "(see `default_model`, `[models]` and `[providers]`), then start the session again",
  );
}
