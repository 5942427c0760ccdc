import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { BWRAP_PROBLEM, flagsFor, scriptedConfigFile } from "../helpers/attack.ts";
import { startWeb } from "../helpers/web_server.ts";
import { profileFlags, scanKimiArgs } from "../../scripts/launch.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const json = (body: unknown): RequestInit => ({
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

Deno.test({
  name: "kimi web security: token always on loopback, 0600 file, query only for GET, rotate, ban",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: hi"]);
    let web = await startWeb(sb, { config });
    try {
      const token = web.token!;
      const file = `${sb.shareDir}/web/token`;
      assertEquals((await Deno.readTextFile(file)).trim(), token);
      assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600);
      assertEquals((await Deno.stat(`${sb.shareDir}/web`)).mode! & 0o777, 0o700);
      // the token is not in the server's log
      const log = await Deno.readTextFile(`${sb.shareDir}/logs/kimi.log`).catch(() => "");
      assert(!log.includes(token), "token logged");

      const none = await web.api("/api/sessions/", { auth: false });
      assertEquals(none.status, 401);
      assertEquals(await none.json(), { detail: "Unauthorized" });
      assertEquals((await web.api("/api/config/", { auth: false })).status, 401);
      assertEquals((await web.api("/openapi.json", { auth: false })).status, 200);
      assertEquals((await web.api("/healthz", { auth: false })).status, 200);
      assertEquals((await web.api("/", { auth: false })).status, 200);
      const q = await web.api(`/api/sessions/?token=${encodeURIComponent(token)}`, { auth: false });
      assertEquals(q.status, 200);
      const postQ = await web.api(`/api/sessions/?token=${encodeURIComponent(token)}`, {
        method: "POST",
        auth: false,
        ...json({}),
      });
      assertEquals(postQ.status, 401);
      const lower = await web.api("/api/sessions/", {
        auth: false,
        headers: { authorization: `bearer ${token}` },
      });
      assertEquals(lower.status, 200);
      // DNS rebinding: a page of another name resolved to 127.0.0.1 is refused
      const rebind = await rawGet(web.port, "/api/sessions/", {
        host: "evil.example",
        authorization: `Bearer ${token}`,
      });
      assert(rebind.startsWith("HTTP/1.1 403"), rebind);
      assert(rebind.includes("Invalid Host header"), rebind);

      const created = await web.api("/api/sessions/", {
        method: "POST",
        ...json({ work_dir: sb.workDir }),
      });
      const id = (await created.json()).session_id;
      const noTok = await web.socket(id, { token: null });
      assertEquals(await noTok.waitClosed(), { code: 4401, reason: "Auth required" });
      const badTok = await web.socket(id, { token: "wrong" });
      assertEquals((await badTok.waitClosed()).code, 4401);

      // rotate-token: the running server takes the new token at once
      const rot = await sb.run(["web", "rotate-token"]);
      assertEquals(rot.code, 0, rot.stderr);
      const fresh = (await Deno.readTextFile(file)).trim();
      assert(fresh !== token && rot.stdout.includes(fresh));
      assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600);
      assertEquals((await web.api("/api/sessions/")).status, 401);
      const withNew = await web.api("/api/sessions/", {
        headers: { authorization: `Bearer ${fresh}` },
      });
      assertEquals(withNew.status, 200);

      // the token is reused across restarts
      assertEquals(await web.stop(), 0);
      web = await startWeb(sb, { config });
      assertEquals(web.token, fresh);

      // requests without a token do not count towards the ban
      for (let i = 0; i < 12; i++) {
        assertEquals((await web.api("/api/sessions/", { auth: false })).status, 401);
      }
      assertEquals((await web.api("/api/sessions/")).status, 200);
      // ten wrong tokens: the address is refused, even with the right token
      for (let i = 0; i < 10; i++) {
        const r = await web.api("/api/sessions/", { headers: { authorization: `Bearer bad${i}` } });
        assertEquals(r.status, 401);
      }
      const banned = await web.api("/api/sessions/");
      assertEquals(banned.status, 429);
      assertEquals(await banned.json(), { detail: "Too many failed auth attempts" });
      const bannedWs = await web.socket(id);
      assertEquals((await bannedWs.waitClosed()).code, 4429);
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web security: non-loopback binds need the token; public mode checks Origin and " +
    "restricts sensitive APIs",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: hi"]);
    const lan = await startWeb(sb, { config, args: ["--network"] });
    try {
      assert(lan.stdout().includes("LAN mode"), lan.stdout());
      assertEquals((await lan.api("/api/sessions/", { auth: false })).status, 401);
      assertEquals((await lan.api("/api/sessions/")).status, 200);
      // LAN mode: Origin is not enforced (CORS only)
      const other = await lan.api("/api/sessions/", { headers: { origin: "http://evil.example" } });
      assertEquals(other.status, 200);
      assertEquals(other.headers.get("access-control-allow-origin"), null);
    } finally {
      assertEquals(await lan.stop(), 0);
    }
    const pub = await startWeb(sb, { config, args: ["--network", "--public"] });
    try {
      assert(pub.stdout().includes("Sensitive APIs are restricted"), pub.stdout());
      const bad = await pub.api("/api/sessions/", { headers: { origin: "http://evil.example" } });
      assertEquals(bad.status, 403);
      assertEquals(await bad.json(), { detail: "Origin not allowed" });
      const good = await pub.api("/api/sessions/", {
        headers: { origin: `http://localhost:${pub.port}` },
      });
      assertEquals(good.status, 200);
      assertEquals(good.headers.get("access-control-allow-origin"), `http://localhost:${pub.port}`);
      const patch = await pub.api("/api/config/", { method: "PATCH", ...json({}) });
      assertEquals(patch.status, 403);
      assertEquals(await patch.json(), {
        detail: "Sensitive config APIs are disabled in this mode.",
      });
      assertEquals((await pub.api("/api/config/toml")).status, 403);
      const openIn = await pub.api("/api/open-in", {
        method: "POST",
        ...json({ app: "finder", path: "/" }),
      });
      assertEquals(openIn.status, 405);
      const created = await pub.api("/api/sessions/", {
        method: "POST",
        ...json({ work_dir: sb.workDir }),
      });
      const id = (await created.json()).session_id;
      const ws = await pub.socket(id, { origin: "http://evil.example" });
      assertEquals(await ws.waitClosed(), { code: 4403, reason: "Origin not allowed" });
      // public mode hides dot files
      await Deno.writeTextFile(`${sb.workDir}/.hidden`, "x");
      await Deno.writeTextFile(`${sb.workDir}/shown.txt`, "x");
      const list = await (await pub.api(`/api/sessions/${id}/files/`)).json();
      assertEquals(list, [{ name: "shown.txt", type: "file", size: 1 }]);
      const dot = await pub.api(`/api/sessions/${id}/files/.hidden`);
      assertEquals(dot.status, 403);
      assertEquals(await dot.json(), { detail: "Access to sensitive files is disabled." });
    } finally {
      assertEquals(await pub.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web security: file routes refuse traversal, symlink escapes, /proc and control files",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: hi"]);
    const web = await startWeb(sb, { config });
    try {
      // the work dir is the home, which holds the share dir (token, sessions)
      const home = sb.home;
      await Deno.writeTextFile(`${home}/readme.txt`, "hello");
      await Deno.writeTextFile(`${home}/.env`, "API_KEY=x");
      await Deno.mkdir(`${sb.root}/outside`);
      await Deno.writeTextFile(`${sb.root}/outside/secret.txt`, "outside");
      await Deno.symlink(`${sb.root}/outside/secret.txt`, `${home}/link-out`);
      await Deno.symlink(`${sb.shareDir}/web/token`, `${home}/link-token`);
      await Deno.symlink("/proc/self/environ", `${home}/proc-env`);
      await Deno.symlink(sb.root, `${home}/up`);
      const created = await web.api("/api/sessions/", {
        method: "POST",
        ...json({ work_dir: home }),
      });
      const id = (await created.json()).session_id;
      const get = (p: string) => web.api(`/api/sessions/${id}/files/${p}`);

      const ok = await get("readme.txt");
      assertEquals(ok.status, 200);
      assertEquals(await ok.text(), "hello");
      assert(ok.headers.get("content-disposition")!.startsWith("attachment;"));
      const names = (await (await get("")).json()).map((e: { name: string }) => e.name);
      assert(names.includes("readme.txt"), names.join());
      for (const hidden of [".kimi", ".env", "link-token", "proc-env"]) {
        assert(!names.includes(hidden), `${hidden} listed: ${names.join()}`);
      }
      for (const p of ["..%2Foutside%2Fsecret.txt", "a%2F..%2F..%2Fx", "%2Fetc%2Fpasswd"]) {
        const r = await get(p);
        assertEquals(r.status, 400, p);
        assertEquals((await r.json()).detail, "Invalid path: path traversal not allowed");
      }
      for (
        const p of [
          "link-out",
          "up/outside/secret.txt",
          "link-token",
          "proc-env",
          ".kimi/web/token",
          ".kimi/web",
          ".kimi",
          ".env",
        ]
      ) {
        const r = await get(p);
        assertEquals(r.status, 403, p);
        const body = await r.text();
        assert(!body.includes(web.token!) && !body.includes("outside\n"), body);
      }
      const missing = await get("nope.txt");
      assertEquals(missing.status, 404);
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web security: a confined Shell command calling the server gets 401 and cannot " +
    "read the token file",
  ignore: BWRAP_PROBLEM !== null || !(await hasCurl()),
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await scriptedConfigFile(sb, []);
    const scriptsPath = JSON.parse(await Deno.readTextFile(config)).providers.echo.env
      .KIMI_SCRIPTED_ECHO_SCRIPTS;
    const flags = [...await flagsFor(sb, "narrow"), "--allow-net"];
    const web = await startWeb(sb, { config, permissions: flags, rootArgs: ["--yolo"] });
    try {
      const command = `curl -s -o /dev/null -w 'status=%{http_code}\\n' ` +
        `http://127.0.0.1:${web.port}/api/config/toml; ` +
        `cat ${sb.shareDir}/web/token && echo READ-TOKEN || echo NO-TOKEN`;
      await Deno.writeTextFile(
        scriptsPath,
        JSON.stringify([toolCallLine("tc-1", "Shell", { command }), "text: done"]),
      );
      const created = await web.api("/api/sessions/", {
        method: "POST",
        ...json({ work_dir: sb.workDir }),
      });
      const id = (await created.json()).session_id;
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      ws.send({ jsonrpc: "2.0", id: "p", method: "prompt", params: { user_input: "go" } });
      await ws.waitFor((f) => f.id === "p" && "result" in f);
      const result = ws.frames.find((f) =>
        f.method === "event" && (f.params as { type: string }).type === "ToolResult"
      )!;
      const out = JSON.stringify(result.params);
      assert(out.includes("sandboxed") || out.includes("status="), out);
      assert(out.includes("status=401"), out);
      assert(out.includes("NO-TOKEN") && !out.includes(web.token!), out);
      ws.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

/** A GET over a raw socket (fetch would set its own Host header); resolves with the reply. */
async function rawGet(port: number, path: string, headers: Record<string, string>) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  await conn.write(
    new TextEncoder().encode(`GET ${path} HTTP/1.1\r\n${head}connection: close\r\n\r\n`),
  );
  const text = await new Response(conn.readable).text();
  return text;
}

async function hasCurl(): Promise<boolean> {
  try {
    return (await new Deno.Command("curl", { args: ["--version"], stdout: "null" }).output())
      .success;
  } catch {
    return false;
  }
}

Deno.test({
  name: "kimi web under the review profile serves, but no session can write",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await scriptedConfigFile(sb, []);
    const scriptsPath = JSON.parse(await Deno.readTextFile(config)).providers.echo.env
      .KIMI_SCRIPTED_ECHO_SCRIPTS;
    const flags = profileFlags("review", {
      shareDir: sb.shareDir,
      workDir: sb.workDir,
      addDirs: [],
      modelHost: null,
      rgPath: null,
      listenHost: scanKimiArgs(["web", "--no-open"]).webHost,
    });
    const target = `${sb.workDir}/written.txt`;
    await Deno.writeTextFile(
      scriptsPath,
      JSON.stringify([
        toolCallLine("tc-1", "WriteFile", { path: target, content: "x" }),
        "text: done",
      ]),
    );
    const web = await startWeb(sb, { config, permissions: flags, rootArgs: ["--yolo"] });
    try {
      const created = await web.api("/api/sessions/", {
        method: "POST",
        ...json({ work_dir: sb.workDir }),
      });
      assertEquals(created.status, 200);
      const id = (await created.json()).session_id;
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      ws.send({ jsonrpc: "2.0", id: "p", method: "prompt", params: { user_input: "write" } });
      await ws.waitFor((f) => f.id === "p" && "result" in f);
      const result = ws.frames.find((f) =>
        f.method === "event" && (f.params as { type: string }).type === "ToolResult"
      )!;
      const out = JSON.stringify(result.params);
      // the review scope leaves WriteFile out of the toolset: the call is refused
      assert(out.includes('"is_error":true') && out.includes("WriteFile"), out);
      await Deno.stat(target).then(() => assert(false, "written"), () => {});
      ws.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web security: --dangerously-omit-auth serves loopback without a token and is " +
    "refused off loopback without a terminal",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: hi"]);
    const refused = await sb.run([
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
      "-n",
      "--dangerously-omit-auth",
    ]);
    assertEquals(refused.code, 1);
    assert(refused.stdout.includes("SECURITY WARNING"), refused.stdout);
    assert(
      refused.stderr.includes("Refusing to start without auth in non-interactive mode."),
      refused.stderr,
    );
    const web = await startWeb(sb, { config, args: ["--dangerously-omit-auth"] });
    try {
      assertEquals(web.token, null);
      assert(web.stdout().includes("AUTH DISABLED"), web.stdout());
      assertEquals((await web.api("/api/sessions/")).status, 200);
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});
