/**
 * What the long-running server commands (`kimi acp`, `kimi web`) read before they serve: the
 * share dir, the log, the config (a bad one is reported and ends the command with exit 1) and
 * the MCP servers of the run.
 *
 * @module
 */
import { ConfigError } from "../config/errors.ts";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { ensureShareDir, readProcessEnv } from "../config/share_dir.ts";
import type { McpServers } from "../mcp/config.ts";
import { configureLog } from "../log.ts";
import { loadRunMcpServers } from "./mcp_run.ts";
import type { CliOptions } from "./options.ts";

/** The setting a server command runs with. */
export interface ServerSetup {
  /** The share dir (created when missing). */
  shareDir: string;
  /** The loaded config. */
  config: Config;
  /** The config file it came from (null: inline `--config` text or defaults). */
  configPath: string | null;
  /** The run's MCP servers (config, `mcp.json`, `--mcp-config-file`). */
  mcpServers: McpServers;
}

/**
 * Prepare a server command: share dir, log, config and MCP servers. Resolves with the exit
 * code 1 when the config cannot be loaded (its error already printed).
 */
export async function serverSetup(opts: CliOptions): Promise<ServerSetup | number> {
  const shareDir = await ensureShareDir(readProcessEnv);
  configureLog({ shareDir, debug: opts.debug });
  let loaded;
  try {
    loaded = await loadConfig({
      shareDir,
      configFile: opts.configFile,
      configText: opts.configText,
    });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  }
  const mcpServers = await loadRunMcpServers(opts, shareDir);
  return { shareDir, config: loaded.config, configPath: loaded.path, mcpServers };
}
