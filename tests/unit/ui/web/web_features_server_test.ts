/**
 * The server side of `kimi web`'s cross-session search and session export: reading a wire log
 * within a size bound, the user text of a turn, snippets, a session directory outside the share
 * dir or a linked wire log never read; the export's caps, lock files and links left out.
 *
 * @module
 */
import { unzipSync } from "fflate";
import { assert, assertEquals } from "../../../helpers/assert.ts";
import {
  MAX_MATCHES_PER_SESSION,
  scanWireLog,
  searchSessions,
  snippetAround,
  userInputText,
} from "../../../../lib/ui/web/server/session_search.ts";
import { exportInputBytes, exportZip } from "../../../../lib/ui/web/server/export_route.ts";
import { HttpError } from "../../../../lib/ui/web/server/http_errors.ts";
import type { SessionInfo } from "../../../../lib/ui/web/server/schemas.ts";

const enc = new TextEncoder();

function wireLine(type: string, payload: unknown): string {
  return JSON.stringify({ timestamp: 1, message: { type, payload } }) + "\n";
}

async function* chunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = enc.encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

Deno.test("search: the user text of a turn leaves attachment markup out", () => {
  assertEquals(userInputText("plain"), "plain");
  assertEquals(
    userInputText([
      { type: "text", text: "look at this" },
      { type: "text", text: "<uploaded_files>\n1. a.png\n</uploaded_files>" },
      { type: "text", text: '<image path="a.png">' },
      { type: "image_url", image_url: { url: "data:x" } },
      { type: "text", text: '<document name="x">secret body</document>' },
      { type: "text", text: "and this" },
    ]),
    "look at this\nand this",
  );
  assertEquals(userInputText(42), "");
  assertEquals(userInputText(null), "");
});

Deno.test("search: snippets around the first match, flattened", () => {
  assertEquals(snippetAround("one\n two   three", "two"), "one two three");
  const long = "a".repeat(100) + "NEEDLE" + "b".repeat(100);
  assertEquals(snippetAround(long, "needle"), `…${"a".repeat(60)}NEEDLE${"b".repeat(60)}…`);
});

Deno.test("search: a wire log is scanned by turn, across chunk edges, within its bound", async () => {
  const log = [
    wireLine("TurnBegin", { user_input: "first Zebra" }),
    wireLine("ContentPart", { type: "text", text: "zebra in the answer does not count" }),
    wireLine("TurnEnd", {}),
    wireLine("TurnBegin", { user_input: [{ type: "text", text: "no match" }] }),
    "not json at all\n",
    wireLine("TurnBegin", { user_input: [{ type: "text", text: "second zebra" }] }),
  ].join("");
  for (const size of [1, 7, 4096]) {
    const r = await scanWireLog(chunks(log, size), "zebra", 1 << 20);
    assertEquals(r.matches, [
      { turn_index: 0, snippet: "first Zebra" },
      { turn_index: 2, snippet: "second zebra" },
    ]);
    assertEquals(r.truncated, false);
    assertEquals(r.bytes, enc.encode(log).length);
  }
  // the bound: only the first line is read
  const first = enc.encode(wireLine("TurnBegin", { user_input: "first Zebra" })).length;
  const cut = await scanWireLog(chunks(log, 5), "zebra", first);
  assertEquals(cut.matches, [{ turn_index: 0, snippet: "first Zebra" }]);
  assertEquals(cut.truncated, true);
  assertEquals(cut.bytes, first);
  // at most a few matches per session
  const many = Array.from({ length: 10 }, (_, i) => wireLine("TurnBegin", { user_input: `z ${i}` }))
    .join("");
  const capped = await scanWireLog(chunks(many, 64), "z", 1 << 20);
  assertEquals(capped.matches.length, MAX_MATCHES_PER_SESSION);
});

function info(id: string, dir: string, title = "untitled"): SessionInfo {
  return {
    session_id: id,
    title,
    last_updated: new Date().toISOString(),
    is_running: false,
    status: null,
    work_dir: "/w",
    session_dir: dir,
    archived: false,
    pinned: false,
  };
}

Deno.test("search: only session dirs inside the share dir, and no linked wire log, are read", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const share = `${root}/share`;
    const inside = `${share}/sessions/h/s1`;
    const linked = `${share}/sessions/h/s2`;
    const outside = `${root}/elsewhere/s3`;
    for (const d of [inside, linked, outside]) await Deno.mkdir(d, { recursive: true });
    const hit = wireLine("TurnBegin", { user_input: "the needle here" });
    await Deno.writeTextFile(`${inside}/wire.jsonl`, hit);
    await Deno.writeTextFile(`${outside}/wire.jsonl`, hit);
    await Deno.writeTextFile(`${root}/planted.jsonl`, hit);
    await Deno.symlink(`${root}/planted.jsonl`, `${linked}/wire.jsonl`);
    // a session dir that is itself a link out of the share dir
    await Deno.symlink(outside, `${share}/sessions/h/s4`);
    const r = await searchSessions(share, [
      info("s1", inside),
      info("s2", linked),
      info("s3", outside),
      info("s4", `${share}/sessions/h/s4`),
      info("s5", `${share}/sessions/h/missing`, "Needle in the title"),
    ], { q: "NEEDLE", limit: 10, offset: 0 });
    assertEquals(r.items.map((h) => [h.session_id, h.title_match, h.matches.length]), [
      ["s1", false, 1],
      ["s5", true, 0],
    ]);
    assertEquals(r.has_more, false);
    const paged = await searchSessions(share, [
      info("s1", inside),
      info("s5", `${share}/x`, "needle"),
    ], {
      q: "needle",
      limit: 1,
      offset: 0,
    });
    assertEquals(paged.items.map((h) => h.session_id), ["s1"]);
    assertEquals(paged.has_more, true);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("export: a ZIP of the session dir without locks or links, refused past its caps", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const dir = `${root}/session`;
    await Deno.mkdir(`${dir}/tasks/bash-1`, { recursive: true });
    await Deno.writeTextFile(`${dir}/wire.jsonl`, "w\n");
    await Deno.writeTextFile(`${dir}/context.jsonl`, "c\n");
    await Deno.writeTextFile(`${dir}/tasks/bash-1/output.log`, "out\n");
    await Deno.writeTextFile(`${dir}/session.lock`, "123");
    await Deno.writeTextFile(`${root}/secret`, "do not ship");
    await Deno.symlink(`${root}/secret`, `${dir}/leak.txt`);
    const session = { id: "s-1", dir, workDir: "/my work" };
    // the lock and the link are not counted
    assertEquals(await exportInputBytes(dir), 2 + 2 + 4);
    const zip = await exportZip(session);
    const names = Object.keys(unzipSync(zip)).sort();
    assertEquals(names, ["context.jsonl", "tasks/bash-1/output.log", "wire.jsonl"]);

    const big = await refusal(exportZip(session, { maxBytes: 1 << 20, maxInputBytes: 4 }));
    assertEquals(big.status, 413);
    assert(
      big.message.endsWith(
        "over the 1.0 MiB limit of a download from the page. Export it in a terminal " +
          "instead: kimi export s-1 -w '/my work'",
      ),
      big.message,
    );
    const zipped = await refusal(exportZip(session, { maxBytes: 10, maxInputBytes: 1 << 20 }));
    assertEquals(zipped.status, 413);
    assert(zipped.message.startsWith("The session's archive would take"), zipped.message);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

async function refusal(p: Promise<unknown>): Promise<HttpError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}
