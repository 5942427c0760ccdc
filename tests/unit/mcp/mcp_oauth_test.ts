/**
 * OAuth for remote MCP servers against a local authorization server on 127.0.0.1: unauthorized
 * servers are marked and skipped, `kimi mcp auth` runs the flow with the loopback redirect and
 * stores tokens (mode 600) under `<share>/mcp-oauth/`, then the tools work; `reset-auth` clears.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { denoDir, kimiSandbox, MAIN_TS, toolCallLine } from "../../helpers/kimi_process.ts";

const TOKEN = "tok-secret-123456";

function startServer() {
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const seen: string[] = [];
  const http: Deno.HttpServer<Deno.NetAddr> = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, async (req: Request): Promise<Response> => {
    const u = new URL(req.url);
    const base: string = `http://127.0.0.1:${http.addr.port}`;
    seen.push(`${req.method} ${u.pathname}`);
    const json = (v: unknown, status = 200) => Response.json(v, { status });
    if (u.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      return json({ resource: `${base}/mcp`, authorization_servers: [base] });
    }
    if (u.pathname === "/.well-known/oauth-authorization-server") {
      return json({
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        registration_endpoint: `${base}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (u.pathname === "/register") {
      const meta = await req.json();
      return json({ ...meta, client_id: "client-1" }, 201);
    }
    if (u.pathname === "/authorize") {
      const to = new URL(u.searchParams.get("redirect_uri")!);
      to.searchParams.set("code", "code-1");
      to.searchParams.set("state", u.searchParams.get("state")!);
      return new Response(null, { status: 302, headers: { location: to.href } });
    }
    if (u.pathname === "/token") {
      const form = new URLSearchParams(await req.text());
      if (form.get("code") !== "code-1" || !form.get("code_verifier")) {
        return json({ error: "invalid_grant" }, 400);
      }
      return json({ access_token: TOKEN, token_type: "Bearer", expires_in: 3600 });
    }
    if (u.pathname === "/mcp") {
      if (req.headers.get("authorization") !== `Bearer ${TOKEN}`) {
        return new Response("unauthorized", {
          status: 401,
          headers: {
            "www-authenticate":
              `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
          },
        });
      }
      const sid = req.headers.get("mcp-session-id");
      let t = sid ? transports.get(sid) : undefined;
      if (!t) {
        t = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => crypto.randomUUID(),
          onsessioninitialized: (id: string) => void transports.set(id, t!),
        });
        const server = new McpServer({ name: "oauth-test", version: "1.0.0" });
        server.registerTool("secret", { description: "Protected." }, () => ({
          content: [{ type: "text", text: "protected data" }],
        }));
        await server.connect(t);
      }
      return await t.handleRequest(req);
    }
    return new Response("not found", { status: 404 });
  });
  return { http, seen, url: `http://127.0.0.1:${http.addr.port}/mcp` };
}

Deno.test("OAuth: unauthorized until `kimi mcp auth`, then tools work; reset-auth clears", async () => {
  const srv = startServer();
  const sb = await kimiSandbox();
  try {
    let r = await sb.run(["mcp", "add", "-t", "http", "-a", "oauth", "prot", srv.url]);
    assertEquals(r.code, 0, r.stderr);
    r = await sb.run(["mcp", "list"]);
    assertStringIncludes(
      r.stdout,
      `  prot (http): ${srv.url} [authorization required - run: kimi mcp auth prot]\n`,
    );

    // Before authorization: marked unauthorized and skipped, the turn still runs.
    const cfg1 = await sb.scriptedConfig(["text: fine"]);
    r = await sb.run(["--print", "--config-file", cfg1, "-p", "go"]);
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(
      r.stderr,
      "MCP server 'prot' requires authorization - run: kimi mcp auth prot",
    );
    const [dir] = await sb.sessionDirs();
    const recs = (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n").slice(1)
      .map((l) => JSON.parse(l).message);
    const statuses = recs.filter((m: any) => m.type === "StatusUpdate" && m.payload.mcp_status);
    if (statuses.length > 0) {
      assertEquals(statuses.at(-1).payload.mcp_status.servers, [
        { name: "prot", status: "unauthorized", tools: [] },
      ]);
    }

    // The flow: the test plays the browser.
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "-A", MAIN_TS, "mcp", "auth", "prot"],
      cwd: sb.workDir,
      clearEnv: true,
      env: {
        HOME: sb.home,
        KIMI_SHARE_DIR: sb.shareDir,
        DENO_DIR: denoDir(),
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        KIMI_MCP_OAUTH_NO_BROWSER: "1",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let out = "";
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let visited = false;
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
      const m = /If it does not open, visit: (\S+)/.exec(out);
      if (m && !visited) {
        visited = true;
        const res = await fetch(m[1]); // follows the redirect to the loopback callback
        assertEquals(res.status, 200);
        assertStringIncludes(await res.text(), "Authorization complete");
      }
    }
    const status = await child.status;
    const err = await new Response(child.stderr).text();
    assertEquals(status.code, 0, err);
    assertEquals(
      out.replace(/visit: \S+/, "visit: URL"),
      "Authorizing with 'prot'...\nA browser window will open for authorization.\n" +
        "If it does not open, visit: URL\nSuccessfully authorized with 'prot'.\nAvailable tools: 1\n",
    );
    assert(!out.includes(TOKEN) && !err.includes(TOKEN));
    const tokenFile = `${sb.shareDir}/mcp-oauth/prot.json`;
    assertEquals((await Deno.stat(tokenFile)).mode! & 0o777, 0o600);
    assertEquals(JSON.parse(await Deno.readTextFile(tokenFile)).tokens.access_token, TOKEN);

    r = await sb.run(["mcp", "list"]);
    assertStringIncludes(r.stdout, `  prot (http): ${srv.url}\n`);
    const cfg2 = await sb.scriptedConfig([toolCallLine("s1", "secret", {}), "text: done"]);
    r = await sb.run([
      "--print",
      "--yolo",
      "--config-file",
      cfg2,
      "-p",
      "go",
      "--output-format",
      "stream-json",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, "protected data");
    assert(!r.stdout.includes(TOKEN) && !r.stderr.includes(TOKEN));

    r = await sb.run(["mcp", "reset-auth", "prot"]);
    assertEquals([r.code, r.stdout], [0, "OAuth tokens cleared for 'prot'.\n"]);
    r = await sb.run(["mcp", "list"]);
    assertStringIncludes(r.stdout, "[authorization required - run: kimi mcp auth prot]");
  } finally {
    await sb.cleanup();
    await srv.http.shutdown();
  }
});
