/**
 * Our own legacy-SSE MCP server (the SDK's `SSEServerTransport`, which needs Node's
 * request/response objects, so it runs on `node:http` on 127.0.0.1), reached end to end through
 * `main.ts --print` with `transport: "sse"` and a scripted model (reference §6.2).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import * as z from "zod";
import { assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

interface SseTestServer {
  url: string;
  /** Request lines seen, e.g. `GET /events`. */
  requests: string[];
  close(): Promise<void>;
}

async function startSseServer(): Promise<SseTestServer> {
  const transports = new Map<string, SSEServerTransport>();
  const requests: string[] = [];
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(`${req.method} ${url.pathname}`);
    if (req.method === "GET" && url.pathname === "/events") {
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      transport.onclose = () => void transports.delete(transport.sessionId);
      const server = new McpServer({ name: "sse-test", version: "1.0.0" });
      server.registerTool("shout", {
        description: "Upper-case a word.",
        inputSchema: { word: z.string() },
      }, ({ word }: { word: string }) => ({
        content: [{ type: "text", text: word.toUpperCase() }],
      }));
      await server.connect(transport);
      return;
    }
    const transport = transports.get(url.searchParams.get("sessionId") ?? "");
    if (req.method === "POST" && url.pathname === "/messages" && transport) {
      await transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(404).end("not found");
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/events`,
    requests,
    async close() {
      for (const t of transports.values()) await t.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

Deno.test("SSE server on 127.0.0.1 with transport sse: a tool call succeeds", async () => {
  const server = await startSseServer();
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("s1", "shout", { word: "hello" }),
      "text: done",
    ]);
    const out = await sb.run([
      "--print",
      "--yolo",
      "--config-file",
      config,
      "--mcp-config",
      JSON.stringify({ mcpServers: { legacy: { url: server.url, transport: "sse" } } }),
      "-p",
      "go",
    ]);
    assertEquals(out.code, 0, out.stderr);
    const [dir] = await sb.sessionDirs();
    const wire = (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n").slice(1)
      .map((l) => JSON.parse(l).message);
    const status = wire.find((m) =>
      m.type === "StatusUpdate" && m.payload.mcp_status?.loading === false
    );
    assertEquals(status.payload.mcp_status.servers, [
      { name: "legacy", status: "connected", tools: ["shout"] },
    ]);
    const result = wire.find((m) => m.type === "ToolResult");
    assertEquals(result.payload, {
      tool_call_id: "s1",
      return_value: {
        is_error: false,
        output: [{ type: "text", text: "HELLO" }],
        message: "",
        display: [],
        extras: null,
      },
    });
    const context = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    assertEquals(context.filter((l) => l.role === "tool"), [
      { role: "tool", content: "HELLO", tool_call_id: "s1" },
    ]);
    // The legacy transport: one event stream, requests posted to the announced endpoint.
    assertEquals(server.requests[0], "GET /events");
    assertEquals(server.requests.filter((r) => r === "GET /events").length, 1);
    assertEquals(new Set(server.requests.slice(1)), new Set(["POST /messages"]));
  } finally {
    await sb.cleanup();
    await server.close();
  }
});
