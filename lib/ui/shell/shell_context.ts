/**
 * What shell commands and the setup wizard can reach: the running app, the terminal, and the
 * actions that replace the app (other session, other config or model).
 *
 * @module
 */
import type { Config } from "../../config/schema.ts";
import type { MCPStatus, UserInput } from "../../wire/messages.ts";
import type { Session } from "../../session/session.ts";
import type { KimiApp } from "../../app/kimi_app.ts";
import type { Terminal } from "./terminal.ts";

/** Shell state shared with commands. */
export interface ShellContext {
  /** The running app (replaced by session or model switches). */
  readonly app: KimiApp;
  /** The terminal. */
  readonly term: Terminal;
  /** Where configuration changes are saved (null for `--config` text). */
  readonly configPath: string | null;
  /** Last reported context usage (0..1), or null. */
  contextUsage: number | null;
  /** Last reported MCP status, or null. */
  mcpStatus: MCPStatus | null;
  /** Print text above the prompt. */
  print(text: string): void;
  /** Replace the app: another session and/or config and/or model alias. */
  replaceApp(
    opts: { session?: Session; config?: Config; modelAlias?: string; thinking?: boolean },
  ): Promise<void>;
  /**
   * Read the configuration and MCP server files again (null when the front end cannot), for
   * `/reload`; the caller then rebuilds the app with {@link replaceApp}.
   */
  reloadSources(): Promise<Config | null>;
  /** Run input through the soul as a turn (text, content parts or a soul slash command). */
  runTurn(input: UserInput): Promise<void>;
  /** Redraw the current session's earlier conversation (after resuming it). */
  showTranscript(): Promise<void>;
  /** Text to pre-fill the next prompt with. */
  prefill: string;
}
