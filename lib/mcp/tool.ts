/**
 * An MCP server's tool offered to the model (reference §7.9): the MCP name, a description
 * naming the server, the server's input schema, approval `mcp:<tool>`, the configured call
 * timeout and the result converted to content parts.
 *
 * @module
 */
import * as z from "zod";
import { log } from "../log.ts";
import { toolError } from "../tooling/result.ts";
import type { Tool } from "../tooling/tool.ts";
import { McpCallError, type McpConnection, type McpToolInfo } from "./connection.ts";
import { convertMcpResult } from "./result.ts";
import { brief } from "../wire/display.ts";

/** Description the model sees for an MCP tool. */
export function mcpToolDescription(server: string, description: string | undefined): string {
  return `This is an MCP (Model Context Protocol) tool from MCP server \`${server}\`.\n\n` +
    (description || "No description provided.");
}

/** Message of a call that ran past `mcp.client.tool_call_timeout_ms`. */
export function mcpTimeoutMessage(tool: string): string {
  return `Timeout while calling MCP tool \`${tool}\`. ` +
    "You may explain to the user that the timeout config is set too low.";
}

/** Options of {@link mcpTool}. */
export interface McpToolOptions {
  /** Server name. */
  server: string;
  /** The tool as listed. */
  info: McpToolInfo;
  /** The server's connection. */
  connection: McpConnection;
  /** `mcp.client.tool_call_timeout_ms`. */
  timeoutMs: number;
  /** Whether the tool belongs to the root agent (rejection wording). */
  isRoot?: boolean;
}

const ArgsSchema = z.record(z.string(), z.unknown());

/** Longest argument text quoted in an approval's one-line description. */
/** Wrap an MCP tool as a {@link Tool}. */
export function mcpTool(opts: McpToolOptions): Tool<Record<string, unknown>> {
  const { info, connection, server } = opts;
  const schema = { ...info.inputSchema };
  if (schema.type === undefined) schema.type = "object";
  return {
    name: info.name,
    description: mcpToolDescription(server, info.description),
    parameters: ArgsSchema,
    jsonSchema: schema,
    isRoot: opts.isRoot,
    resolve: (args) => ({
      approval: () => ({
        action: `mcp:${info.name}`,
        // The reference's wording; the server and the arguments are in the display block.
        description: `Call MCP tool \`${info.name}\`.`,
        display: [
          brief(
            `MCP server: ${server}\nTool: ${info.name}\nArguments: ${
              JSON.stringify(args, null, 2)
            }`,
          ),
        ],
        subject: { kind: "mcp", server, tool: info.name },
      }),
      execute: async (ctx) => {
        try {
          const result = await connection.callTool(info.name, args, {
            timeoutMs: opts.timeoutMs,
            signal: ctx.signal,
          });
          return convertMcpResult(result);
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          if (err instanceof McpCallError && err.kind === "timeout") {
            log("WARNING", "mcp", `MCP tool call timed out: ${info.name}`);
            return toolError({ message: mcpTimeoutMessage(info.name), brief: "Timeout" });
          }
          if (err instanceof McpCallError && err.kind === "closed") {
            log(
              "ERROR",
              "mcp",
              `MCP server ${server} went away during ${info.name}: ${err.message}`,
            );
            return toolError({
              message: `MCP server \`${server}\` stopped while running \`${info.name}\` ` +
                `(${err.message}). The server will be restarted on the next call.`,
              brief: "MCP server stopped",
            });
          }
          throw err;
        }
      },
    }),
  };
}
