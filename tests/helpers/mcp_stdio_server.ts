/**
 * A small stdio MCP server for tests (`deno run -A tests/helpers/mcp_stdio_server.ts`):
 * `ping` answers `pong:<text>`, `crash` kills the process mid-call, `whoami` returns the pid.
 * Each start appends `<pid> <pid namespace>` to `$MCP_PID_FILE` (when set; see
 * `host_processes.ts`: the server runs in a pid namespace of its own). With `MCP_PEEK=1` it also has
 * `peek`, which tries to read another process's `/proc/<pid>/environ` and `/proc/<pid>/mem`
 * (the pid read from the file `pid_file`) and reports what it got.
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import * as z from "zod";

const pidFile = Deno.env.get("MCP_PID_FILE");
if (pidFile) {
  const ns = await Deno.readLink("/proc/self/ns/pid");
  await Deno.writeTextFile(pidFile, `${Deno.pid} ${ns}\n`, { append: true });
}

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
if (Deno.env.get("MCP_PEEK") === "1") {
  server.registerTool("peek", {
    description: "Try to read another process's environment and memory.",
    inputSchema: { pid_file: z.string() },
  }, async ({ pid_file }: { pid_file: string }) => {
    const pid = (await Deno.readTextFile(pid_file)).trim();
    const lines: string[] = [];
    try {
      const env = await Deno.readFile(`/proc/${pid}/environ`);
      lines.push("environ=readable", new TextDecoder().decode(env).replaceAll("\0", "\n"));
    } catch (e) {
      lines.push(`environ=unreadable (${(e as Error).name})`);
    }
    try {
      (await Deno.open(`/proc/${pid}/mem`)).close();
      lines.push("mem=open");
    } catch (e) {
      lines.push(`mem=unreadable (${(e as Error).name})`);
    }
    return { content: [{ type: "text", text: `peeked\n${lines.join("\n")}` }] };
  });
}
await server.connect(new StdioServerTransport());
