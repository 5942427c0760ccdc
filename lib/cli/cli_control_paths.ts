/**
 * The control paths a command line adds for its sessions: the `--config-file` and the
 * `--mcp-config-file`s in use (secrets, and commands kimi runs).
 *
 * @module
 */
import { resolve } from "node:path";
import type { ControlPath } from "../tooling/control_paths.ts";
import type { CliOptions } from "./options.ts";

/** The control paths named on the command line: the config and MCP config files in use. */
export function cliControlPaths(opts: CliOptions): ControlPath[] {
  const paths: ControlPath[] = [];
  if (opts.configFile && opts.configText === undefined) {
    paths.push({
      path: resolve(opts.configFile),
      kind: "file",
      what: "the config file in use (API keys, hooks, MCP servers)",
      secret: true,
    });
  }
  for (const file of opts.mcpConfigFiles) {
    paths.push({
      path: resolve(file),
      kind: "file",
      what: "an MCP config file in use (commands kimi runs, their secrets)",
      secret: true,
    });
  }
  return paths;
}
