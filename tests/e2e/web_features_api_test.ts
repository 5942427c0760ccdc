/**
 * `kimi web`'s background task routes, the session ZIP export, `/undo` over the session socket
 * and cross-session search, end to end through `main.ts web` with the scripted provider.
 */
import { unzipSync } from "fflate";
import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { type MockReply, startMockOpenAI } from "../helpers/mock_openai.ts";
import { startWeb, type WebServer, type WsClient } from "../helpers/web_server.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function createSession(web: WebServer, workDir: string): Promise<string> {
  const res = await web.api("/api/sessions/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ work_dir: workDir }),
  });
  assertEquals(res.status, 200);
  return (await res.json()).session_id;
}

async function prompt(ws: WsClient, text: string): Promise<Record<string, unknown>> {
  const id = crypto.randomUUID();
  const from = ws.frames.length;
  ws.send({ jsonrpc: "2.0", id, method: "prompt", params: { user_input: text } });
  return await ws.waitFor((f) => f.id === id && ("result" in f || "error" in f), from);
}

async function until<T>(probe: () => Promise<T | null>, what: string): Promise<T> {
  for (let i = 0; i < 1200; i++) {
    const v = await probe();
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

interface TaskView {
  subagent_type: string | null;
  task_id: string;
  kind: string;
  status: string;
  description: string;
  command: string | null;
  output_tail: string;
  running: boolean;
  exit_code: number | null;
}

Deno.test({
  name: "kimi web: a background Shell task is listed with its output tail and stopped by REST",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([
      toolCallLine("bg", "Shell", {
        command: "echo bg-started-marker; sleep 120",
        run_in_background: true,
        description: "long sleeper",
      }),
      "text: started it",
    ]);
    const web = await startWeb(sb, { config, rootArgs: ["--yolo"] });
    try {
      const id = await createSession(web, sb.workDir);
      // a cold session has none (and the route does not need its agent)
      const empty = await web.api(`/api/sessions/${id}/tasks`);
      assertEquals(empty.status, 200);
      assertEquals(await empty.json(), { items: [], running: 0 });

      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      assertEquals((await prompt(ws, "start a sleeper")).result, { status: "finished" });

      const task = await until(async () => {
        const list = await (await web.api(`/api/sessions/${id}/tasks`)).json();
        const t = list.items[0] as TaskView | undefined;
        return t && t.output_tail.includes("bg-started-marker") ? { list, t } : null;
      }, "the task's output");
      assertEquals(task.list.running, 1);
      assertEquals(task.list.items.length, 1);
      assertEquals(task.t.kind, "bash");
      assertEquals(task.t.status, "running");
      assertEquals(task.t.running, true);
      assertEquals(task.t.description, "long sleeper");
      assertEquals(task.t.command, "echo bg-started-marker; sleep 120");
      assertEquals(task.t.output_tail, "bg-started-marker");

      // bad ids: a malformed one is a 422, an unknown one a 404 that says what to do
      const bad = await web.api(`/api/sessions/${id}/tasks/..%2F..%2Fetc/stop`, { method: "POST" });
      assertEquals(bad.status, 422);
      const unknown = await web.api(`/api/sessions/${id}/tasks/bash-00000000/stop`, {
        method: "POST",
      });
      assertEquals(unknown.status, 404);
      assertEquals(
        (await unknown.json()).detail,
        "No background task bash-00000000 in this session; list them again.",
      );
      const noSession = await web.api(`/api/sessions/nope-123/tasks`);
      assertEquals(noSession.status, 404);

      const stop = await web.api(`/api/sessions/${id}/tasks/${task.t.task_id}/stop`, {
        method: "POST",
      });
      assertEquals(stop.status, 200);
      const stopped = await stop.json() as TaskView;
      assertEquals(stopped.status, "killed");
      assertEquals(stopped.running, false);
      const after = await (await web.api(`/api/sessions/${id}/tasks`)).json();
      assertEquals(after.running, 0);
      assertEquals(after.items[0].status, "killed");
      // stopping it again: already finished
      const again = await web.api(`/api/sessions/${id}/tasks/${task.t.task_id}/stop`, {
        method: "POST",
      });
      assertEquals(again.status, 409);
      assertEquals(
        (await again.json()).detail,
        `Task ${task.t.task_id} has already finished (killed).`,
      );
      ws.close();
    } finally {
      await web.stop();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: export a session as a ZIP; /undo over the socket restores the turn's file",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    await Deno.writeTextFile(`${sb.workDir}/notes.txt`, "original\n");
    const config = await sb.scriptedConfig([
      toolCallLine("w1", "WriteFile", { path: "notes.txt", content: "changed by the agent\n" }),
      "text: wrote it",
    ]);
    const web = await startWeb(sb, { config, rootArgs: ["--yolo"] });
    try {
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      assertEquals((await prompt(ws, "change the notes")).result, { status: "finished" });
      assertEquals(await Deno.readTextFile(`${sb.workDir}/notes.txt`), "changed by the agent\n");

      const res = await web.api(`/api/sessions/${id}/export`);
      assertEquals(res.status, 200);
      assertEquals(res.headers.get("content-type"), "application/zip");
      assertEquals(
        res.headers.get("content-disposition"),
        `attachment; filename="kimi-session-${id}.zip"`,
      );
      const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
      const names = Object.keys(files);
      assert(names.includes("wire.jsonl"), names.join(", "));
      assert(names.includes("context.jsonl"), names.join(", "));
      assert(!names.some((n) => n.includes("lock")), `no lock file: ${names.join(", ")}`);
      assert(new TextDecoder().decode(files["wire.jsonl"]).includes("change the notes"));
      assertEquals((await web.api(`/api/sessions/nope-1/export`)).status, 404);
      // the new routes need the token like every other API route
      for (
        const path of [`/api/sessions/${id}/export`, `/api/sessions/${id}/tasks`, "/api/search?q=a"]
      ) {
        const res = await web.api(path, { auth: false });
        assertEquals(res.status, 401, path);
        await res.body?.cancel();
      }
      assertEquals((await web.api(`/api/sessions/..%2F..%2Fetc/export`)).status, 422);

      // /undo is a slash command of the soul: a wire client sends it as a prompt
      const from = ws.frames.length;
      assertEquals((await prompt(ws, "/undo")).result, { status: "finished" });
      assertEquals(await Deno.readTextFile(`${sb.workDir}/notes.txt`), "original\n");
      const said = ws.frames.slice(from).filter((f) =>
        f.method === "event" && (f.params as { type: string }).type === "ContentPart"
      ).map((f) => (f.params as { payload: { text?: string } }).payload.text ?? "").join("");
      assert(said.includes("Undid the last turn."), said);
      assert(said.includes("Restored 1 file: notes.txt."), said);
      ws.close();
    } finally {
      await web.stop();
      await sb.cleanup();
    }
  },
});

Deno.test({
  name: "kimi web: cross-session search finds user messages and titles, pages, skips links",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: one", "text: two", "text: three"]);
    const web = await startWeb(sb, { config });
    try {
      const ids: string[] = [];
      for (const text of ["first about the Zebra crossing", "second talks of zebras", "plain"]) {
        const id = await createSession(web, sb.workDir);
        const ws = await web.socket(id);
        await ws.waitFor((f) => f.method === "session_status");
        await ws.initialize();
        assertEquals((await prompt(ws, text)).result, { status: "finished" });
        ws.close();
        ids.push(id);
      }
      const search = async (query: string) => {
        const res = await web.api(`/api/search?${query}`);
        return { status: res.status, body: await res.json() };
      };
      const all = await search("q=ZEBRA");
      assertEquals(all.status, 200);
      assertEquals(all.body.truncated, false);
      assertEquals(all.body.has_more, false);
      assertEquals(
        all.body.items.map((h: { session_id: string }) => h.session_id).sort(),
        [ids[0], ids[1]].sort(),
      );
      const first = all.body.items.find((h: { session_id: string }) => h.session_id === ids[0]);
      assertEquals(first.matches, [{ turn_index: 0, snippet: "first about the Zebra crossing" }]);
      // paging
      const page1 = await search("q=zebra&limit=1");
      assertEquals(page1.body.items.length, 1);
      assertEquals(page1.body.has_more, true);
      const page2 = await search("q=zebra&limit=1&offset=1");
      assertEquals(page2.body.items.length, 1);
      assertEquals(page2.body.has_more, false);
      assert(page1.body.items[0].session_id !== page2.body.items[0].session_id);
      // bad input
      assertEquals((await search("q=")).status, 422);
      assertEquals((await search("q=x&limit=0")).status, 422);
      assertEquals((await search("q=x&limit=51")).status, 422);
      // a wire log replaced by a link to a file outside the share dir is not read
      const info = await (await web.api(`/api/sessions/${ids[2]}`)).json();
      await Deno.writeTextFile(
        `${sb.root}/outside.jsonl`,
        JSON.stringify({
          timestamp: 1,
          message: { type: "TurnBegin", payload: { user_input: "secret zebra outside" } },
        }) + "\n",
      );
      await Deno.remove(`${info.session_dir}/wire.jsonl`);
      await Deno.symlink(`${sb.root}/outside.jsonl`, `${info.session_dir}/wire.jsonl`);
      const after = await search("q=secret");
      assertEquals(after.body.items, []);
    } finally {
      await web.stop();
      await sb.cleanup();
    }
  },
});

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

/** The root agent starts a background coder; the coder streams slowly until stopped. */
function agentReply(body: Msg): MockReply {
  const tools: string[] = (body.tools ?? []).map((t: Msg) => t.function?.name);
  if (!tools.includes("Agent")) {
    return { text: Array.from({ length: 600 }, () => "."), chunkDelayMs: 100 };
  }
  const last = (body.messages as Msg[]).at(-1)!;
  if (last.role === "user") {
    return {
      toolCalls: [{
        id: "tc-agent",
        name: "Agent",
        arguments: JSON.stringify({
          description: "slow review",
          prompt: "Take your time.",
          subagent_type: "coder",
          run_in_background: true,
        }),
      }],
    };
  }
  return { text: "started the agent" };
}

Deno.test({
  name: "kimi web: a background agent is listed as a task and stopped by REST",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const mock = await startMockOpenAI({ auto: (body) => agentReply(body) });
    const config = await sb.openaiConfig(mock.url);
    const web = await startWeb(sb, { config, rootArgs: ["--yolo"] });
    try {
      const id = await createSession(web, sb.workDir);
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      assertEquals((await prompt(ws, "review in the background")).result, { status: "finished" });
      const list = await (await web.api(`/api/sessions/${id}/tasks`)).json();
      assertEquals(list.running, 1);
      const t = list.items[0] as TaskView;
      assertEquals(t.kind, "agent");
      assertEquals(t.subagent_type, "coder");
      assertEquals(t.description, "slow review");
      assertEquals(t.command, null);
      assertEquals(t.running, true);
      const stop = await web.api(`/api/sessions/${id}/tasks/${t.task_id}/stop`, {
        method: "POST",
      });
      assertEquals(stop.status, 200);
      const stopped = await stop.json() as TaskView;
      assertEquals([stopped.status, stopped.running], ["killed", false]);
      assertEquals((await (await web.api(`/api/sessions/${id}/tasks`)).json()).running, 0);
      ws.close();
    } finally {
      await web.stop();
      await mock.close();
      await sb.cleanup();
    }
  },
});
