import { exists } from "../../../lib/fs/exists.ts";
import { FileSnapshots } from "../../../lib/session/file_snapshots.ts";
import { turnCheckpoints, undoSummary } from "../../../lib/soul/commands/undo.ts";
import { dmailRestoreNote } from "../../../lib/soul/dmail.ts";
import { assertEquals } from "../../helpers/assert.ts";

const enc = new TextEncoder();

function sha256(text: string): Promise<string> {
  return sha256Bytes(enc.encode(text));
}

async function sha256Bytes(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A change as the tools make it: before hook, write, after hook. */
async function change(
  snaps: FileSnapshots,
  path: string,
  checkpoint: number,
  data: string | Uint8Array,
): Promise<void> {
  await snaps.recordBefore(path, checkpoint);
  await Deno.writeFile(path, typeof data === "string" ? enc.encode(data) : data);
  await snaps.recordAfter(path, checkpoint);
}

async function withDirs(fn: (session: string, work: string) => Promise<void>): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "snapshots-" }));
  try {
    await Deno.mkdir(`${root}/session`);
    await Deno.mkdir(`${root}/work`);
    await fn(`${root}/session`, `${root}/work`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("restoreSince puts files back byte for byte and deletes created ones", async () => {
  await withDirs(async (session, work) => {
    const snaps = new FileSnapshots(session);
    const binary = new Uint8Array([0, 255, 13, 10, 128, 1]);
    await Deno.writeFile(`${work}/bin`, binary);
    await Deno.writeTextFile(`${work}/edit.txt`, "v0\r\n");
    await change(snaps, `${work}/edit.txt`, 1, "v1"); // before the turn being undone
    await change(snaps, `${work}/new.txt`, 3, "created");
    await change(snaps, `${work}/bin`, 3, "text now");
    await change(snaps, `${work}/edit.txt`, 4, "v2");
    await change(snaps, `${work}/edit.txt`, 5, "v3");

    const report = await snaps.restoreSince(3);
    assertEquals(report, {
      restored: [`${work}/new.txt`, `${work}/bin`, `${work}/edit.txt`],
      conflicts: [],
      unavailable: [],
    });
    assertEquals(await exists(`${work}/new.txt`), false);
    assertEquals(await Deno.readFile(`${work}/bin`), binary);
    assertEquals(await Deno.readTextFile(`${work}/edit.txt`), "v1");

    // The undone records are gone; a fresh instance (another process) sees the same log.
    assertEquals(await snaps.changedSince(0), [`${work}/edit.txt`]);
    const again = new FileSnapshots(session);
    assertEquals(await again.changedSince(0), [`${work}/edit.txt`]);
    assertEquals(await again.restoreSince(3), { restored: [], conflicts: [], unavailable: [] });
    assertEquals(await again.restoreSince(0), {
      restored: [`${work}/edit.txt`],
      conflicts: [],
      unavailable: [],
    });
    assertEquals(await Deno.readTextFile(`${work}/edit.txt`), "v0\r\n");
  });
});

Deno.test("a file changed or deleted outside the agent is reported and left alone", async () => {
  await withDirs(async (session, work) => {
    const snaps = new FileSnapshots(session);
    await Deno.writeTextFile(`${work}/a`, "a0");
    await Deno.writeTextFile(`${work}/b`, "b0");
    await Deno.writeTextFile(`${work}/c`, "c0");
    await change(snaps, `${work}/a`, 2, "a1");
    await change(snaps, `${work}/b`, 2, "b1");
    await change(snaps, `${work}/c`, 2, "c1");
    await Deno.writeTextFile(`${work}/b`, "edited by the user");
    await Deno.remove(`${work}/c`);

    const report = await snaps.restoreSince(0);
    assertEquals(report.restored, [`${work}/a`]);
    assertEquals(report.conflicts, [
      { path: `${work}/b`, reason: "was changed outside the agent since" },
      { path: `${work}/c`, reason: "was deleted outside the agent since" },
    ]);
    assertEquals(report.unavailable, []);
    assertEquals(await Deno.readTextFile(`${work}/a`), "a0");
    assertEquals(await Deno.readTextFile(`${work}/b`), "edited by the user");
    assertEquals(await exists(`${work}/c`), false);
  });
});

Deno.test("a path swapped for a symlink since is a conflict: the restore never follows it", async () => {
  await withDirs(async (session, work) => {
    const snaps = new FileSnapshots(session);
    const outside = `${work}/../outside`;
    await Deno.mkdir(`${work}/dir`);
    await Deno.mkdir(outside);
    // The agent creates dir/victim with the content of a file outside, then dir becomes a link.
    await change(snaps, `${work}/dir/victim`, 1, "same bytes");
    await Deno.writeTextFile(`${outside}/victim`, "same bytes");
    await Deno.remove(`${work}/dir`, { recursive: true });
    await Deno.symlink(outside, `${work}/dir`);

    const report = await snaps.restoreSince(0);
    assertEquals(report.restored, []);
    assertEquals(report.conflicts, [
      { path: `${work}/dir/victim`, reason: "now leads elsewhere (through a symlink)" },
    ]);
    assertEquals(await Deno.readTextFile(`${outside}/victim`), "same bytes");
  });
});

Deno.test("a write that changed nothing is not recorded; keepSince re-keys records", async () => {
  await withDirs(async (session, work) => {
    const snaps = new FileSnapshots(session);
    await Deno.writeTextFile(`${work}/same`, "x");
    await change(snaps, `${work}/same`, 0, "x");
    assertEquals(await snaps.changedSince(0), []);

    await change(snaps, `${work}/f`, 4, "one");
    // A D-Mail to checkpoint 3 without restoring files: the change now counts as before 3.
    await snaps.keepSince(3);
    assertEquals(await snaps.changedSince(3), []);
    assertEquals(await snaps.changedSince(2), [`${work}/f`]);
    assertEquals(await new FileSnapshots(session).changedSince(2), [`${work}/f`]);
    await change(snaps, `${work}/f`, 3, "two"); // the new timeline's checkpoint 3
    assertEquals((await snaps.restoreSince(3)).restored, [`${work}/f`]);
    assertEquals(await Deno.readTextFile(`${work}/f`), "one");
    assertEquals((await snaps.restoreSince(0)).restored, [`${work}/f`]);
    assertEquals(await exists(`${work}/f`), false);
  });
});

Deno.test("size cap: oldest blobs are evicted and their undo reported unavailable", async () => {
  await withDirs(async (session, work) => {
    const snaps = new FileSnapshots(session, { maxBytes: 25 });
    await Deno.writeTextFile(`${work}/old`, "0123456789"); // 10 bytes
    await Deno.writeTextFile(`${work}/mid`, "abcdefghij"); // 10 bytes
    await Deno.writeTextFile(`${work}/new`, "ABCDEFGHIJ"); // 10 bytes
    await change(snaps, `${work}/old`, 1, "x");
    await change(snaps, `${work}/mid`, 2, "y");
    const objects = `${session}/snapshots/objects`;
    assertEquals([...Deno.readDirSync(objects)].length, 2);
    await change(snaps, `${work}/new`, 3, "z"); // 30 bytes > 25: the oldest blob goes
    assertEquals([...Deno.readDirSync(objects)].length, 2);

    const report = await new FileSnapshots(session, { maxBytes: 25 }).restoreSince(1);
    assertEquals(report.restored, [`${work}/mid`, `${work}/new`]);
    assertEquals(report.unavailable, [`${work}/old`]);
    assertEquals(await Deno.readTextFile(`${work}/old`), "x");
    assertEquals(await Deno.readTextFile(`${work}/mid`), "abcdefghij");
    // Blobs nothing needs any more are deleted.
    assertEquals([...Deno.readDirSync(objects)].length, 0);
  });
});

Deno.test("storage layout: content-addressed blobs and an append-only index", async () => {
  await withDirs(async (session, work) => {
    const snaps = new FileSnapshots(session, { now: () => 42 });
    await Deno.writeTextFile(`${work}/a`, "same");
    await Deno.writeTextFile(`${work}/b`, "same");
    await change(snaps, `${work}/a`, 0, "1");
    await change(snaps, `${work}/b`, 0, "2");
    const hash = await sha256("same");
    assertEquals([...Deno.readDirSync(`${session}/snapshots/objects`)].map((e) => e.name), [hash]);
    assertEquals(await Deno.readTextFile(`${session}/snapshots/objects/${hash}`), "same");
    const index = (await Deno.readTextFile(`${session}/snapshots/index.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    assertEquals(index, [
      { checkpoint: 0, path: `${work}/a`, before: hash, after: await sha256("1"), at: 42 },
      { checkpoint: 0, path: `${work}/b`, before: hash, after: await sha256("2"), at: 42 },
    ]);
    await Deno.writeTextFile(`${session}/snapshots/index.jsonl`, '{"torn', { append: true });
    assertEquals(await new FileSnapshots(session).changedSince(0), [`${work}/a`, `${work}/b`]);
  });
});

Deno.test("turnCheckpoints: user turns only, not markers, D-Mails or compaction", () => {
  const lines = [
    { role: "_system_prompt", content: "sp" },
    { role: "_checkpoint", id: 0 },
    { role: "user", content: [{ type: "text", text: "<system>CHECKPOINT 0</system>" }] },
    { role: "user", content: "first" },
    { role: "_checkpoint", id: 1 },
    { role: "assistant", content: "hi" },
    { role: "_usage", token_count: 3 },
    { role: "user", content: "steer" },
    { role: "_checkpoint", id: 2 },
    { role: "user", content: [{ type: "text", text: "<system>You just got a D-Mail</system>" }] },
    { role: "_checkpoint", id: 3 },
    { role: "user", content: [{ type: "text", text: "second" }] },
  ].map((r) => JSON.stringify(r));
  assertEquals(turnCheckpoints(lines.join("\n") + "\n{torn"), [0, 3]);
  assertEquals(turnCheckpoints(""), []);
});

Deno.test("undo summary and D-Mail note wording", () => {
  assertEquals(
    undoSummary(1, {
      restored: ["/w/a", "/w/b"],
      conflicts: [{ path: "/w/c", reason: "was changed outside the agent since" }],
      unavailable: ["/w/d"],
    }, (p) => p.slice(3)),
    "Undid the last turn.\nRestored 2 files: a, b.\n" +
      "`c` was changed outside the agent since; left as it is.\n" +
      "`d` can no longer be restored: its snapshot was evicted to keep the snapshot storage " +
      "under its size cap; left as it is.",
  );
  assertEquals(
    undoSummary(2, { restored: [], conflicts: [], unavailable: [] }),
    "Undid the last 2 turns.\nNo files had been changed by the agent since.",
  );
  assertEquals(dmailRestoreNote({ conflicts: [], unavailable: [] }), "");
  assertEquals(
    dmailRestoreNote({
      conflicts: [{ path: "/a", reason: "was deleted outside" }],
      unavailable: [],
    }),
    "<system>Files changed after the checkpoint were restored, except:\n" +
      "- `/a` was deleted outside; it was left as it is.</system>",
  );
});

Deno.test("after 500 changes over 50 turns, each undo restores exactly the undone turn's files", async () => {
  await withDirs(async (session, work) => {
    const snaps = new FileSnapshots(session);
    const path = (i: number) => `${work}/f${i}.txt`;
    // 300 files exist before; turn t changes 10 files: mostly new ones, some changed again in
    // a later turn, some created by the agent.
    const initial = new Map<string, string | null>();
    for (let i = 0; i < 400; i++) {
      const text = i < 300 ? `original ${i}\n`.repeat(1 + (i % 7)) : null;
      if (text !== null) await Deno.writeTextFile(path(i), text);
      initial.set(path(i), text);
    }
    /** The content of every file at the end of each turn. */
    const states: Map<string, string | null>[] = [new Map(initial)];
    /** The files each turn changed. */
    const changed: Set<string>[] = [];
    for (let t = 0; t < 50; t++) {
      const state = new Map(states[states.length - 1]);
      changed.push(new Set());
      for (let k = 0; k < 10; k++) {
        const i = (t * 10 + k) % 2 === 0 ? (t * 10 + k) % 400 : (t * 37 + k * 13) % 400;
        const text = `turn ${t} change ${k} of ${i}\n`;
        await change(snaps, path(i), t, text);
        state.set(path(i), text);
        changed[t].add(path(i));
      }
      states.push(state);
    }
    const current = async (p: string) => (await exists(p)) ? await Deno.readTextFile(p) : null;
    // Undo the turns one by one from the last, half of them through a fresh instance (another
    // process reading the log).
    let live = snaps;
    for (let t = 49; t >= 40; t--) {
      if (t % 2 === 0) live = new FileSnapshots(session);
      assertEquals(new Set(await live.changedSince(t)), changed[t]);
      const report = await live.restoreSince(t);
      assertEquals(report.conflicts, []);
      assertEquals(report.unavailable, []);
      assertEquals(report.restored.length, changed[t].size);
      assertEquals(new Set(report.restored), changed[t]);
      for (const [p, v] of states[t]) assertEquals(await current(p), v, `${p} after undo of ${t}`);
    }
    // Every blob left is needed by a record still in the log.
    const index = (await Deno.readTextFile(`${session}/snapshots/index.jsonl`)).trim().split("\n")
      .map((l) => JSON.parse(l));
    const blobs = new Set<string>();
    for await (const e of Deno.readDir(`${session}/snapshots/objects`)) {
      blobs.add(e.name.replace(/\.gz$/, ""));
    }
    const kept = new Set(await live.changedSince(0));
    assertEquals(kept.size > 0, true);
    const needed = new Set<string>();
    let entries: { checkpoint: number; before: string | null }[] = [];
    for (const r of index) {
      if ("rewind" in r) entries = entries.filter((e) => e.checkpoint < r.rewind);
      else entries.push(r);
    }
    for (const e of entries) if (e.before !== null) needed.add(e.before);
    assertEquals(blobs, needed);
  });
});

Deno.test("size cap over many changes: the blobs kept are the most recently needed that fit", async () => {
  await withDirs(async (session, work) => {
    const cap = 2_000;
    const snaps = new FileSnapshots(session, { maxBytes: cap });
    /** The reference policy: blobs by their newest record, newest first, while they fit. */
    const records: { before: string; size: number }[] = [];
    // Random bytes do not compress: each blob is stored as it is, so its size is known here.
    const contents = Array.from(
      { length: 40 },
      (_, k) => crypto.getRandomValues(new Uint8Array(50 + k * 7)),
    );
    for (let n = 0; n < 300; n++) {
      const i = (n * 7) % 60;
      const p = `${work}/f${i}.txt`;
      const prior = contents[(n * 11) % 40]; // contents recur: their blobs are used again
      await Deno.writeFile(p, prior);
      await change(snaps, p, n, `after ${n}`);
      records.push({ before: await sha256Bytes(prior), size: prior.length });
    }
    const lastUse = new Map<string, number>();
    records.forEach((r, seq) => lastUse.set(r.before, seq));
    const sizes = new Map(records.map((r) => [r.before, r.size]));
    let total = [...lastUse.keys()].reduce((s, h) => s + sizes.get(h)!, 0);
    const expected = new Set(lastUse.keys());
    for (const [hash] of [...lastUse].sort((a, b) => a[1] - b[1])) {
      if (total <= cap) break;
      total -= sizes.get(hash)!;
      expected.delete(hash);
    }
    const blobs = new Set<string>();
    for await (const e of Deno.readDir(`${session}/snapshots/objects`)) blobs.add(e.name);
    assertEquals(blobs, expected);
    assertEquals(blobs.size > 3, true);
  });
});

Deno.test("a blob that compresses is stored gzipped, restored byte for byte, reported when damaged", async () => {
  await withDirs(async (session, work) => {
    const text = "export function value(index: number): number { return index * 2; }\n".repeat(50);
    const objects = `${session}/snapshots/objects`;
    await Deno.writeTextFile(`${work}/a.ts`, text);
    await Deno.writeTextFile(`${work}/b.ts`, text + "// b\n");
    const snaps = new FileSnapshots(session);
    await change(snaps, `${work}/a.ts`, 0, "x");
    await change(snaps, `${work}/b.ts`, 0, "y");
    const hash = await sha256(text);
    const stored = await Deno.readFile(`${objects}/${hash}.gz`);
    assertEquals(stored.length < enc.encode(text).length / 10, true);
    const unpacked = await new Response(
      new Blob([stored]).stream().pipeThrough(new DecompressionStream("gzip")),
    ).text();
    assertEquals(unpacked, text);
    // A blob from before compression (plain) still restores.
    const plain = "written by an earlier version\n".repeat(20);
    await Deno.writeTextFile(`${work}/c.ts`, "now");
    const plainHash = await sha256(plain);
    await Deno.writeTextFile(`${objects}/${plainHash}`, plain);
    await Deno.writeTextFile(
      `${session}/snapshots/index.jsonl`,
      JSON.stringify({
        checkpoint: 1,
        path: `${work}/c.ts`,
        before: plainHash,
        after: await sha256("now"),
        at: 1,
      }) + "\n",
      { append: true },
    );
    // Damage b's blob: its undo is unavailable, the others restore.
    const bHash = await sha256(text + "// b\n");
    await Deno.writeFile(`${objects}/${bHash}.gz`, stored.subarray(0, 20));
    const report = await new FileSnapshots(session).restoreSince(0);
    assertEquals(report, {
      restored: [`${work}/a.ts`, `${work}/c.ts`],
      conflicts: [],
      unavailable: [`${work}/b.ts`],
    });
    assertEquals(await Deno.readTextFile(`${work}/a.ts`), text);
    assertEquals(await Deno.readTextFile(`${work}/c.ts`), plain);
    assertEquals(await Deno.readTextFile(`${work}/b.ts`), "y");
  });
});
