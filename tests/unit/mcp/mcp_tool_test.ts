/**
 * MCP tool wrapping and result conversion (reference §7.9): description, schema, approval,
 * the 100,000-character budget with its note, unsupported content, isError.
 */
import { assertEquals } from "../../helpers/assert.ts";
import { makeCallContext, runTool } from "../../helpers/tool_env.ts";
import { convertMcpResult, MCP_TRUNCATED_NOTE } from "../../../lib/mcp/result.ts";
import { mcpTool } from "../../../lib/mcp/tool.ts";
import type { McpConnection } from "../../../lib/mcp/connection.ts";
import { toolJsonSchema } from "../../../lib/soul/toolset.ts";

Deno.test("wrapped tool: name, description, schema, approval, result", async () => {
  const calls: unknown[] = [];
  const conn = {
    callTool: (name: string, args: unknown, opts: { timeoutMs: number }) => {
      calls.push([name, args, opts.timeoutMs]);
      return Promise.resolve({ content: [{ type: "text", text: "pong:hi" }] });
    },
  } as unknown as McpConnection;
  const schema = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
  const tool = mcpTool({
    server: "srv",
    info: { name: "ping", inputSchema: schema },
    connection: conn,
    timeoutMs: 1234,
  });
  assertEquals(tool.name, "ping");
  assertEquals(
    tool.description,
    "This is an MCP (Model Context Protocol) tool from MCP server `srv`.\n\nNo description provided.",
  );
  assertEquals(toolJsonSchema(tool), schema);
  const ctx = makeCallContext();
  const rv = await runTool(tool, { text: "hi" }, ctx);
  assertEquals(ctx.approvals, [{
    action: "mcp:ping",
    description: "Call MCP tool `ping`.",
    display: [{
      type: "brief",
      text: 'MCP server: srv\nTool: ping\nArguments: {\n  "text": "hi"\n}',
    }],
    subject: { kind: "mcp", server: "srv", tool: "ping" },
  }]);
  assertEquals(calls, [["ping", { text: "hi" }, 1234]]);
  assertEquals(rv, {
    is_error: false,
    output: [{ type: "text", text: "pong:hi" }],
    message: "",
    display: [],
    extras: null,
  });
  const rejected = await runTool(
    tool,
    { text: "hi" },
    makeCallContext({ approve: false }),
  );
  assertEquals(rejected.is_error, true);
  assertEquals(calls.length, 1);
});

Deno.test("result conversion: budget, truncation note, media, unsupported, isError", () => {
  const big = "a".repeat(99_990);
  const img = { type: "image", data: "x".repeat(100), mimeType: "image/png" };
  const rv = convertMcpResult({
    content: [
      { type: "text", text: big },
      img, // dropped: over the remaining budget
      { type: "text", text: "0123456789abc" }, // cut to 10 chars
      { type: "text", text: "more" }, // budget exhausted
    ],
  });
  assertEquals(rv.output, [
    { type: "text", text: big },
    { type: "text", text: "0123456789" },
    { type: "text", text: MCP_TRUNCATED_NOTE },
  ]);
  assertEquals(
    MCP_TRUNCATED_NOTE,
    "\n\n[Output truncated: exceeded 100000 character limit. Use pagination or more specific queries to get remaining content.]",
  );
  assertEquals(
    convertMcpResult({
      content: [
        { type: "audio", data: "QQ==", mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "file:///a.txt", text: "file text" } },
        {
          type: "resource",
          resource: { uri: "file:///a.bin", blob: "AA==", mimeType: "application/zip" },
        },
      ],
      isError: true,
    }),
    {
      is_error: true,
      output: [
        { type: "audio_url", audio_url: { url: "data:audio/wav;base64,QQ==", id: null } },
        { type: "text", text: "file text" },
        { type: "text", text: "[Unsupported content: Unsupported mime type: application/zip]" },
      ],
      message: "Tool returned an error. The output may be error message or incomplete output",
      display: [],
      extras: null,
    },
  );
});
