/**
 * MCP configuration: merging sources and errors naming the source and the field (§1.1, §7.9).
 */
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { loadMcpServers, McpConfigError, parseMcpConfig } from "../../../lib/mcp/config.ts";

Deno.test("parse: stdio and remote servers with defaults", () => {
  const servers = parseMcpConfig(
    JSON.stringify({
      mcpServers: {
        a: { command: "npx", args: ["srv"], env: { K: "V" }, cwd: "/tmp" },
        b: { url: "https://example.com/mcp", transport: "http", auth: "oauth" },
        c: { command: "x" },
      },
    }),
    { file: "/f.json" },
  );
  assertEquals(servers, {
    a: { command: "npx", args: ["srv"], env: { K: "V" }, cwd: "/tmp" },
    b: { url: "https://example.com/mcp", transport: "http", auth: "oauth", headers: {} },
    c: { command: "x", args: [], env: {} },
  });
  assertEquals(parseMcpConfig("{}", { inline: 1 }), {});
});

Deno.test("errors name the source and the field", () => {
  const err = (
    text: string,
    source: { file: string } | { inline: number } = { file: "/m.json" },
  ) => {
    try {
      parseMcpConfig(text, source);
    } catch (e) {
      assert(e instanceof McpConfigError);
      return e.message;
    }
    throw new Error("no error");
  };
  assertEquals(
    err('{"mcpServers": {'),
    "Invalid JSON in MCP config file '/m.json': Expecting property name enclosed in double quotes: line 1 column 17 (char 16)",
  );
  assertEquals(
    err('{"mcpServers": {"s": {"command": "x", "args": "nope"}}}'),
    "Invalid MCP config in MCP config file '/m.json': mcpServers.s.args: Invalid input: expected array, received string.",
  );
  assertEquals(
    err('{"mcpServers": {"s": {"command": "x", "env": {"A": 1}}}}', { inline: 2 }),
    "Invalid MCP config in --mcp-config #2: mcpServers.s.env.A: Invalid input: expected string, received number.",
  );
  assertEquals(
    err('{"mcpServers": {"s": {"url": "https://x", "transport": "ws"}}}'),
    'Invalid MCP config in MCP config file \'/m.json\': mcpServers.s.transport: Invalid option: expected one of "http"|"streamable-http"|"sse".',
  );
  assertEquals(
    err('{"mcpServers": {"s": {"args": []}}}'),
    'Invalid MCP config in MCP config file \'/m.json\': mcpServers.s: set either "command" (stdio server) or "url" (remote server).',
  );
  assertEquals(
    err('{"mcpServers": []}'),
    "Invalid MCP config in MCP config file '/m.json': mcpServers: expected an object of servers by name.",
  );
});

Deno.test("load: default share mcp.json, files replace it, inline configs merge last", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/mcp.json`,
      JSON.stringify({ mcpServers: { def: { command: "d" } } }),
    );
    assertEquals(Object.keys(await loadMcpServers({ shareDir: dir })), ["def"]);
    const f1 = `${dir}/one.json`;
    const f2 = `${dir}/two.json`;
    await Deno.writeTextFile(
      f1,
      JSON.stringify({ mcpServers: { a: { command: "1" }, b: { command: "1" } } }),
    );
    await Deno.writeTextFile(f2, JSON.stringify({ mcpServers: { b: { command: "2" } } }));
    const merged = await loadMcpServers({
      shareDir: dir,
      files: [f1, f2],
      inline: [
        JSON.stringify({
          mcpServers: { c: { url: "http://127.0.0.1:1/mcp" }, a: { command: "3" } },
        }),
      ],
    });
    assertEquals(Object.keys(merged), ["a", "b", "c"]);
    assertEquals((merged.a as { command: string }).command, "3");
    assertEquals((merged.b as { command: string }).command, "2");
    await assertRejects(
      () => loadMcpServers({ shareDir: dir, files: [`${dir}/missing.json`] }),
      /Cannot read MCP config file '[^']*\/missing\.json': the file does not exist\.$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
