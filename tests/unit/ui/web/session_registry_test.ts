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

Deno.test("registry: a first prompt sent with uploads is titled by what the user wrote", async () => {
  const root = await Deno.makeTempDir();
  try {
    const share = `${root}/share`;
    await Deno.mkdir(`${root}/w`);
    const withFiles = async (parts: unknown[]) => {
      const s = await Session.create({ shareDir: share, workDir: `${root}/w` });
      await Deno.writeTextFile(
        s.contextFile,
        JSON.stringify({ role: "user", content: "x" }) + "\n",
      );
      await Deno.writeTextFile(
        s.wireFile,
        JSON.stringify({ type: "metadata", protocol_version: "1.10" }) + "\n" +
          JSON.stringify({
            timestamp: 1,
            message: { type: "TurnBegin", payload: { user_input: parts } },
          }) + "\n",
      );
      return s;
    };
    const up = `${root}/share/sessions/x/uploads`;
    const image = await withFiles([
      { type: "text", text: `<uploaded_files>\n1. ${up}/wide_f42d43.png\n</uploaded_files>` },
      { type: "text", text: `<image path="${up}/wide_f42d43.png" content_type="image/png">` },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", id: null } },
      { type: "text", text: "</image>" },
      { type: "text", text: "what is in this picture of the build failure?" },
    ]);
    const onlyFiles = await withFiles([
      {
        type: "text",
        text: `<uploaded_files>\n1. ${up}/notes.md\n2. ${up}/plan.txt\n</uploaded_files>`,
      },
      {
        type: "text",
        text: `<document path="${up}/notes.md" content_type="text/markdown">` +
          "# Notes\nlots of text</document>",
      },
    ]);
    const r = registry(share);
    assertEquals((await r.info(image)).title, "what is in this picture of the build failure?");
    assertEquals((await r.info(onlyFiles)).title, "notes.md, plan.txt");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
