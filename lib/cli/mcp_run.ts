/**
 * MCP in the run lifecycle: the servers a run uses (`--mcp-config-file`, `--mcp-config`, or
 * `<share>/mcp.json`) and the app whose MCP clients are closed on exit.
 *
 * @module
 */
import { loadMcpServers, McpConfigError, type McpServers } from "../mcp/config.ts";
import type { KimiApp } from "../app/kimi_app.ts";
import type { BackgroundTaskManager } from "../background/task_manager.ts";
import { type CliOptions, UsageError } from "./options.ts";

/** What a run holds that must be released on exit. */
export interface RunResources {
  /** MCP servers of this run. */
  mcpServers: McpServers;
  /** The app, once created (its MCP clients are closed on exit). */
  app: KimiApp | null;
  /**
   * The background task managers of the sessions this run opened, by session dir: kept across
   * rebuilds of a session's app, stopped on exit.
   */
  tasks: Map<string, BackgroundTaskManager>;
  /** Prints the "shell commands are not confined" warning once per run. */
  warnShell: (line: string) => void;
}

/** Load the run's MCP servers; configuration problems are usage errors naming file and field. */
export async function loadRunMcpServers(opts: CliOptions, shareDir: string): Promise<McpServers> {
  try {
    return await loadMcpServers({
      shareDir,
      files: opts.mcpConfigFiles,
      inline: opts.mcpConfigs,
    });
  } catch (err) {
    if (err instanceof McpConfigError) throw new UsageError(err.message);
    throw err;
  }
}
