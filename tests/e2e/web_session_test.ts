import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startWeb, type WebServer, type WsClient } from "../helpers/web_server.ts";
import { spawnWire } from "../helpers/wire_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { parseEventPayload, parseRequestPayload } from "@moonshot-ai/kimi-agent-sdk/schema";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** Every `event` and `request` frame parses with the official SDK's schemas. */
function assertSdkParses(frames: Record<string, unknown>[]): void {
  for (const f of frames) {
    const params = f.params as { type?: string; payload?: unknown } | undefined;
    if (f.method === "event" && params?.type !== "SessionNotice") {
      const r = parseEventPayload(params!.type!, params!.payload);
      assert(r.ok, `SDK rejects event ${JSON.stringify(f).slice(0, 300)}: ${!r.ok && r.error}`);
    } else if (f.method === "request") {
      const r = parseRequestPayload(params!.type!, params!.payload);
      assert(r.ok, `SDK rejects request ${JSON.stringify(f).slice(0, 300)}: ${!r.ok && r.error}`);
    }
  }
}

async function createSession(web: WebServer, workDir: string): Promise<string> {
  const res = await web.api("/api/sessions/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ work_dir: workDir }),
  });
  assertEquals(res.status, 200);
  const s = await res.json();
  assertEquals(s.work_dir, workDir);
  assertEquals(s.archived, false);
  return s.session_id;
}

/** Send a prompt and wait for its result; resolves with the frames from the prompt on. */
async function prompt(ws: WsClient, text: string, id = crypto.randomUUID()) {
  const from = ws.frames.length;
  ws.send({ jsonrpc: "2.0", id, method: "prompt", params: { user_input: text } });
  const result = await ws.waitFor((f) => f.id === id && ("result" in f || "error" in f), from);
  return { result, frames: ws.frames.slice(from) };
}

const eventTypes = (frames: Record<string, unknown>[]) =>
  frames.filter((f) => f.method === "event").map((f) => (f.params as { type: string }).type);

Deno.test({
  name: "kimi web: create a session, prompt over the socket to the end, second socket, replay",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: hello from web", "text: second answer"]);
    const web = await startWeb(sb, { config });
    try {
      assert(web.token && web.token.length >= 40, web.stdout());
      assert(web.stdout().includes(`#token=`), "banner URL carries the token in the fragment");
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      // empty history, then the status snapshot
      await ws.waitFor((f) => f.method === "history_complete");
      const snap = await ws.waitFor((f) => f.method === "session_status");
      assertEquals((snap.params as { state: string }).state, "idle");
      const init = await ws.initialize();
      assert("result" in init, JSON.stringify(init));

      const second = await web.socket(id);
      await second.waitFor((f) => f.method === "session_status");

      const { result } = await prompt(ws, "hi");
      assertEquals(result.result, { status: "finished" });
      // the status turns idle right after the prompt's result
      const idle = await ws.waitFor((f) =>
        f.method === "session_status" && (f.params as { state: string }).state === "idle" &&
        ws.frames.indexOf(f) > ws.frames.indexOf(result)
      );
      const frames = ws.frames.slice(ws.frames.indexOf(snap) + 1, ws.frames.indexOf(idle) + 1);
      assertEquals(eventTypes(frames), [
        "TurnBegin",
        "StepBegin",
        "ContentPart",
        "StatusUpdate",
        "TurnEnd",
      ]);
      const statuses = frames.filter((f) => f.method === "session_status")
        .map((f) => (f.params as { state: string; reason: string }));
      assertEquals(statuses.map((s) => s.state), ["busy", "idle"]);
      assertEquals(statuses[1].reason, "prompt_complete");
      assertSdkParses(ws.frames);

      // the second socket saw the same stream, the prompt's result included
      const seen = await second.waitFor((f) => f.id === result.id && "result" in f);
      assertEquals(seen.result, { status: "finished" });
      assertEquals(
        eventTypes(second.frames),
        eventTypes(ws.frames),
      );

      // the session keeps running when its sockets leave; a new socket gets the replay
      ws.close();
      second.close();
      await ws.waitClosed();
      const again = await web.socket(id);
      await again.waitFor((f) => f.method === "history_complete");
      const hc = again.frames.findIndex((f) => f.method === "history_complete");
      assertEquals(eventTypes(again.frames.slice(0, hc)), [
        "TurnBegin",
        "StepBegin",
        "ContentPart",
        "StatusUpdate",
        "TurnEnd",
      ]);
      const part = again.frames.find((f) =>
        (f.params as { type?: string })?.type === "ContentPart"
      )!;
      assertEquals((part.params as { payload: { text: string } }).payload.text, "hello from web");
      const st = await again.waitFor((f) => f.method === "session_status", hc);
      assertEquals((st.params as { state: string }).state, "idle");
      assertSdkParses(again.frames);
      await again.initialize();
      const r2 = await prompt(again, "more");
      assertEquals(r2.result.result, { status: "finished" });

      // the first prompt of a socket makes it the work dir's last session (`kimi -C` resumes it)
      const meta = JSON.parse(await Deno.readTextFile(`${sb.shareDir}/kimi.json`));
      const entry = meta.work_dirs.find((w: { path: string }) => w.path === sb.workDir);
      assertEquals(entry.last_session_id, id);

      // listed, with its title from the first prompt
      const list = await (await web.api("/api/sessions/")).json();
      assertEquals(list.map((s: { session_id: string }) => s.session_id), [id]);
      assertEquals(list[0].title, "hi");
      assertEquals(list[0].is_running, true);
      again.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: a session another process works in is refused with the holder, not shared",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: wire answer"]);
    const web = await startWeb(sb, { config });
    try {
      const id = await createSession(web, sb.workDir);
      const wire = spawnWire(sb, ["--config-file", config, "--session", id]);
      const init = await wire.call("i", "initialize", { protocol_version: "1.10" });
      assert(init.response.result, JSON.stringify(init.response));
      const ws = await web.socket(id);
      const st = await ws.waitFor((f) => f.method === "session_status");
      const params = st.params as { state: string; reason: string; detail: string };
      assertEquals([params.state, params.reason], ["error", "initialization_failed"]);
      assert(params.detail.includes(String(wire.child.pid)), params.detail);
      assertEquals((await ws.waitClosed()).code, 1011);
      // the other process works in it (so the session is kept when it exits)
      const turn = await wire.call("p", "prompt", { user_input: "from the wire" });
      assertEquals(turn.response.result, { status: "finished" });
      await wire.finish();
      // once the other process is gone, the session opens here
      const again = await web.socket(id);
      const ok = await again.waitFor((f) => f.method === "session_status");
      assertEquals((ok.params as { state: string }).state, "idle", JSON.stringify(ok));
      // with the other process's turn in its history
      const part = again.frames.find((f) =>
        (f.params as { type?: string })?.type === "ContentPart"
      )!;
      assertEquals((part.params as { payload: { text: string } }).payload.text, "wire answer");
      again.close();

      // a session deleted behind the server's back is gone for it too
      const gone = await createSession(web, sb.workDir);
      const dir = (await (await web.api(`/api/sessions/${gone}`)).json()).session_dir;
      await Deno.remove(dir, { recursive: true });
      assertEquals(await (await web.api(`/api/sessions/${gone}`)).json(), null);
      const closed = await web.socket(gone);
      assertEquals((await closed.waitClosed()).code, 4004);
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: the page is served without a token, compressed, with its cache headers",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([]);
    const web = await startWeb(sb, { config });
    try {
      const res = await web.api("/", { auth: false, headers: { "accept-encoding": "gzip" } });
      assertEquals(res.status, 200);
      assert(res.headers.get("content-type")!.startsWith("text/html"));
      assertEquals(res.headers.get("cache-control"), "no-cache, no-store, must-revalidate");
      const html = await res.text();
      assert(html.includes("<html") || html.includes("<!doctype"), html.slice(0, 200));
      // a client route gets the page too; an unknown asset does not
      assertEquals((await web.api("/sessions/x", { auth: false })).status, 200);
      assertEquals((await web.api("/nope.js", { auth: false })).status, 404);
      const raw = await rawGzipCheck(web.port);
      // Deno.serve compresses the page for a client that accepts gzip
      if (new Blob([html]).size >= 1024) assert(raw.includes("content-encoding: gzip"), raw);
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

/** The response head of `/` asked with gzip (fetch would decompress it silently). */
async function rawGzipCheck(port: number): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(
      "GET / HTTP/1.1\r\nhost: 127.0.0.1\r\naccept-encoding: gzip\r\nconnection: close\r\n\r\n",
    ),
  );
  const bytes = new Uint8Array(await new Response(conn.readable).arrayBuffer());
  const text = new TextDecoder("latin1").decode(bytes);
  return text.slice(0, text.indexOf("\r\n\r\n")).toLowerCase();
}

Deno.test({
  name: "kimi web: a busy port falls back to the next one and says so",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([]);
    const blocker = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const busy = (blocker.addr as Deno.NetAddr).port;
    try {
      const web = await startWeb(sb, { config, args: ["--port", String(busy)] });
      try {
        assert(web.port !== busy && web.port > busy && web.port <= busy + 9, String(web.port));
        assert(
          web.stdout().includes(`Port ${busy} is in use, using port ${web.port} instead`),
          web.stdout(),
        );
        assertEquals((await web.api("/healthz")).status, 200);
      } finally {
        assertEquals(await web.stop(), 0);
      }
    } finally {
      blocker.close();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: a tab joining in the middle of a streamed part gets all of it, once",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const chunks = Array.from({ length: 50 }, (_, i) => `chunk-${i};`);
    // the model streams part of its answer, then stalls: the part is still open when B joins
    const mock = await startMockOpenAI({ defaultReply: { text: chunks, stall: true } });
    const config = await sb.openaiConfig(mock.url);
    const web = await startWeb(sb, { config });
    try {
      const id = await createSession(web, sb.workDir);
      const a = await web.socket(id);
      await a.waitFor((f) => f.method === "session_status");
      await a.initialize();
      a.send({ jsonrpc: "2.0", id: "p", method: "prompt", params: { user_input: "stream" } });
      const text = (frames: Record<string, unknown>[]) =>
        frames.filter((f) => (f.params as { type?: string })?.type === "ContentPart")
          .map((f) => (f.params as { payload: { text: string } }).payload.text).join("");
      const expected = chunks.join("");
      while (text(a.frames) !== expected) {
        await a.waitFor(
          (f) => (f.params as { type?: string })?.type === "ContentPart",
          a.frames.length,
        );
      }
      const b = await web.socket(id); // joins while the part is open
      await b.waitFor((f) => f.method === "history_complete");
      assertEquals(text(b.frames), expected);
      assertEquals(eventTypes(b.frames).filter((t) => t === "TurnBegin").length, 1);
      b.send({ jsonrpc: "2.0", id: "c", method: "cancel" });
      const done = await a.waitFor((f) => f.id === "p" && "result" in f);
      assertEquals(done.result, { status: "cancelled" });
      await b.waitFor((f) => f.id === "p" && "result" in f);
      assertEquals(text(b.frames), expected);
      a.close();
      b.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await mock.close();
      await sb.cleanup();
    }
  },
});
