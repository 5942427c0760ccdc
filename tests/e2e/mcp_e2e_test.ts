/**
 * MCP servers end to end through `main.ts --print` with a scripted model: a real stdio server
 * from npm (`@modelcontextprotocol/server-everything`), our own stdio server (crash and
 * restart, pids for the orphan check), a Streamable HTTP server on 127.0.0.1, a server whose
 * command does not exist, and the MCP loading events in wire.jsonl (reference §6.2, §7.9).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import * as z from "zod";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { parseProcessRef, waitProcessGone } from "../helpers/host_processes.ts";
import { MCP_SERVER_EVERYTHING } from "../helpers/npm_servers.ts";

const EVERYTHING = MCP_SERVER_EVERYTHING;
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const FIXTURE = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;

const everything = {
  command: Deno.execPath(),
  args: ["run", "-A", "--no-config", "--no-lock", EVERYTHING, "stdio"],
};
const fixture = (pidFile: string) => ({
  command: Deno.execPath(),
  args: ["run", "-A", "--config", DENO_JSON, "--no-lock", FIXTURE],
  env: { MCP_PID_FILE: pidFile },
});

type Rec = { type: string; payload: any };

async function wireRecords(sb: KimiSandbox): Promise<Rec[]> {
  const [dir] = await sb.sessionDirs();
  const text = await Deno.readTextFile(`${dir}/wire.jsonl`);
  return text.trim().split("\n").slice(1).map((l) => JSON.parse(l).message as Rec);
}

function results(recs: Rec[]): Record<string, any> {
  const out: Record<string, any> = {};
  for (const r of recs) {
    if (r.type === "ToolResult") out[r.payload.tool_call_id] = r.payload.return_value;
  }
  return out;
}

async function runPrint(
  sb: KimiSandbox,
  scripts: string[],
  mcp: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  const config = await sb.scriptedConfig(scripts, extra);
  return await sb.run([
    "--print",
    "--yolo",
    "--config-file",
    config,
    "--mcp-config",
    JSON.stringify({ mcpServers: mcp }),
    "-p",
    "go",
  ]);
}

Deno.test("stdio server from npm: echo, image, timeout; missing command reported; loading events", async () => {
  const sb = await kimiSandbox();
  try {
    const out = await runPrint(
      sb,
      [
        [
          toolCallLine("t1", "echo", { message: "hi" }),
          toolCallLine("t2", "get-tiny-image", {}),
          toolCallLine("t3", "trigger-long-running-operation", { duration: 5, steps: 5 }),
        ].join("\n"),
        "text: done",
      ],
      { everything, broken: { command: "kimi-no-such-mcp-server-cmd" } },
      {
        mcp: { client: { tool_call_timeout_ms: 1500 } },
      },
    );
    assertEquals(out.code, 0, out.stderr);
    assertMatch(
      out.stderr,
      /MCP server 'broken' failed to connect: Error: spawn kimi-no-such-mcp-server-cmd ENOENT/,
    );
    const recs = await wireRecords(sb);
    const types = recs.map((r) => r.type);
    // TurnBegin, StatusUpdate{mcp_status}, MCPLoadingBegin, StatusUpdate, MCPLoadingEnd, StepBegin
    assertEquals(types.slice(0, 6), [
      "TurnBegin",
      "StatusUpdate",
      "MCPLoadingBegin",
      "StatusUpdate",
      "MCPLoadingEnd",
      "StepBegin",
    ]);
    const before = recs[1].payload.mcp_status;
    assertEquals(before.loading, true);
    assertEquals(before.total, 2);
    const after = recs[3].payload.mcp_status;
    assertEquals(after.loading, false);
    assertEquals(after.connected, 1);
    assertEquals(after.total, 2);
    assertEquals(after.tools, 14);
    assertEquals(after.servers[1], { name: "broken", status: "failed", tools: [] });
    assertEquals(after.servers[0].name, "everything");
    assertEquals(after.servers[0].status, "connected");
    assert(after.servers[0].tools.includes("echo"));
    assertEquals(recs[3].payload.plan_mode, null);

    const r = results(recs);
    assertEquals(r.t1, {
      is_error: false,
      output: [{ type: "text", text: "Echo: hi" }],
      message: "",
      display: [],
      extras: null,
    });
    assertEquals(r.t2.is_error, false);
    assertEquals(r.t2.output.length, 3);
    assertEquals(r.t2.output[0], { type: "text", text: "Here's the image you requested:" });
    assertEquals(r.t2.output[1].type, "image_url");
    assertMatch(r.t2.output[1].image_url.url, /^data:image\/png;base64,iVBORw0KGgo/);
    assertEquals(r.t2.output[2], { type: "text", text: "The image above is the MCP logo." });
    assertEquals(r.t3, {
      is_error: true,
      output: "",
      message: "Timeout while calling MCP tool `trigger-long-running-operation`. " +
        "You may explain to the user that the timeout config is set too low.",
      display: [{ type: "brief", text: "Timeout" }],
      extras: null,
    });
  } finally {
    await sb.cleanup();
  }
});

Deno.test("a server that dies mid-call gives a tool error and is restarted; no orphans after exit", async () => {
  const sb = await kimiSandbox();
  try {
    const pidFile = `${sb.root}/pids.txt`;
    const out = await runPrint(sb, [
      toolCallLine("c1", "crash", {}),
      toolCallLine("c2", "ping", { text: "again" }),
      toolCallLine("c3", "whoami", {}),
      "text: done",
    ], { mine: fixture(pidFile) });
    assertEquals(out.code, 0, out.stderr);
    const r = results(await wireRecords(sb));
    assertEquals(r.c1.is_error, true);
    assertMatch(
      r.c1.message,
      /^MCP server `mine` stopped while running `crash` \(.*Connection closed.*\)\. The server will be restarted on the next call\.$/,
    );
    assertEquals(r.c1.display, [{ type: "brief", text: "MCP server stopped" }]);
    assertEquals(r.c2.output, [{ type: "text", text: "pong:again" }]);
    const refs = (await Deno.readTextFile(pidFile)).trim().split("\n").map(parseProcessRef);
    assertEquals(refs.length, 2); // first start + restart
    assertEquals(r.c3.output, [{ type: "text", text: String(refs[1].pid) }]);
    for (const ref of refs) {
      assert(await waitProcessGone(ref), `MCP server ${JSON.stringify(ref)} outlived kimi`);
    }
  } finally {
    await sb.cleanup();
  }
});

Deno.test("Streamable HTTP server on 127.0.0.1: result and isError", async () => {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const sid = req.headers.get("mcp-session-id");
    let t = sid ? transports.get(sid) : undefined;
    if (!t) {
      t = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id: string) => void transports.set(id, t!),
      });
      const server = new McpServer({ name: "http-test", version: "1.0.0" });
      server.registerTool("add", {
        description: "Add two numbers.",
        inputSchema: { a: z.number(), b: z.number() },
      }, ({ a, b }: { a: number; b: number }) => ({
        content: [{ type: "text", text: String(a + b) }],
      }));
      server.registerTool("fail", {}, () => ({
        content: [{ type: "text", text: "bad thing" }],
        isError: true,
      }));
      await server.connect(t);
    }
    return await t.handleRequest(req);
  });
  const sb = await kimiSandbox();
  try {
    const url = `http://127.0.0.1:${http.addr.port}/mcp`;
    const out = await runPrint(sb, [
      [toolCallLine("h1", "add", { a: 2, b: 3 }), toolCallLine("h2", "fail", {})].join("\n"),
      "text: done",
    ], { web: { url, transport: "http" } });
    assertEquals(out.code, 0, out.stderr);
    const r = results(await wireRecords(sb));
    assertEquals(r.h1, {
      is_error: false,
      output: [{ type: "text", text: "5" }],
      message: "",
      display: [],
      extras: null,
    });
    assertEquals(r.h2, {
      is_error: true,
      output: [{ type: "text", text: "bad thing" }],
      message: "Tool returned an error. The output may be error message or incomplete output",
      display: [],
      extras: null,
    });
  } finally {
    await sb.cleanup();
    await http.shutdown();
  }
});

Deno.test("a stdio server the sandbox may not run is reported failed with the denial", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: ok"]);
    const out = await sb.run([
      "--print",
      "--config-file",
      config,
      "--mcp-config",
      JSON.stringify({ mcpServers: { denied: { command: "some-mcp-server" } } }),
      "-p",
      "go",
    ], {
      permissions: [
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-net=127.0.0.1",
        "--allow-run=deno",
        "--allow-sys",
      ],
    });
    assertEquals(out.code, 0, out.stderr);
    assertStringIncludes(
      out.stderr,
      "MCP server 'denied' failed to connect: Denied by the sandbox: this run may not run " +
        "`some-mcp-server` (needs --allow-run=some-mcp-server).",
    );
    assertStringIncludes(out.stdout, "ok");
  } finally {
    await sb.cleanup();
  }
});
