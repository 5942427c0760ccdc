/**
 * The options every stage of the composition root reads ({@link KimiAppOptions}: what a UI
 * passes to `KimiApp.create`).
 *
 * @module
 */
import type { AgentSpecSource } from "../agent/spec.ts";
import type { BackgroundTaskManager } from "../background/task_manager.ts";
import type { Config } from "../config/schema.ts";
import type { McpServers } from "../mcp/config.ts";
import type { Session } from "../session/session.ts";
import type { ControlPath } from "../tooling/control_paths.ts";
import type { FileBackend } from "../tooling/file_backend.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import type { TerminalBackend } from "../tooling/terminal_backend.ts";

/** Options of `KimiApp.create`. */
export interface KimiAppOptions {
  /** Loaded configuration. */
  config: Config;
  /** The session to run in. */
  session: Session;
  /** `--model` alias. */
  modelAlias?: string;
  /** `--thinking` / `--no-thinking` (null = config default). */
  thinking: boolean | null;
  /** `--yolo`. */
  yolo: boolean;
  /** `--afk` (persisted). */
  afk: boolean;
  /** Runtime afk (print mode): no user present, not persisted. */
  runtimeAfk: boolean;
  /** Which agent to run. */
  agent: AgentSpecSource;
  /** `--max-steps-per-turn`. */
  maxStepsPerTurn?: number;
  /** `--max-retries-per-step`. */
  maxRetriesPerStep?: number;
  /** Permission scope (defaults to Deno's). */
  scope?: PermissionScope;
  /** Reads the environment. */
  getEnv: (name: string) => string | undefined;
  /** Writes a line to stdout (scripted-echo trace). */
  writeStdout?: (line: string) => void;
  /** `--plan`: start in plan mode, even when resuming. */
  plan?: boolean;
  /** Whether the session existed before this run (`default_plan_mode` applies to new ones only). */
  resumed?: boolean;
  /** `--skills-dir` (replaces project/user skill discovery). */
  skillsDirs?: string[];
  /** `--max-ralph-iterations` (overrides `loop_control.max_ralph_iterations`). */
  maxRalphIterations?: number;
  /** MCP servers (merged `--mcp-config-file`/`--mcp-config`/`<share>/mcp.json`). */
  mcpServers?: McpServers;
  /** Receives a line per MCP server that failed or needs authorization (stderr). */
  reportMcp?: (line: string) => void;
  /** Where file tools read and write text (default: the local disk). */
  files?: FileBackend;
  /** Where Shell runs foreground commands (default: local processes). */
  terminal?: TerminalBackend;
  /**
   * The user's config file, where saved approval rules live (null: config from `--config`
   * text; undefined: `<share>/config.toml`).
   */
  configFile?: string | null;
  /** Reports problems with approval rules at start-up (default: the log only). */
  reportRules?: (line: string) => void;
  /** Reports plugins that are not loaded (changed, not installed) at start-up (default: log). */
  reportPlugins?: (line: string) => void;
  /**
   * Control paths beyond the share dir's and the agent's, by source (e.g. `cli`: the
   * `--config-file` and `--mcp-config-file`s in use).
   */
  controlPaths?: Readonly<Record<string, readonly ControlPath[]>>;
  /**
   * The session's background tasks, kept by the host across rebuilds of the app for the same
   * session (default: a new manager for this app).
   */
  tasks?: BackgroundTaskManager;
  /**
   * Prints the "shell commands are not confined" warning; a host of many sessions passes one
   * that prints once (default: stderr, once per app).
   */
  warnShell?: (line: string) => void;
}
