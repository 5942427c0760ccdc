/**
 * `kimi mcp add|list|remove|test|reset-auth` through main.ts: stdout goldens, stderr messages
 * and exit codes (reference §7.9).
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { findBwrap, probeBwrap } from "../../lib/sandbox/bwrap.ts";

const BWRAP = findBwrap();
// Without a usable bwrap (a developer machine; never under CI) the server cannot get a pid
// namespace: `kimi mcp test` then warns, and the isolation is not checked.
const NO_BWRAP = (BWRAP === null || await probeBwrap(BWRAP) !== null) && !Deno.env.get("CI");

const FIXTURE = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

Deno.test("kimi mcp add / list / remove", async () => {
  const sb = await kimiSandbox();
  const file = `${sb.shareDir}/mcp.json`;
  try {
    let r = await sb.run(["mcp", "list"]);
    assertEquals([r.code, r.stdout], [0, `MCP config file: ${file}\nNo MCP servers configured.\n`]);

    r = await sb.run(["mcp", "add", "fs", "-e", "A=1", "--", "npx", "-y", "server-fs", "/tmp"]);
    assertEquals([r.code, r.stdout], [0, `Added MCP server 'fs' to ${file}.\n`]);
    r = await sb.run([
      "mcp",
      "add",
      "-t",
      "http",
      "ctx",
      "https://mcp.example.com/mcp",
      "-H",
      "API_KEY: k1",
      "--auth",
      "oauth",
    ]);
    assertEquals([r.code, r.stdout], [0, `Added MCP server 'ctx' to ${file}.\n`]);
    assertEquals(
      await Deno.readTextFile(file),
      JSON.stringify(
        {
          mcpServers: {
            fs: { command: "npx", args: ["-y", "server-fs", "/tmp"], env: { A: "1" } },
            ctx: {
              url: "https://mcp.example.com/mcp",
              transport: "http",
              headers: { API_KEY: "k1" },
              auth: "oauth",
            },
          },
        },
        null,
        2,
      ),
    );
    r = await sb.run(["mcp", "list"]);
    assertEquals(
      r.stdout,
      `MCP config file: ${file}\n` +
        "  fs (stdio): npx -y server-fs /tmp\n" +
        "  ctx (http): https://mcp.example.com/mcp [authorization required - run: kimi mcp auth ctx]\n",
    );
    r = await sb.run(["mcp", "remove", "fs"]);
    assertEquals([r.code, r.stdout], [0, `Removed MCP server 'fs' from ${file}.\n`]);
    r = await sb.run(["mcp", "remove", "fs"]);
    assertEquals([r.code, r.stdout, r.stderr], [1, "", "MCP server 'fs' not found.\n"]);
    r = await sb.run(["mcp", "reset-auth", "ctx"]);
    assertEquals([r.code, r.stdout], [0, "OAuth tokens cleared for 'ctx'.\n"]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("kimi mcp add errors", async () => {
  const sb = await kimiSandbox();
  try {
    const cases: [string[], string][] = [
      [
        ["add", "x"],
        "For stdio transport, provide the command to start the MCP server after `--`.",
      ],
      [["add", "x", "-H", "A: b", "--", "cmd"], "--header is only valid for http transport."],
      [["add", "x", "-a", "oauth", "--", "cmd"], "--auth is only valid for http transport."],
      [
        ["add", "-t", "http", "x", "-e", "A=1", "http://h"],
        "--env is only supported for stdio transport.",
      ],
      [["add", "-t", "http", "x"], "URL is required for http transport."],
      [
        ["add", "-t", "http", "x", "http://a", "http://b"],
        "Multiple targets provided. Supply a single URL for http transport.",
      ],
      [
        ["add", "x", "-e", "NOEQUALS", "--", "cmd"],
        "Invalid env format: NOEQUALS (expected KEY=VALUE).",
      ],
    ];
    for (const [args, message] of cases) {
      const r = await sb.run(["mcp", ...args]);
      assertEquals([r.code, r.stdout, r.stderr], [1, "", `${message}\n`], args.join(" "));
    }
    await Deno.mkdir(sb.shareDir, { recursive: true });
    await Deno.writeTextFile(`${sb.shareDir}/mcp.json`, '{"mcpServers": {"a": {"command": 3}}}');
    const r = await sb.run(["mcp", "list"]);
    assertEquals(r.code, 1);
    assertEquals(
      r.stderr,
      `Error: Invalid MCP config in MCP config file '${sb.shareDir}/mcp.json': ` +
        "mcpServers.a.command: Invalid input: expected string, received number.\n",
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("kimi mcp test: connects and lists tools, the server in a pid namespace of its own; failure", async () => {
  const sb = await kimiSandbox();
  try {
    const pidFile = `${sb.root}/mcp.pid`;
    let r = await sb.run([
      "mcp",
      "add",
      "mine",
      "-e",
      `MCP_PID_FILE=${pidFile}`,
      "--",
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      DENO_JSON,
      "--no-lock",
      FIXTURE,
    ]);
    assertEquals(r.code, 0, r.stderr);
    r = await sb.run(["mcp", "test", "mine"]);
    assertEquals(r.code, 0, r.stderr);
    if (!NO_BWRAP) assertEquals(r.stderr, "");
    assertEquals(
      r.stdout,
      "Testing connection to 'mine'...\n" +
        "✓ Connected to 'mine'\n" +
        "  Available tools: 3\n" +
        "  Tools:\n" +
        "    - ping: Answer with pong.\n" +
        "    - crash: Die mid-call.\n" +
        "    - whoami: \n",
    );
    // Started as a session starts it: kimi's /proc/<pid> is not in the server's pid namespace.
    const [, serverNs] = (await Deno.readTextFile(pidFile)).trim().split(" ");
    const ownNs = await Deno.readLink("/proc/self/ns/pid");
    assert(/^pid:\[\d+\]$/.test(serverNs ?? ""), serverNs);
    if (!NO_BWRAP) {
      assert(serverNs !== ownNs, `the MCP server ran in kimi's pid namespace (${serverNs})`);
    }
    await sb.run(["mcp", "add", "gone", "--", "kimi-no-such-mcp-cmd"]);
    r = await sb.run(["mcp", "test", "gone"]);
    assertEquals(
      [r.code, r.stdout, r.stderr],
      [
        1,
        "Testing connection to 'gone'...\n",
        "✗ Connection failed: Error: spawn kimi-no-such-mcp-cmd ENOENT\n",
      ],
    );
    r = await sb.run(["mcp", "test", "nope"]);
    assertEquals([r.code, r.stderr], [1, "MCP server 'nope' not found.\n"]);
    r = await sb.run(["mcp", "auth", "mine"]);
    assertEquals([r.code, r.stderr], [1, "MCP server 'mine' is not a remote server.\n"]);
  } finally {
    await sb.cleanup();
  }
});
