import { assertEquals } from "../../../helpers/assert.ts";
import { Session } from "../../../../lib/session/session.ts";
import { loadState } from "../../../../lib/session/state.ts";
import {
  AUTO_ARCHIVE_AGE_MS,
  SessionRegistry,
} from "../../../../lib/ui/web/server/session_registry.ts";

function registry(shareDir: string): SessionRegistry {
  return new SessionRegistry({
    shareDir,
    buildApp: () => Promise.reject(new Error("not in this test")),
    closeApp: () => Promise.resolve(),
  });
}

async function sessionWithTurn(shareDir: string, workDir: string, text: string) {
  const s = await Session.create({ shareDir, workDir });
  await Deno.writeTextFile(s.contextFile, JSON.stringify({ role: "user", content: text }) + "\n");
  await Deno.writeTextFile(
    s.wireFile,
    JSON.stringify({ type: "metadata", protocol_version: "1.10" }) + "\n" +
      JSON.stringify({
        timestamp: 1,
        message: { type: "TurnBegin", payload: { user_input: text } },
      }) + "\n",
  );
  return s;
}

Deno.test("registry: sessions of every work dir, newest first; search; old ones auto-archived", async () => {
  const root = await Deno.makeTempDir();
  try {
    const share = `${root}/share`;
    await Deno.mkdir(`${root}/a`);
    await Deno.mkdir(`${root}/b`);
    const old = await sessionWithTurn(share, `${root}/a`, "an old question");
    const fresh = await sessionWithTurn(share, `${root}/b`, "a fresh question");
    const past = new Date(Date.now() - AUTO_ARCHIVE_AGE_MS - 60_000);
    await Deno.utime(old.contextFile, past, past);
    const r = registry(share);
    const live = await r.list({ limit: 100, offset: 0, archived: false });
    assertEquals(live.map((s) => s.session_id), [fresh.id]);
    assertEquals(live[0].title, "a fresh question");
    assertEquals(live[0].work_dir, `${root}/b`);
    const archived = await r.list({ limit: 100, offset: 0, archived: true });
    assertEquals(archived.map((s) => s.session_id), [old.id]);
    assertEquals((await loadState(old.dir)).archived, true);
    assertEquals(
      (await r.list({ limit: 100, offset: 0, archived: false, q: "FRESH" })).length,
      1,
    );
    assertEquals((await r.list({ limit: 100, offset: 0, archived: false, q: "zzz" })).length, 0);
    assertEquals((await r.find(old.id))?.id, old.id);
    assertEquals(await r.find("no-such-session"), null);
    // unarchiving exempts it from auto-archive
    await r.update(old, { archived: false });
    const st = await loadState(old.dir);
    assertEquals([st.archived, st.auto_archive_exempt], [false, true]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
