import { createHash } from "node:crypto";
import { join } from "node:path";
import { appendLine, atomicWriteText } from "../../../lib/fs/atomic_write.ts";
import {
  loadMetadata,
  metadataPath,
  setLastSessionId,
  workDirKey,
} from "../../../lib/session/metadata.ts";
import { nextAvailableRotation } from "../../../lib/session/rotation.ts";
import { Session, SessionError } from "../../../lib/session/session.ts";
import { defaultState, loadState, saveState, updateState } from "../../../lib/session/state.ts";
import { shortenTitle } from "../../../lib/session/title.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "../../helpers/assert.ts";

const UUID4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Env {
  share: string;
  work: string;
}

async function withEnv(fn: (env: Env) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "kimi_session_test_" });
  const env = { share: join(root, "share"), work: join(root, "work") };
  await Deno.mkdir(env.share, { recursive: true });
  await Deno.mkdir(env.work, { recursive: true });
  try {
    await fn(env);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

const META_LINE = '{"type": "metadata", "protocol_version": "1.10"}';

function turnBegin(userInput: unknown): string {
  return JSON.stringify({
    timestamp: 1.5,
    message: { type: "TurnBegin", payload: { user_input: userInput } },
  });
}

async function listNames(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

/** Give a session a real exchange so it is non-empty. */
async function addExchange(session: Session, text: string): Promise<void> {
  await appendLine(session.contextFile, '{"role": "_system_prompt", "content": "sys"}');
  await appendLine(session.contextFile, JSON.stringify({ role: "user", content: text }));
  await appendLine(session.wireFile, META_LINE);
  await appendLine(session.wireFile, turnBegin(text));
}

Deno.test("create: session dir, empty context, kimi.json entry, md5 work-dir key", async () => {
  await withEnv(async ({ share, work }) => {
    const session = await Session.create({ shareDir: share, workDir: work });
    assertMatch(session.id, UUID4);
    const key = createHash("md5").update(work).digest("hex");
    assertEquals(workDirKey(work), key);
    assertEquals(workDirKey(work, "ssh"), `ssh_${key}`);
    assertEquals(session.dir, join(share, "sessions", key, session.id));
    assertEquals(session.contextFile, join(session.dir, "context.jsonl"));
    assertEquals(session.wireFile, join(session.dir, "wire.jsonl"));
    assertEquals(session.stateFile, join(session.dir, "state.json"));
    assertEquals(await Deno.readTextFile(session.contextFile), "");
    assertEquals(session.state, defaultState());
    const meta = JSON.parse(await Deno.readTextFile(metadataPath(share)));
    assertEquals(meta, { work_dirs: [{ path: work, kaos: "local", last_session_id: null }] });
    assertEquals(await listNames(share), ["kimi.json", "sessions"]);
  });
});

Deno.test("create with an explicit id; unsafe ids are rejected", async () => {
  await withEnv(async ({ share, work }) => {
    const s = await Session.create({ shareDir: share, workDir: work + "/./", id: "my-session" });
    assertEquals(s.id, "my-session");
    assertEquals(s.workDir, work);
    await assertRejects(
      () => Session.create({ shareDir: share, workDir: work, id: "../escape" }),
      (err: unknown) => err instanceof SessionError && err.message.startsWith("Invalid session ID"),
    );
    assertEquals(await Session.find({ shareDir: share, workDir: work, id: "../escape" }), null);
  });
});

Deno.test("find: existing, unknown, never-used work dir, missing context", async () => {
  await withEnv(async ({ share, work }) => {
    assertEquals(await Session.find({ shareDir: share, workDir: work, id: "x" }), null);
    const s = await Session.create({ shareDir: share, workDir: work });
    const found = await Session.find({ shareDir: share, workDir: work, id: s.id });
    assert(found);
    assertEquals(found.id, s.id);
    assertEquals(found.dir, s.dir);
    assertEquals(await Session.find({ shareDir: share, workDir: work, id: "unknown" }), null);
    await Deno.remove(s.contextFile);
    assertEquals(await Session.find({ shareDir: share, workDir: work, id: s.id }), null);
  });
});

Deno.test("find migrates a legacy sessions/<key>/<id>.jsonl context file", async () => {
  await withEnv(async ({ share, work }) => {
    await setLastSessionId(share, work, null); // registers the work dir
    const sessionsDir = join(share, "sessions", workDirKey(work));
    await Deno.mkdir(sessionsDir, { recursive: true });
    await Deno.writeTextFile(join(sessionsDir, "old.jsonl"), '{"role": "user", "content": "hi"}\n');
    const s = await Session.find({ shareDir: share, workDir: work, id: "old" });
    assert(s);
    assertEquals(await Deno.readTextFile(s.contextFile), '{"role": "user", "content": "hi"}\n');
    assertEquals(await listNames(sessionsDir), ["old"]);
  });
});

Deno.test("continue: last_session_id or the exact error", async () => {
  await withEnv(async ({ share, work }) => {
    await assertRejects(
      () => Session.continue({ shareDir: share, workDir: work }),
      (err: unknown) =>
        err instanceof SessionError &&
        err.message === "No previous session found for the working directory",
    );
    const s = await Session.create({ shareDir: share, workDir: work });
    await assertRejects(() => Session.continue({ shareDir: share, workDir: work }), SessionError);
    await s.setLastSession();
    assertEquals((await loadMetadata(share)).work_dirs[0].last_session_id, s.id);
    const c = await Session.continue({ shareDir: share, workDir: work });
    assertEquals(c.id, s.id);
    // a recorded session that no longer exists is not continued
    await Deno.remove(s.dir, { recursive: true });
    await assertRejects(() => Session.continue({ shareDir: share, workDir: work }), SessionError);
  });
});

Deno.test("list: non-empty sessions with context.jsonl, newest context mtime first", async () => {
  await withEnv(async ({ share, work }) => {
    assertEquals(await Session.list({ shareDir: share, workDir: work }), []);
    const a = await Session.create({ shareDir: share, workDir: work, id: "aaa" });
    const b = await Session.create({ shareDir: share, workDir: work, id: "bbb" });
    const c = await Session.create({ shareDir: share, workDir: work, id: "ccc" });
    await Session.create({ shareDir: share, workDir: work, id: "empty" });
    await addExchange(a, "first");
    await addExchange(b, "second");
    await addExchange(c, "third");
    await Deno.remove(c.contextFile); // no context → not listed
    await Deno.mkdir(join(share, "sessions", workDirKey(work), "stray-dir"));
    await Deno.utime(a.contextFile, 1000, 3000);
    await Deno.utime(b.contextFile, 1000, 2000);
    let listed = await Session.list({ shareDir: share, workDir: work });
    assertEquals(listed.map((s) => s.id), ["aaa", "bbb"]);
    assertEquals(await listed[0].updatedAt(), 3000_000);
    await Deno.utime(b.contextFile, 1000, 4000);
    listed = await Session.list({ shareDir: share, workDir: work });
    assertEquals(listed.map((s) => s.id), ["bbb", "aaa"]);
    // another work dir sees nothing
    assertEquals(await Session.list({ shareDir: share, workDir: join(work, "sub") }), []);
  });
});

Deno.test("title: custom title, first TurnBegin text shortened, else Untitled", async () => {
  await withEnv(async ({ share, work }) => {
    const s = await Session.create({ shareDir: share, workDir: work });
    assertEquals(await s.title(), "Untitled");
    await appendLine(s.wireFile, META_LINE);
    await appendLine(s.wireFile, "not json");
    await appendLine(
      s.wireFile,
      JSON.stringify({ timestamp: 1, message: { type: "StepBegin", payload: { n: 1 } } }),
    );
    await appendLine(
      s.wireFile,
      turnBegin([
        { type: "text", text: "Please   refactor\nthe" },
        { type: "image_url", image_url: { url: "data:x", id: null } },
        { type: "text", text: "session store so that listing is fast and titles are short" },
      ]),
    );
    await appendLine(s.wireFile, turnBegin("second turn"));
    assertEquals(
      await s.title(),
      "Please refactor the session store so that listing…",
    );
    s.state.custom_title = "My title";
    assertEquals(await s.title(), "My title");
  });
  await withEnv(async ({ share, work }) => {
    const s = await Session.create({ shareDir: share, workDir: work });
    await appendLine(s.wireFile, turnBegin("short question"));
    assertEquals(await s.title(), "short question");
  });
});

Deno.test("isEmpty: title, wire records, non-underscore roles, malformed context", async () => {
  await withEnv(async ({ share, work }) => {
    const s = await Session.create({ shareDir: share, workDir: work });
    assertEquals(await s.isEmpty(), true);
    await appendLine(s.contextFile, '{"role": "_system_prompt", "content": "x"}');
    await appendLine(s.contextFile, '{"role": "_checkpoint", "id": 0}');
    await appendLine(s.wireFile, META_LINE);
    assertEquals(await s.isEmpty(), true);
    s.state.custom_title = "kept";
    assertEquals(await s.isEmpty(), false);
    s.state.custom_title = null;
    await appendLine(s.contextFile, '{"role": "user", "content": "hi"}');
    assertEquals(await s.isEmpty(), false);
  });
  await withEnv(async ({ share, work }) => {
    const s = await Session.create({ shareDir: share, workDir: work });
    await appendLine(s.wireFile, turnBegin("x"));
    assertEquals(await s.isEmpty(), false);
  });
  await withEnv(async ({ share, work }) => {
    const s = await Session.create({ shareDir: share, workDir: work });
    await appendLine(s.contextFile, "{broken");
    assertEquals(await s.isEmpty(), false); // unreadable context is never treated as empty
    await Deno.remove(s.contextFile);
    assertEquals(await s.isEmpty(), true);
  });
});

Deno.test("delete removes the dir and clears last_session_id pointing at it", async () => {
  await withEnv(async ({ share, work }) => {
    const keep = await Session.create({ shareDir: share, workDir: work });
    const gone = await Session.create({ shareDir: share, workDir: work });
    await gone.setLastSession();
    await gone.delete();
    await gone.delete(); // idempotent
    assertEquals(await Session.find({ shareDir: share, workDir: work, id: gone.id }), null);
    assertEquals((await loadMetadata(share)).work_dirs[0].last_session_id, null);
    await keep.setLastSession();
    const other = await Session.create({ shareDir: share, workDir: work });
    await other.delete();
    assertEquals((await loadMetadata(share)).work_dirs[0].last_session_id, keep.id);
  });
});

Deno.test("kimi.json: tolerant of corrupt files, keeps unknown keys, per-work-dir entries", async () => {
  await withEnv(async ({ share, work }) => {
    await Deno.writeTextFile(metadataPath(share), "{corrupt");
    assertEquals(await loadMetadata(share), { work_dirs: [] });
    await Deno.writeTextFile(
      metadataPath(share),
      JSON.stringify({
        work_dirs: [{ path: "/a", last_session_id: "s1" }, { bad: 1 }],
        thinking: true,
      }),
    );
    assertEquals(await loadMetadata(share), {
      work_dirs: [{ path: "/a", kaos: "local", last_session_id: "s1" }],
      thinking: true,
    });
    await setLastSessionId(share, work, "s2");
    const text = await Deno.readTextFile(metadataPath(share));
    assertEquals(JSON.parse(text), {
      work_dirs: [
        { path: "/a", kaos: "local", last_session_id: "s1" },
        { path: work, kaos: "local", last_session_id: "s2" },
      ],
      thinking: true,
    });
    assert(text.includes('\n  "work_dirs": ['), "indent 2");
    assertEquals(await listNames(share), ["kimi.json"]);
  });
});

Deno.test("state.json: defaults when missing or corrupt; round trip", async () => {
  await withEnv(async ({ share }) => {
    const dir = join(share, "s");
    await Deno.mkdir(dir);
    assertEquals(await loadState(dir), defaultState());
    assertEquals(defaultState(), {
      version: 1,
      approval: { yolo: false, afk: false, auto_approve_actions: [], session_rules: [] },
      additional_dirs: [],
      custom_title: null,
      title_generated: false,
      title_generate_attempts: 0,
      plan_mode: false,
      plan_session_id: null,
      plan_slug: null,
      wire_mtime: null,
      archived: false,
      archived_at: null,
      auto_archive_exempt: false,
      todos: [],
      goal: null,
      goal_queue: [],
      goal_log: [],
    });
    for (
      const bad of ["{not json", '{"approval": {"yolo": "yes"}}', "[]", '{"todos": [{"title": 1}]}']
    ) {
      await Deno.writeTextFile(join(dir, "state.json"), bad);
      assertEquals(await loadState(dir), defaultState());
    }
    const state = defaultState();
    state.approval = {
      yolo: true,
      afk: true,
      auto_approve_actions: ["run command", "edit file"],
      session_rules: [{ pattern: "Shell(git status *)", checkpoint: 2 }],
    };
    state.additional_dirs = ["/extra"];
    state.plan_mode = true;
    state.todos = [{ title: "write tests", status: "in_progress" }];
    await saveState(dir, state);
    const loaded = await loadState(dir);
    assertEquals(loaded.approval, state.approval);
    assertEquals(loaded.todos, state.todos);
    assertEquals(loaded.plan_mode, true);
    assertEquals(await listNames(dir), ["state.json"]); // no temp files
  });
});

Deno.test("saveState keeps title/archive fields from disk; updateState writes them", async () => {
  await withEnv(async ({ share, work }) => {
    const s = await Session.create({ shareDir: share, workDir: work });
    // another process sets the title and archives the session
    await updateState(s.dir, (st) => {
      st.custom_title = "From web";
      st.archived = true;
      st.archived_at = 123.5;
    });
    s.state.custom_title = "stale in memory";
    s.state.plan_mode = true;
    await s.saveState();
    assertEquals(s.state.custom_title, "From web"); // reloaded into memory
    const disk = await loadState(s.dir);
    assertEquals(disk.custom_title, "From web");
    assertEquals(disk.archived, true);
    assertEquals(disk.archived_at, 123.5);
    assertEquals(disk.plan_mode, true);
    // explicit override of the external fields
    s.state.custom_title = "Renamed";
    await saveState(s.dir, s.state, { keepExternalFields: false });
    assertEquals((await loadState(s.dir)).custom_title, "Renamed");
  });
});

Deno.test("legacy metadata.json is merged into state once", async () => {
  await withEnv(async ({ share }) => {
    const dir = join(share, "s");
    await Deno.mkdir(dir);
    await Deno.writeTextFile(
      join(dir, "metadata.json"),
      JSON.stringify({ title: "Old title", archived: true, wire_mtime: 42.5 }),
    );
    const state = await loadState(dir);
    assertEquals(state.custom_title, "Old title");
    assertEquals(state.archived, true);
    assertEquals(state.wire_mtime, 42.5);
    assertEquals(await listNames(dir), ["state.json"]);
    assertEquals((await loadState(dir)).custom_title, "Old title");
  });
});

Deno.test("atomic writes replace whole files and leave no temp files", async () => {
  await withEnv(async ({ share }) => {
    const file = join(share, "data.json");
    await atomicWriteText(file, "one");
    await atomicWriteText(file, "two");
    assertEquals(await Deno.readTextFile(file), "two");
    await atomicWriteText(join(share, "secret"), "x", { mode: 0o600 });
    if (Deno.build.os !== "windows") {
      assertEquals((await Deno.stat(join(share, "secret"))).mode! & 0o777, 0o600);
      await Deno.chmod(file, 0o640);
      await atomicWriteText(file, "three"); // keeps the existing mode
      assertEquals((await Deno.stat(file)).mode! & 0o777, 0o640);
    }
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => atomicWriteText(file, `v${i}`.repeat(1000))),
    );
    assertMatch(await Deno.readTextFile(file), /^(v\d+)\1*$/);
    assertEquals(await listNames(share), ["data.json", "secret"]);
    await assertRejects(() => atomicWriteText(join(share, "missing", "f"), "x"));
    assertEquals(await listNames(share), ["data.json", "secret"]);
  });
});

Deno.test("appendLine writes whole lines, concurrently without interleaving", async () => {
  await withEnv(async ({ share }) => {
    const file = join(share, "log.jsonl");
    await appendLine(file, "first");
    await appendLine(file, "second\n");
    assertEquals(await Deno.readTextFile(file), "first\nsecond\n");
    const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ i, pad: "x".repeat(500) }));
    await Promise.all(lines.map((l) => appendLine(file, l)));
    const got = (await Deno.readTextFile(file)).split("\n").filter(Boolean).slice(2);
    assertEquals(got.sort(), [...lines].sort());
  });
});

Deno.test("rotation reserves context_<n>.jsonl with n = max + 1", async () => {
  await withEnv(async ({ share }) => {
    const live = join(share, "context.jsonl");
    await Deno.writeTextFile(live, "x\n");
    const first = await nextAvailableRotation(live);
    assertEquals(first, join(share, "context_1.jsonl"));
    assertEquals(await Deno.readTextFile(first), "");
    if (Deno.build.os !== "windows") assertEquals((await Deno.stat(first)).mode! & 0o777, 0o600);
    assertEquals(await nextAvailableRotation(live), join(share, "context_2.jsonl"));
    await Deno.writeTextFile(join(share, "context_9.jsonl"), "");
    await Deno.writeTextFile(join(share, "context_x.jsonl"), "");
    await Deno.writeTextFile(join(share, "wire_20.jsonl"), "");
    assertEquals(await nextAvailableRotation(live), join(share, "context_10.jsonl"));
    const concurrent = await Promise.all(
      Array.from({ length: 5 }, () => nextAvailableRotation(live)),
    );
    assertEquals(new Set(concurrent).size, 5);
    assertEquals(await Deno.readTextFile(live), "x\n"); // the live file is untouched
  });
});

Deno.test("shortenTitle: collapse whitespace, word boundary, ellipsis, hard cut", () => {
  assertEquals(shortenTitle("hello", 10), "hello");
  assertEquals(shortenTitle("hello", 5), "hello");
  assertEquals(shortenTitle("hello world foo bar", 12), "hello world…");
  assertEquals(shortenTitle("hello   world\nfoo", 20), "hello world foo");
  assertEquals(shortenTitle("这是一段很长的中文文本用于测试截断功能", 10), "这是一段很长的中文…");
  assertEquals(shortenTitle("", 10), "");
  assertEquals(shortenTitle("hello", 1), "h");
  assertEquals(shortenTitle("hello world foo bar", 12, "..."), "hello...");
  const long = "word ".repeat(30);
  const t = shortenTitle(long);
  assert(Array.from(t).length <= 50);
  assertEquals(t, "word ".repeat(9) + "word…");
});

Deno.test("shortenTitle: reads only the start of a huge text, with the same title as a whole-text pass", () => {
  // the whole-text definition the title keeps (collapse every whitespace run, then cut)
  const reference = (text: string, width: number, placeholder = "…") => {
    const chars = Array.from(text.split(/\s+/).filter((w) => w !== "").join(" "));
    if (chars.length <= width) return chars.join("");
    const room = width - Array.from(placeholder).length;
    if (room <= 0) return chars.slice(0, Math.max(0, width)).join("");
    const head = chars.slice(0, room + 1);
    const space = head.lastIndexOf(" ");
    const kept = space > 0 ? head.slice(0, space) : chars.slice(0, room);
    return kept.join("").trimEnd() + placeholder;
  };
  const alphabet = ["a", "bc", " ", "\n\t", "😀", "中", "\u00a0", "x".repeat(70), "😀".repeat(30)];
  let seed = 7;
  for (let n = 0; n < 400; n++) {
    let text = "";
    const len = n % 40;
    for (let i = 0; i < len; i++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      text += alphabet[seed % alphabet.length];
    }
    for (const width of [1, 2, 5, 12, 50]) {
      assertEquals(
        shortenTitle(text, width),
        reference(text, width),
        JSON.stringify([text, width]),
      );
      assertEquals(shortenTitle(text, width, "..."), reference(text, width, "..."));
    }
  }
  assertEquals(shortenTitle("y".repeat(50_000_000) + " tail"), "y".repeat(49) + "…");
});
