/**
 * MCP servers that are slow to start, end to end through `main.ts --print`: a server still
 * starting is reported as starting (a first `npx -y` / `deno run npm:` start downloads its
 * package) and then used; one that never finishes starting fails after
 * `mcp.client.connect_timeout_ms` with a message naming the setting, and the turn goes on.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const FIXTURE = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;

Deno.test("a slow-starting MCP server is reported as starting, then connects and works", async () => {
  const sb = await kimiSandbox();
  try {
    const slow = {
      command: "sh",
      args: [
        "-c",
        `sleep 6 && exec "${Deno.execPath()}" run -A --config "${DENO_JSON}" --no-lock "${FIXTURE}"`,
      ],
    };
    const config = await sb.scriptedConfig([
      toolCallLine("p1", "ping", { text: "late" }),
      "text: done",
    ]);
    const r = await sb.run([
      "--print",
      "--yolo",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "--mcp-config",
      JSON.stringify({ mcpServers: { slow } }),
      "-p",
      "go",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(
      r.stderr,
      "MCP server 'slow' is still starting (a first start may download its package); waiting " +
        "up to 180 s (mcp.client.connect_timeout_ms).",
    );
    assert(!r.stderr.includes("failed to connect"), r.stderr);
    assertStringIncludes(r.stdout, "pong:late");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("an MCP server that never finishes starting fails after connect_timeout_ms, naming the setting", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: carried on"], {
      mcp: { client: { connect_timeout_ms: 2000 } },
    });
    const r = await sb.run([
      "--print",
      "--config-file",
      config,
      "--mcp-config",
      JSON.stringify({ mcpServers: { stuck: { command: "sh", args: ["-c", "exec sleep 60"] } } }),
      "-p",
      "go",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(
      r.stderr,
      "MCP server 'stuck' failed to connect: it did not finish starting within 2 s; raise " +
        "mcp.client.connect_timeout_ms if its first start downloads a large package",
    );
    assertStringIncludes(r.stdout, "carried on");
  } finally {
    await sb.cleanup();
  }
});
