/**
 * Behaviours programs observe that must match the reference (`reference.md` §1, §4, §6, §11):
 * the negotiated wire protocol version, `--config` text errors before any terminal check, the
 * print transcript's first line, MCP approval wording, context usage after `/compact`, and a
 * background subagent's output stage lines.
 */
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire } from "../helpers/wire_process.ts";

const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const MCP_FIXTURE = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;

Deno.test("contract: initialize answers the lower of the client's and the server's protocol version", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([]);
    for (
      const [client, want] of [
        ["1.10", "1.10"],
        ["1.11", "1.11"],
        ["1.1", "1.1"],
        ["1.99", "1.12"],
        ["2.0", "1.12"],
        ["not a version", "1.12"],
      ]
    ) {
      const wire = spawnWire(sb, ["--config-file", config]);
      const init = await wire.call("init", "initialize", { protocol_version: client });
      assertEquals(init.response.result.protocol_version, want, client);
      assertEquals((await wire.finish()).code, 0);
    }
  } finally {
    await sb.cleanup();
  }
});

Deno.test("contract: `kimi --config --help` takes --help as the config text: exit 2 before any terminal check", async () => {
  const sb = await kimiSandbox();
  try {
    // stdin is not a terminal here: the config error still comes first.
    for (const args of [["--config", "--help"], ["--config", "--help", "--print"]]) {
      const r = await sb.run(args, { stdin: "" });
      assertEquals(r.code, 2, args.join(" "));
      assertStringIncludes(r.stderr, "Invalid configuration text: ");
      assertEquals(r.stderr.includes("not a terminal"), false, r.stderr);
      assertEquals(r.stdout, "");
    }
    assertEquals(await sb.sessionDirs(), []);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("contract: --print --output-format text starts with the command as given on stdin", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: done"]);
    const r = await sb.run(["--print", "--output-format", "text", "--config-file", config], {
      stdin: "  fix the\nbug  \n",
    });
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout.split("\n").slice(0, 3), [
      "fix the",
      "bug",
      "TurnBegin(user_input='fix the\\nbug')",
    ]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("contract: an MCP approval keeps the reference's description; server and arguments are in the display", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("tc-1", "ping", { text: "hi" }),
      "text: done",
    ]);
    const fixture = {
      command: Deno.execPath(),
      args: ["run", "-A", "--config", DENO_JSON, "--no-lock", MCP_FIXTURE],
    };
    const wire = spawnWire(sb, [
      "--config-file",
      config,
      "--mcp-config",
      JSON.stringify({ mcpServers: { fixture } }),
    ]);
    await wire.call("init", "initialize", { protocol_version: "1.10" });
    const r = await wire.call("p-1", "prompt", { user_input: "go" }, (msg) => ({
      request_id: msg.params.payload.id,
      response: "approve",
    }));
    const [req] = r.lines.filter((l) => l.method === "request");
    assertEquals(req.params.type, "ApprovalRequest");
    assertEquals(req.params.payload.action, "mcp:ping");
    assertEquals(req.params.payload.description, "Call MCP tool `ping`.");
    assertEquals(req.params.payload.display, [{
      type: "brief",
      text: 'MCP server: fixture\nTool: ping\nArguments: {\n  "text": "hi"\n}',
    }]);
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
