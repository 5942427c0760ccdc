/**
 * `kimi mcp add|list|remove|test|auth|reset-auth`: the subcommands' flags. What they do lives in
 * mcp_command_actions.ts, loaded only when one runs (`kimi --help` loads no MCP code or zod).
 *
 * @module
 */
import type { CommandUnknownOpts } from "@commander-js/extra-typings";
import type { AddOptions } from "./mcp_command_actions.ts";

type Actions = typeof import("./mcp_command_actions.ts");

const collect = (v: string, prev: string[]) => [...prev, v];

/**
 * Register `kimi mcp ...` on the root command. `setResult` receives the command's exit code
 * promise (the CLI awaits it after parsing).
 */
export function registerMcpCommands(
  program: CommandUnknownOpts,
  setResult: (result: Promise<number>) => void,
): void {
  const run = (f: (a: Actions) => Promise<void>) =>
    setResult(
      import("./mcp_command_actions.ts").then((a) =>
        f(a).then(() => 0, (err) => {
          if (err instanceof a.McpCommandExit) return err.code;
          throw err;
        })
      ),
    );
  const mcp = program.command("mcp").description("Manage MCP server configurations.");
  mcp.command("add").description("Add an MCP server.")
    .argument("<name>", "Name of the MCP server to add.")
    .argument(
      "[target_or_command...]",
      "For http: server URL. For stdio: command to run (after `--`).",
    )
    .option("-t, --transport <transport>", "Transport type: stdio (default), http or sse.", "stdio")
    .option("-e, --env <KEY=VALUE>", "Environment variable (repeatable).", collect, [] as string[])
    .option("-H, --header <KEY:VALUE>", "HTTP header (repeatable).", collect, [] as string[])
    .option("-a, --auth <type>", "Authorization type (e.g. 'oauth').")
    .option("-f, --force", "Replace a server of the same name.")
    .action((name, targets, o) => run((a) => a.add(name, targets, o as AddOptions)));
  mcp.command("list").description("List all MCP servers.").action(() => run((a) => a.list()));
  mcp.command("remove").description("Remove an MCP server.")
    .argument("<name>", "Name of the MCP server to remove.")
    .action((name) => run((a) => a.remove(name)));
  mcp.command("test").description("Test connection to an MCP server and list available tools.")
    .argument("<name>", "Name of the MCP server to test.")
    .action((name) => run((a) => a.test(name)));
  mcp.command("auth").description("Authorize with an OAuth-enabled MCP server.")
    .argument("<name>", "Name of the MCP server to authorize.")
    .action((name) => run((a) => a.authCommand(name)));
  mcp.command("reset-auth").description("Reset OAuth authorization (clear cached tokens).")
    .argument("<name>", "Name of the MCP server.")
    .action((name) => run((a) => a.resetAuth(name)));
}
