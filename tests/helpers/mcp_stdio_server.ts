/**
 * A small stdio MCP server for tests (`deno run -A tests/helpers/mcp_stdio_server.ts`):
 * `ping` answers `pong:<text>`, `crash` kills the process mid-call, `whoami` returns the pid.
 * Each start appends its pid to `$MCP_PID_FILE` (when set).
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import * as z from "zod";

const pidFile = Deno.env.get("MCP_PID_FILE");
if (pidFile) await Deno.writeTextFile(pidFile, `${Deno.pid}\n`, { append: true });

const server = new McpServer({ name: "test-stdio", version: "1.0.0" });
server.registerTool("ping", {
  description: "Answer with pong.",
  inputSchema: { text: z.string() },
}, ({ text }: { text: string }) => ({ content: [{ type: "text", text: `pong:${text}` }] }));
server.registerTool("crash", { description: "Die mid-call." }, () => {
  Deno.exit(3);
});
server.registerTool("whoami", {}, () => ({
  content: [{ type: "text", text: String(Deno.pid) }],
}));
await server.connect(new StdioServerTransport());
