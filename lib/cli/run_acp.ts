/**
 * `kimi acp`: load the configuration and MCP servers of the command line, then serve the
 * Agent Client Protocol on stdin/stdout (the server module and the ACP SDK load only here).
 *
 * @module
 */
import { log } from "../log.ts";
import { cliControlPaths } from "./cli_control_paths.ts";
import { runAcp } from "../ui/acp/server.ts";
import { kimiCodeLogin, loginCommandLine } from "../ui/acp/kimi_code_login.ts";
import { serverSetup } from "./server_setup.ts";
import { type CliOptions, UsageError } from "./options.ts";
import { safeGetEnv } from "./run_agent.ts";

/** Root flags that make no sense for the ACP server (sessions come from the client). */
function refuseSessionFlags(opts: CliOptions, given: { prompt: boolean }): void {
  const bad: string[] = [];
  if (opts.ui !== "shell") bad.push(`--${opts.ui}`);
  if (opts.session !== undefined) bad.push("--session");
  if (opts.continue) bad.push("--continue");
  if (given.prompt) bad.push("--prompt");
  if (bad.length > 0) throw new UsageError(`Cannot combine acp, ${bad.join(", ")}.`);
}

/** Run the ACP server; resolves with the exit code. */
export async function runAcpCommand(opts: CliOptions): Promise<number> {
  refuseSessionFlags(opts, { prompt: opts.prompt !== undefined });
  const setup = await serverSetup(opts);
  if (typeof setup === "number") return setup;
  const { shareDir, config, configPath, mcpServers } = setup;
  log("INFO", "acp", "serving the Agent Client Protocol on stdio");
  return await runAcp({
    shareDir,
    config,
    configPath,
    mcpServers,
    login: kimiCodeLogin({
      shareDir,
      config,
      configPath,
      getEnv: safeGetEnv,
      loginCommand: loginCommandLine(shareDir),
    }),
    defaults: {
      modelAlias: opts.model,
      thinking: opts.thinking,
      yolo: opts.yolo,
      plan: opts.plan,
      agent: opts.agentFile ? { file: opts.agentFile } : { builtin: opts.agent ?? "default" },
      maxStepsPerTurn: opts.maxStepsPerTurn,
      maxRetriesPerStep: opts.maxRetriesPerStep,
      skillsDirs: opts.skillsDirs,
      maxRalphIterations: opts.maxRalphIterations,
      getEnv: safeGetEnv,
      controlPaths: { cli: cliControlPaths(opts) },
    },
  });
}
