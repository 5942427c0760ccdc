import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { startWeb, type WebServer, type WsClient } from "../helpers/web_server.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const json = (body: unknown): RequestInit => ({
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

async function createSession(web: WebServer, workDir: string): Promise<string> {
  const res = await web.api("/api/sessions/", { method: "POST", ...json({ work_dir: workDir }) });
  assertEquals(res.status, 200);
  return (await res.json()).session_id;
}

async function promptTo(ws: WsClient, text: string, id: string = crypto.randomUUID()) {
  const from = ws.frames.length;
  ws.send({ jsonrpc: "2.0", id, method: "prompt", params: { user_input: text } });
  return await ws.waitFor((f) => f.id === id && ("result" in f || "error" in f), from);
}

const isEvent = (type: string) => (f: Record<string, unknown>) =>
  f.method === "event" && (f.params as { type: string }).type === type;

Deno.test({
  name: "kimi web: approve a Shell call over the socket; a prompt while busy and an idle cancel",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([
      toolCallLine("tc-1", "Shell", { command: "echo approved-run" }),
      "text: shell done",
    ]);
    const web = await startWeb(sb, { config });
    try {
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      // cancel with nothing running: answered at once
      ws.send({ jsonrpc: "2.0", id: "c0", method: "cancel" });
      assertEquals((await ws.waitFor((f) => f.id === "c0")).result, {});

      ws.send({ jsonrpc: "2.0", id: "p1", method: "prompt", params: { user_input: "run it" } });
      const req = await ws.waitFor((f) => f.method === "request");
      const params = req.params as { type: string; payload: { id: string; sender: string } };
      assertEquals(params.type, "ApprovalRequest");
      assertEquals(params.payload.sender, "Shell");
      // busy: a second prompt is refused with the reference's error
      const busy = await promptTo(ws, "again", "p2");
      assertEquals(busy.error, {
        code: -32000,
        message: "Session is busy; wait for completion before sending a new prompt.",
      });
      // editing a busy session is refused too
      const patch = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ title: "x" }),
      });
      assertEquals(patch.status, 400);
      assertEquals(
        (await patch.json()).detail,
        "Session is busy. Please wait for it to complete before modifying.",
      );
      // pinning is a list preference: allowed while a turn runs
      const pinBusy = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ pinned: true }),
      });
      assertEquals(pinBusy.status, 200);
      assertEquals((await pinBusy.json()).pinned, true);
      // ...but not together with a title change
      const pinAndTitle = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ pinned: false, title: "x" }),
      });
      assertEquals(pinAndTitle.status, 400);
      assertEquals((await web.api(`/api/sessions/${id}`).then((r) => r.json())).pinned, true);
      ws.send({
        jsonrpc: "2.0",
        id: req.id,
        result: { request_id: params.payload.id, response: "approve" },
      });
      const done = await ws.waitFor((f) => f.id === "p1" && "result" in f);
      assertEquals(done.result, { status: "finished" });
      // the running session's own state writes kept the pin
      const after = await (await web.api(`/api/sessions/${id}`)).json();
      assertEquals(after.pinned, true);
      assertEquals(
        JSON.parse(await Deno.readTextFile(`${after.session_dir}/state.json`)).pinned,
        true,
      );
      const result = ws.frames.find(isEvent("ToolResult"))!;
      const output = JSON.stringify((result.params as { payload: unknown }).payload);
      assert(output.includes("approved-run"), output);
      assert(ws.frames.some(isEvent("ApprovalResponse")));
      ws.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: an uploaded file reaches the next prompt, once; uploads are served back",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: got it", "text: plain"]);
    const web = await startWeb(sb, { config });
    try {
      const id = await createSession(web, sb.workDir);
      const form = new FormData();
      form.append("file", new File(["sauce-recipe-42\n"], "../My Notes!.txt"));
      const up = await web.api(`/api/sessions/${id}/files`, { method: "POST", body: form });
      assertEquals(up.status, 200);
      const saved = await up.json();
      assert(/^My Notes_[0-9a-f]{6}\.txt$/.test(saved.filename), saved.filename);
      assertEquals(saved.size, 16);
      const back = await web.api(
        `/api/sessions/${id}/uploads/${encodeURIComponent(saved.filename)}`,
      );
      assertEquals(back.status, 200);
      assertEquals(await back.text(), "sauce-recipe-42\n");
      assert(back.headers.get("content-disposition")!.startsWith("inline;"));
      const trav = await web.api(`/api/sessions/${id}/uploads/..%2F..%2Fstate.json`);
      assertEquals(trav.status, 400);
      assertEquals((await trav.json()).detail, "Invalid path: path traversal not allowed");

      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      const r = await promptTo(ws, "what is in the file?");
      assertEquals(r.result, { status: "finished" });
      const begin = ws.frames.find(isEvent("TurnBegin"))!;
      const input = (begin.params as { payload: { user_input: { type: string; text: string }[] } })
        .payload.user_input;
      assert(Array.isArray(input));
      assert(input[0].text.startsWith("<uploaded_files>\n1. "), input[0].text);
      assert(input[0].text.includes(saved.filename));
      assert(input.some((p) => p.text?.includes("sauce-recipe-42")), JSON.stringify(input));
      assertEquals(input.at(-1)!.text, "what is in the file?");
      // the next prompt does not carry it again
      const from = ws.frames.length;
      await promptTo(ws, "next");
      const begin2 = ws.frames.slice(from).find(isEvent("TurnBegin"))!;
      assertEquals(
        (begin2.params as { payload: { user_input: unknown } }).payload.user_input,
        "next",
      );
      ws.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: fork, rename, archive, delete; bad input gets precise statuses",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: one", "text: two"]);
    const web = await startWeb(sb, { config });
    try {
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      await promptTo(ws, "first question");
      await promptTo(ws, "second question");

      const bad = await web.api(`/api/sessions/${id}/fork`, {
        method: "POST",
        ...json({ turn_index: 5 }),
      });
      assertEquals(bad.status, 400);
      assertEquals((await bad.json()).detail, "turn_index 5 out of range (max turn: 1)");
      const fres = await web.api(`/api/sessions/${id}/fork`, {
        method: "POST",
        ...json({ turn_index: 0 }),
      });
      assertEquals(fres.status, 200);
      const fork = await fres.json();
      assert(fork.session_id !== id);
      assertEquals(fork.title, "Fork: first question");
      const fws = await web.socket(fork.session_id);
      await fws.waitFor((f) => f.method === "history_complete");
      const begins = fws.frames.filter(isEvent("TurnBegin"));
      assertEquals(begins.length, 1);
      fws.close();

      const ren = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ title: "Renamed" }),
      });
      assertEquals(ren.status, 200);
      assertEquals((await ren.json()).title, "Renamed");
      const arc = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ archived: true }),
      });
      assertEquals((await arc.json()).archived, true);
      const live = await (await web.api("/api/sessions/")).json();
      assertEquals(live.map((s: { session_id: string }) => s.session_id), [fork.session_id]);
      const archived = await (await web.api("/api/sessions/?archived=true")).json();
      assertEquals(archived.map((s: { session_id: string }) => s.session_id), [id]);
      const found = await (await web.api("/api/sessions/?q=renam&archived=true")).json();
      assertEquals(found.length, 1);

      // bad input
      const malformed = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: "{not json",
      });
      assertEquals(malformed.status, 422);
      assertEquals((await malformed.json()).detail[0].type, "json_invalid");
      const longTitle = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ title: "x".repeat(201) }),
      });
      assertEquals(longTitle.status, 422);
      assertEquals((await longTitle.json()).detail[0].loc, ["body", "title"]);
      const unknown = await web.api(`/api/sessions/${crypto.randomUUID()}/git-diff`);
      assertEquals(unknown.status, 404);
      assertEquals(await unknown.json(), { detail: "Session not found" });
      assertEquals(await (await web.api(`/api/sessions/${crypto.randomUUID()}`)).json(), null);
      assertEquals((await web.api(`/api/sessions/..%2Fx`)).status, 422);
      const huge = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ title: "y".repeat(2 * 1024 * 1024) }),
      });
      assertEquals(huge.status, 413);
      const missingDir = await web.api("/api/sessions/", {
        method: "POST",
        ...json({ work_dir: `${sb.root}/nope` }),
      });
      assertEquals(missingDir.status, 404);
      assertEquals((await missingDir.json()).detail, `Directory does not exist: ${sb.root}/nope`);
      const made = await web.api("/api/sessions/", {
        method: "POST",
        ...json({ work_dir: `${sb.root}/made`, create_dir: true }),
      });
      assertEquals(made.status, 200);
      assertEquals((await Deno.stat(`${sb.root}/made`)).isDirectory, true);
      const bare = await web.api("/api/sessions");
      assertEquals(bare.status, 404);

      // delete closes the sockets and removes the files
      const dir = (await (await web.api(`/api/sessions/${id}`)).json()).session_dir;
      const del = await web.api(`/api/sessions/${id}`, { method: "DELETE" });
      assertEquals(del.status, 200);
      assertEquals(await del.json(), null);
      assertEquals((await ws.waitClosed()).code, 1001);
      assertEquals(await (await web.api(`/api/sessions/${id}`)).json(), null);
      await Deno.stat(dir).then(() => assert(false, "session dir kept"), () => {});
      const gone = await web.socket(id);
      assertEquals((await gone.waitClosed()).code, 4004);

      // the server is still healthy
      assertEquals(await (await web.api("/healthz")).json(), { status: "ok" });
      const doc = await (await web.api("/openapi.json")).json();
      assert(doc.paths["/api/sessions/{id}/fork"].post.requestBody);
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: config read and patch restarts idle running sessions",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([
      toolCallLine("tc-1", "Shell", { command: "echo after-restart" }),
      "text: done",
    ]);
    const web = await startWeb(sb, { config });
    try {
      const cfg = await (await web.api("/api/config/")).json();
      assertEquals(cfg.default_model, "scripted");
      assertEquals(cfg.models[0].name, "scripted");
      assertEquals(cfg.models[0].provider_type, "_scripted_echo");
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      const from = ws.frames.length;
      const res = await web.api("/api/config/", {
        method: "PATCH",
        ...json({ default_thinking: true }),
      });
      assertEquals(res.status, 200);
      const body = await res.json();
      assertEquals(body.restarted_session_ids, [id]);
      assertEquals(body.skipped_busy_session_ids, []);
      assertEquals(body.config.default_thinking, true);
      const notice = await ws.waitFor(isEvent("SessionNotice"), from);
      const payload = (notice.params as { payload: { kind: string; reason: string } }).payload;
      assertEquals([payload.kind, payload.reason], ["restart", "config_update"]);
      const states = ws.frames.slice(from).filter((f) => f.method === "session_status")
        .map((f) => (f.params as { state: string }).state);
      assertEquals(states, ["restarting", "idle"]);
      // the restarted server is initialized with the clients' last initialize: a prompt works
      // on the same socket without a new initialize
      const mark = ws.frames.length;
      ws.send({ jsonrpc: "2.0", id: "pa", method: "prompt", params: { user_input: "run" } });
      const req = await ws.waitFor((f) => f.method === "request", mark);
      const reqId = (req.params as { payload: { id: string } }).payload.id;
      ws.send({ jsonrpc: "2.0", id: req.id, result: { request_id: reqId, response: "approve" } });
      const after = await ws.waitFor((f) => f.id === "pa" && "result" in f, mark);
      assertEquals(after.result, { status: "finished" });
      // A prompt sent while a config change restarts the session waits for the new agent: it
      // is neither refused nor lost with the old one.
      const mark2 = ws.frames.length;
      const patching = web.api("/api/config/", {
        method: "PATCH",
        ...json({ default_thinking: false }),
      });
      await ws.waitFor(
        (f) =>
          f.method === "session_status" && (f.params as { state: string }).state === "restarting",
        mark2,
      );
      ws.send({ jsonrpc: "2.0", id: "pb", method: "prompt", params: { user_input: "again" } });
      const patched = await (await patching).json();
      assertEquals(patched.restarted_session_ids, [id]);
      assertEquals(patched.skipped_busy_session_ids, []);
      // the new agent runs it (its scripted model starts its script again: the Shell call)
      const req2 = await ws.waitFor((f) => f.method === "request", mark2);
      const req2Id = (req2.params as { payload: { id: string } }).payload.id;
      ws.send({ jsonrpc: "2.0", id: req2.id, result: { request_id: req2Id, response: "approve" } });
      const second = await ws.waitFor((f) => f.id === "pb", mark2);
      assertEquals(second.result, { status: "finished" });
      const unknown = await web.api("/api/config/", {
        method: "PATCH",
        ...json({ default_model: "nope" }),
      });
      assertEquals(unknown.status, 400);
      assertEquals((await unknown.json()).detail, "Model 'nope' not found in config");
      ws.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: malformed frames get JSON-RPC errors; Ctrl-C cancels a running turn and exits 0",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([
      toolCallLine("tc-1", "Shell", { command: "sleep 60" }),
      "text: never",
    ]);
    const web = await startWeb(sb, { config, rootArgs: ["--yolo"] });
    try {
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      ws.ws.send("{not json");
      const parseError = await ws.waitFor((f) => "error" in f && f.id === null);
      assertEquals((parseError.error as { code: number }).code, -32700);
      ws.send({ jsonrpc: "2.0", id: "u1", method: "no_such_method" });
      const unknown = await ws.waitFor((f) => f.id === "u1");
      assertEquals((unknown.error as { code: number }).code, -32601);
      await ws.initialize();
      ws.send({ jsonrpc: "2.0", id: "p", method: "prompt", params: { user_input: "wait" } });
      await ws.waitFor((f) =>
        f.method === "event" && (f.params as { type: string }).type === "ToolCall"
      );
      assertEquals(await web.stop(), 0);
      const closed = await ws.waitClosed();
      assertEquals(closed.code, 1001);
      const wire = await Deno.readTextFile(
        (await sb.sessionDirs()).find((d) => d.endsWith(id))! + "/wire.jsonl",
      );
      assert(wire.includes('"TurnBegin"'), wire);
    } finally {
      await web.stop();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: generate-title asks the model once; a rename later wins",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([
      "text: the answer",
      'text: "Fixing The Flaky Build"',
    ]);
    const web = await startWeb(sb, { config });
    try {
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      await promptTo(ws, "why does the build fail sometimes?");
      const gen = () =>
        web.api(`/api/sessions/${id}/generate-title`, {
          method: "POST",
          ...json({ assistant_response: "the answer" }),
        });
      const r = await gen();
      assertEquals(r.status, 200);
      assertEquals(await r.json(), { title: "Fixing The Flaky Build" });
      // already generated: the model is not asked again (the script is exhausted)
      assertEquals(await (await gen()).json(), { title: "Fixing The Flaky Build" });
      const info = await (await web.api(`/api/sessions/${id}`)).json();
      assertEquals(info.title, "Fixing The Flaky Build");
      const ren = await web.api(`/api/sessions/${id}`, {
        method: "PATCH",
        ...json({ title: "Mine" }),
      });
      assertEquals((await ren.json()).title, "Mine");
      assertEquals(await (await gen()).json(), { title: "Mine" });
      ws.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: git-diff stats, work dirs, config.toml with masked secrets, open-in on Linux",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: a"]);
    const web = await startWeb(sb, { config });
    const git = (...args: string[]) =>
      new Deno.Command("git", {
        args: ["-c", "user.email=t@e", "-c", "user.name=t", ...args],
        cwd: sb.workDir,
        stdout: "null",
        stderr: "null",
      }).output();
    try {
      const id = await createSession(web, sb.workDir);
      const notRepo = await (await web.api(`/api/sessions/${id}/git-diff`)).json();
      assertEquals(notRepo.is_git_repo, false);
      await git("init", "-q");
      await Deno.writeTextFile(`${sb.workDir}/a.txt`, "one\ntwo\n");
      await Deno.writeTextFile(`${sb.workDir}/b.txt`, "x\n");
      await Deno.writeTextFile(`${sb.workDir}/c.txt`, "gone\n");
      await Deno.writeTextFile(`${sb.workDir}/r.txt`, "moved\nas\nis\n");
      await git("add", "a.txt", "b.txt", "c.txt", "r.txt");
      await git("commit", "-q", "-m", "init");
      await Deno.writeTextFile(`${sb.workDir}/a.txt`, "one\nthree\nfour\n");
      await Deno.writeTextFile(`${sb.workDir}/b.txt`, "x\ny\n");
      await Deno.remove(`${sb.workDir}/c.txt`);
      await Deno.writeTextFile(`${sb.workDir}/d.txt`, "staged\n");
      await git("add", "d.txt");
      await git("mv", "r.txt", "s.txt");
      await Deno.writeTextFile(`${sb.workDir}/new.txt`, "x\n");
      const diff = await (await web.api(`/api/sessions/${id}/git-diff`)).json();
      // `status` is the reference's guess from the line counts (b.txt only gained lines);
      // `change` is what git says.
      assertEquals(diff, {
        is_git_repo: true,
        has_changes: true,
        total_additions: 4,
        total_deletions: 2,
        files: [
          { path: "a.txt", additions: 2, deletions: 1, status: "modified", change: "modified" },
          { path: "b.txt", additions: 1, deletions: 0, status: "added", change: "modified" },
          { path: "c.txt", additions: 0, deletions: 1, status: "deleted", change: "deleted" },
          { path: "d.txt", additions: 1, deletions: 0, status: "added", change: "added" },
          {
            path: "r.txt => s.txt",
            additions: 0,
            deletions: 0,
            status: "modified",
            change: "renamed",
          },
          { path: "new.txt", additions: 0, deletions: 0, status: "added", change: "untracked" },
        ],
        error: null,
      });

      const startup = await (await web.api("/api/work-dirs/startup")).json();
      assertEquals(startup, sb.workDir);
      assert(Array.isArray(await (await web.api("/api/work-dirs/")).json()));

      // config.toml: the config file in use (JSON here) with its secrets masked
      const cfg = JSON.parse(await Deno.readTextFile(config));
      cfg.providers.echo.api_key = "sk-web-secret-999";
      await Deno.writeTextFile(config, JSON.stringify(cfg));
      const toml = await (await web.api("/api/config/toml")).json();
      assertEquals(toml.path, config);
      assert(!toml.content.includes("sk-web-secret-999"), toml.content);
      const put = await web.api("/api/config/toml", {
        method: "PUT",
        ...json({
          content: toml.content.replace('"default_thinking": false', '"default_thinking": true'),
        }),
      });
      assertEquals(await put.json(), { success: true });
      const saved = JSON.parse(await Deno.readTextFile(config));
      assertEquals(saved.providers.echo.api_key, "sk-web-secret-999");
      const bad = await web.api("/api/config/toml", { method: "PUT", ...json({ content: "{" }) });
      assertEquals((await bad.json()).success, false);

      if (Deno.build.os === "linux") {
        const open = await web.api("/api/open-in", {
          method: "POST",
          ...json({ app: "vscode", path: sb.workDir }),
        });
        assertEquals(open.status, 400);
        assertEquals(await open.json(), {
          detail: "Open-in is only supported on macOS and Windows.",
        });
      }
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name:
    "kimi web: another tab is told the session is busy, and may answer the running turn's approval",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([
      toolCallLine("tc-1", "Shell", { command: "echo from-tab-b" }),
      "text: done",
    ]);
    const web = await startWeb(sb, { config });
    try {
      const id = await createSession(web, sb.workDir);
      const a = await web.socket(id);
      const b = await web.socket(id);
      await a.waitFor((f) => f.method === "session_status");
      await b.waitFor((f) => f.method === "session_status");
      await a.initialize();
      a.send({ jsonrpc: "2.0", id: "pa", method: "prompt", params: { user_input: "from a" } });
      const req = await b.waitFor((f) => f.method === "request");
      b.send({ jsonrpc: "2.0", id: "pb", method: "prompt", params: { user_input: "from b" } });
      const busy = await b.waitFor((f) => f.id === "pb");
      assertEquals((busy.error as { code: number }).code, -32000);
      // tab a never sees tab b's refusal
      assert(!a.frames.some((f) => f.id === "pb"));
      const reqId = (req.params as { payload: { id: string } }).payload.id;
      b.send({ jsonrpc: "2.0", id: req.id, result: { request_id: reqId, response: "approve" } });
      const done = await a.waitFor((f) => f.id === "pa" && "result" in f);
      assertEquals(done.result, { status: "finished" });
      assertEquals(a.frames.filter(isEvent("TurnBegin")).length, 1);
      const out = JSON.stringify(a.frames.find(isEvent("ToolResult")));
      assert(out.includes("from-tab-b"), out);
      a.close();
      b.close();
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: pin and unpin a session (stored in state.json, listed, kept across restarts)",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: hi"]);
    let web = await startWeb(sb, { config });
    try {
      const a = await createSession(web, sb.workDir);
      const b = await createSession(web, sb.workDir);
      // a used session (the server does not keep empty ones across a restart)
      const ws = await web.socket(a);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      assertEquals((await promptTo(ws, "hello")).result, { status: "finished" });
      ws.close();
      const info = await (await web.api(`/api/sessions/${a}`)).json();
      assertEquals(info.pinned, false);
      const statePath = `${info.session_dir}/state.json`;

      const pin = await web.api(`/api/sessions/${a}`, {
        method: "PATCH",
        ...json({ pinned: true }),
      });
      assertEquals(pin.status, 200);
      const pinned = await pin.json();
      assertEquals([pinned.session_id, pinned.pinned, pinned.archived], [a, true, false]);
      assertEquals(JSON.parse(await Deno.readTextFile(statePath)).pinned, true);
      const list = await (await web.api("/api/sessions/")).json();
      const flags = Object.fromEntries(
        list.map((s: { session_id: string; pinned: boolean }) => [s.session_id, s.pinned]),
      );
      assertEquals(flags, { [a]: true, [b]: false });

      // bad input: a precise 422, nothing changed
      for (const body of [{ pinned: "yes" }, { pinned: null }, { pinned: 1 }]) {
        const bad = await web.api(`/api/sessions/${a}`, { method: "PATCH", ...json(body) });
        assertEquals(bad.status, 422);
        assertEquals((await bad.json()).detail[0].loc, ["body", "pinned"]);
      }
      const unknown = await web.api(`/api/sessions/${crypto.randomUUID()}`, {
        method: "PATCH",
        ...json({ pinned: true }),
      });
      assertEquals(unknown.status, 404);
      assertEquals(await unknown.json(), { detail: "Session not found" });
      assertEquals((await (await web.api(`/api/sessions/${a}`)).json()).pinned, true);

      // a title change keeps the pin
      await web.api(`/api/sessions/${a}`, { method: "PATCH", ...json({ title: "kept" }) });
      assertEquals((await (await web.api(`/api/sessions/${a}`)).json()).pinned, true);

      // kept across a restart of the server
      assertEquals(await web.stop(), 0);
      web = await startWeb(sb, { config });
      assertEquals((await (await web.api(`/api/sessions/${a}`)).json()).pinned, true);

      // unpinned: the field leaves state.json (it is not a reference field)
      const unpin = await web.api(`/api/sessions/${a}`, {
        method: "PATCH",
        ...json({ pinned: false }),
      });
      assertEquals((await unpin.json()).pinned, false);
      assertEquals("pinned" in JSON.parse(await Deno.readTextFile(statePath)), false);
    } finally {
      assertEquals(await web.stop(), 0);
      await sb.cleanup();
    }
  },
});
