/**
 * What `kimi vis` reads: sessions found under the share dir with their titles and turns,
 * summaries, the timeline grouping, ZIP export and import (traversal entries dropped), and
 * addresses that try to leave the sessions directory.
 *
 * @module
 */
import { assert, assertEquals, assertRejects } from "../../../helpers/assert.ts";
import { unzipSync, zipSync } from "fflate";
import {
  findSessions,
  importSessionZip,
  listSessions,
  readWire,
  resolveSession,
  summarize,
  zipSession,
} from "../../../../lib/ui/vis/vis_store.ts";
import { buildTimeline } from "../../../../lib/ui/web/page/timeline.ts";
import { workDirKey } from "../../../../lib/session/metadata.ts";

const enc = new TextEncoder();

function wireText(records: [number, string, unknown][]): string {
  return [
    JSON.stringify({ type: "metadata", protocol_version: "1.10" }),
    ...records.map(([timestamp, type, payload]) =>
      JSON.stringify({ timestamp, message: { type, payload } })
    ),
    "not json",
    "",
  ].join("\n");
}

const RECORDS: [number, string, unknown][] = [
  [100, "TurnBegin", { user_input: "fix the bug" }],
  [100.5, "StepBegin", { n: 1 }],
  [101, "ToolCall", { type: "function", id: "t1", function: { name: "Shell", arguments: "{}" } }],
  [101.5, "StatusUpdate", {
    token_usage: { input_other: 10, output: 5, input_cache_read: 2, input_cache_creation: 0 },
  }],
  [102, "ToolResult", {
    tool_call_id: "t1",
    return_value: { is_error: true, output: "", message: "no", display: [] },
  }],
  [103, "StepBegin", { n: 2 }],
  [104, "ContentPart", { type: "text", text: "done" }],
  [105, "TurnEnd", {}],
];

async function fixture(): Promise<{ share: string; dir: string; hash: string }> {
  const share = await Deno.realPath(await Deno.makeTempDir());
  const work = "/home/u/project";
  const hash = workDirKey(work);
  const dir = `${share}/sessions/${hash}/11111111-2222-3333-4444-555555555555`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/wire.jsonl`, wireText(RECORDS));
  await Deno.writeTextFile(`${dir}/context.jsonl`, '{"role":"user","content":"fix the bug"}\n');
  await Deno.writeTextFile(`${dir}/state.json`, '{"custom_title": null}');
  await Deno.writeTextFile(
    `${share}/kimi.json`,
    JSON.stringify({ work_dirs: [{ path: work, kaos: "local", last_session_id: null }] }),
  );
  return { share, dir, hash };
}

Deno.test("vis store: sessions, summary and timeline", async () => {
  const { share, dir, hash } = await fixture();
  try {
    const [s] = await listSessions(share);
    assertEquals(
      [s.session_id, s.work_dir, s.work_dir_hash, s.title, s.turns, s.imported, s.has_wire],
      [
        "11111111-2222-3333-4444-555555555555",
        "/home/u/project",
        hash,
        "fix the bug",
        1,
        false,
        true,
      ],
    );
    const sum = await summarize(dir);
    assertEquals(
      [sum.turns, sum.steps, sum.tool_calls, sum.errors, sum.duration_sec, sum.tokens],
      [1, 2, 1, 1, 5, { input: 12, output: 5 }],
    );
    assertEquals(sum.tools, { Shell: { calls: 1, errors: 1 } });
    const { events, skipped, total } = await readWire(dir);
    // The fixture's "not json" line is counted, not returned.
    assertEquals([total, skipped], [RECORDS.length, 1]);
    const turns = buildTimeline(
      events.map((e) => ({ ...e, payload: e.payload as Record<string, unknown> })),
    );
    assertEquals(turns.length, 1);
    assertEquals([turns[0].input, turns[0].start, turns[0].end], ["fix the bug", 100, 105]);
    assertEquals(turns[0].steps.map((st) => [st.n, st.start, st.end]), [[1, 100.5, 103], [
      2,
      103,
      105,
    ]]);
    assertEquals(turns[0].steps[0].tools, [{ id: "t1", name: "Shell", error: true }]);
    assertEquals(turns[0].steps[0].tokens, { input: 12, output: 5 });
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});

Deno.test("vis store: addresses cannot leave the sessions directory", async () => {
  const { share, hash } = await fixture();
  try {
    const outside = await Deno.makeTempDir();
    await Deno.writeTextFile(`${outside}/wire.jsonl`, "secret\n");
    await Deno.symlink(outside, `${share}/sessions/${hash}/evil`);
    assertEquals(await resolveSession(share, hash, "evil"), null);
    assertEquals(await resolveSession(share, "..", "sessions"), null);
    assertEquals(await resolveSession(share, hash, ".."), null);
    assertEquals(await resolveSession(share, `${hash}/..`, "x"), null);
    assert(await resolveSession(share, hash, "11111111-2222-3333-4444-555555555555"));
    await Deno.remove(outside, { recursive: true });
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});

Deno.test("vis store: ZIP export and import round trip; bad archives are refused", async () => {
  const { share, dir } = await fixture();
  try {
    await Deno.writeTextFile(`${dir}/.lock`, "pid");
    const zip = await zipSession(dir);
    const names = Object.keys(unzipSync(zip)).sort();
    assertEquals(names.includes("wire.jsonl") && names.includes("context.jsonl"), true);
    const id = await importSessionZip(share, zip);
    assert(/^[0-9a-f]{16}$/.test(id), id);
    const imported = (await findSessions(share)).find((r) => r.imported);
    assertEquals(imported?.id, id);
    assertEquals((await readWire(imported!.dir)).total, RECORDS.length);

    // One folder level is accepted; traversal entries are dropped.
    const nested = zipSync({
      "session/wire.jsonl": enc.encode(wireText(RECORDS)),
      "session/../../escape.txt": enc.encode("x"),
    });
    const id2 = await importSessionZip(share, nested);
    const ref2 = await resolveSession(share, "imported", id2);
    assert(ref2);
    assertEquals([...Deno.readDirSync(ref2.dir)].map((e) => e.name), ["wire.jsonl"]);
    assertEquals([...Deno.readDirSync(share)].map((e) => e.name).includes("escape.txt"), false);

    // A bomb is refused from its directory, before inflating.
    const bomb = zipSync({ "wire.jsonl": new Uint8Array(4 * 1024 * 1024) }, { level: 9 });
    assert(bomb.byteLength < 64 * 1024);
    await assertRejects(
      () => importSessionZip(share, bomb, { maxUnpackedBytes: 1024 * 1024 }),
      /unpacks to more than 1 MB/,
    );
    await assertRejects(
      () => importSessionZip(share, enc.encode("not a zip")),
      /Not a valid ZIP/,
    );
    await assertRejects(
      () =>
        importSessionZip(
          share,
          zipSync({ "a/x.txt": enc.encode("1"), "b/y.txt": enc.encode("2") }),
        ),
      /wire\.jsonl or context\.jsonl/,
    );
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});

Deno.test("vis store: /wire counts the lines it skips (malformed, not a record, torn last line)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/wire.jsonl`,
      [
        JSON.stringify({ type: "metadata", protocol_version: "1.10" }),
        JSON.stringify({ timestamp: 1, message: { type: "TurnBegin", payload: {} } }),
        "[1, 2]",
        JSON.stringify({ timestamp: 2, note: "no message" }),
        JSON.stringify({ timestamp: 3, message: { type: "TurnEnd", payload: {} } }),
        '{"timestamp": 4, "message": {"type": "Tu',
      ].join("\n"),
    );
    const wire = await readWire(dir);
    assertEquals(
      [wire.total, wire.skipped, wire.events.map((e) => [e.index, e.type])],
      [2, 3, [[0, "TurnBegin"], [1, "TurnEnd"]]],
    );
    assertEquals(await readWire(`${dir}/missing`), { total: 0, skipped: 0, events: [] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
