/**
 * Kimi Code sign-in over ACP (reference §12): the `login` auth method runs `kimi login` in a
 * terminal (advertised with the reference's `terminal-auth` metadata), and `authenticate("login")`
 * succeeds once that login is usable, handing the server the configuration `kimi login` wrote.
 * Advertised when the config uses a Kimi Code login or has no model yet; API-key configs need no
 * authentication.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import { KIMI_CODE_OAUTH_KEY, KIMI_CODE_PROVIDER_KEY } from "../../auth/kimi_code.ts";
import { tokenManagerFor } from "../../auth/token_manager.ts";
import { loadConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import type { EnvReader } from "../../config/share_dir.ts";
import { AuthExpiredError } from "../../llm/errors.ts";
import { type AcpLogin, NO_LOGIN } from "./auth.ts";
import { DENO_V8_FLAGS_ARG } from "../../runtime_flags.ts";

/** Id of the auth method. */
export const KIMI_LOGIN_METHOD_ID = "login";

/** Options of {@link kimiCodeLogin}. */
export interface KimiCodeLoginOptions {
  /** Share dir (credentials). */
  shareDir: string;
  /** The configuration at start. */
  config: Config;
  /** The config file (null: `--config` text, which a login cannot change). */
  configPath: string | null;
  /** Environment (OAuth host overrides). */
  getEnv: EnvReader;
  /** The command line that runs `kimi login` (program and arguments). */
  loginCommand: { command: string; args: string[] };
}

/** Whether a config signs in with Kimi Code (a provider with an `oauth` reference). */
export function usesKimiLogin(config: Config): boolean {
  return Object.entries(config.providers).some(([key, p]) =>
    p.oauth !== null || key === KIMI_CODE_PROVIDER_KEY
  );
}

/**
 * How to start `kimi login` from an editor: the executable itself when kimi is compiled, else
 * Deno running this entry point with what login needs (network, reading, the share dir).
 */
export function loginCommandLine(shareDir: string): { command: string; args: string[] } {
  const exe = Deno.execPath();
  if (!/(^|[\\/])deno(\.exe)?$/.test(exe)) return { command: exe, args: ["login"] };
  const main = new URL(Deno.mainModule);
  return {
    command: exe,
    args: [
      "run",
      "--no-prompt",
      DENO_V8_FLAGS_ARG,
      "--allow-read",
      "--allow-env",
      "--allow-sys",
      "--allow-net",
      `--allow-write=${shareDir}`,
      main.protocol === "file:" ? decodeURIComponent(main.pathname) : main.href,
      "login",
    ],
  };
}

/** The Kimi Code login for the ACP server. */
export function kimiCodeLogin(opts: KimiCodeLoginOptions): AcpLogin {
  const advertise = usesKimiLogin(opts.config) || !opts.config.default_model;
  return {
    methods: () =>
      advertise
        ? [{
          id: KIMI_LOGIN_METHOD_ID,
          name: "Login with Kimi account",
          description: "Run `kimi login` in a terminal to sign in to Kimi Code.",
          _meta: {
            "terminal-auth": {
              command: opts.loginCommand.command,
              args: opts.loginCommand.args,
              label: "Kimi Code Login",
              env: {},
              type: "terminal",
            },
          },
        }]
        : [],
    async authenticate(methodId) {
      // a method that was not offered is unknown, as with no login at all
      if (!advertise) return await NO_LOGIN.authenticate(methodId);
      if (methodId !== KIMI_LOGIN_METHOD_ID) {
        throw acp.RequestError.invalidParams(
          { methodId },
          `unknown auth method "${methodId}"; kimi offers "${KIMI_LOGIN_METHOD_ID}"`,
        );
      }
      const manager = tokenManagerFor(opts.shareDir, opts.getEnv);
      if (!(await manager.hasUsableLogin(KIMI_CODE_OAUTH_KEY))) {
        throw acp.RequestError.authRequired(
          undefined,
          "not signed in to Kimi Code: run `kimi login` in a terminal, then authenticate again",
        );
      }
      if (opts.configPath === null) return;
      // `kimi login` rewrote the config file: new sessions use the managed provider it added
      const { config } = await loadConfig({ shareDir: opts.shareDir, configFile: opts.configPath });
      return config;
    },
    isAuthError: (err) => err instanceof AuthExpiredError,
  };
}
