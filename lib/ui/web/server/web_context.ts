/**
 * What the routes of `kimi web` share: the settings of the command line, the token, the
 * failure counter, the sessions and the configuration in use.
 *
 * @module
 */
import type { Config } from "../../../config/schema.ts";
import type { LLM } from "../../../llm/provider.ts";
import type { Session } from "../../../session/session.ts";
import type { ControlPath } from "../../../tooling/control_paths.ts";
import type { PermissionScope } from "../../../tooling/scope.ts";
import type { AuthFailures } from "./access_guard.ts";
import type { SessionRegistry } from "./session_registry.ts";
import type { TokenStore } from "./token_store.ts";

/** The security settings of a running server (reference §A2). */
export interface WebSecurity {
  /** Bind host. */
  host: string;
  /** Whether the bind host is loopback. */
  loopback: boolean;
  /** Refuse peers outside private, loopback and link-local addresses. */
  lanOnly: boolean;
  /** Check `Origin` against {@link allowedOrigins} (public mode with `--public`). */
  enforceOrigin: boolean;
  /** Allowed origins (`*` = any); empty = loopback origins only (CORS). */
  allowedOrigins: string[];
  /** `--restrict-sensitive-apis`. */
  restricted: boolean;
  /** Deepest path public mode serves. */
  maxPublicDepth: number;
}

/** The configuration the server runs with, and where it is saved. */
export interface ConfigAccess {
  /** The config new sessions get. */
  current(): Config;
  /** Replace it (after a save). */
  set(config: Config): void;
  /** The config file (null: `--config` text, nothing to save to). */
  readonly path: string | null;
}

/** Everything the routes share. */
export interface WebContext {
  /** Security settings. */
  security: WebSecurity;
  /** The token (null: `--dangerously-omit-auth`). */
  tokens: TokenStore | null;
  /** Failed token checks per address. */
  failures: AuthFailures;
  /** The sessions. */
  registry: SessionRegistry;
  /** The share dir. */
  shareDir: string;
  /** kimi's control paths (the share dir's, the config file in use, the cache): never served. */
  controls: readonly ControlPath[];
  /** Where `kimi web` was started. */
  startupDir: string;
  /** The user's home. */
  home: string | null;
  /** The process's permission scope. */
  scope: PermissionScope;
  /** The configuration. */
  config: ConfigAccess;
  /** The model that titles a session (its running agent's, else the default model; null: none). */
  titleModel(session: Session): Promise<LLM | null>;
}
