/**
 * `replay` over a damaged `wire.jsonl` answers: every record that parses, before and after the
 * damage, then the result; a record file that cannot be read at all (a FIFO in its place) gets a
 * clean error naming the cause, and the server keeps answering.
 */
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";

const events = (lines: WireLine[]) =>
  lines.filter((l) => l.method === "event").map((l) => l.params.type as string);

Deno.test("replay: a damaged wire.jsonl replays what parses around the damage, a FIFO is a clean error", async () => {
  const sb = await kimiSandbox({ sessionFiles: false });
  try {
    const config = await sb.scriptedConfig(["text: one", "text: two"]);
    for (const prompt of ["first", "second"]) {
      const r = await sb.run([
        "--print",
        "--session",
        "dmg",
        "--config-file",
        config,
        "-p",
        prompt,
      ]);
      assertEquals(r.code, 0, r.stderr);
    }
    const [dir] = await sb.sessionDirs();
    const path = `${dir}/wire.jsonl`;
    const lines = (await Deno.readTextFile(path)).trimEnd().split("\n");
    const records = lines.slice(1);
    const want = records.map((l) => JSON.parse(l).message.type);
    const half = Math.floor(records.length / 2);

    // Torn and foreign lines, a record with a broken payload, invalid UTF-8, and a run of
    // 80 MB of NUL bytes without a newline (a sparse hole a crash can leave): all skipped.
    const enc = new TextEncoder();
    const damaged = [
      enc.encode([lines[0], ...records.slice(0, half)].join("\n") + "\n"),
      enc.encode(records[half].slice(0, 25) + "\n"),
      enc.encode('{"timestamp": 1, "message": {"type": "TurnEnd", "payload": "oops"}}\n'),
      enc.encode("[1, 2, 3]\nnull\n"),
      new Uint8Array([0xff, 0xfe, 0x80, 0x0a]),
      new Uint8Array(80 * 1024 * 1024),
      enc.encode("\n" + records.slice(half).join("\n") + "\n"),
    ];
    await Deno.writeFile(path, new Uint8Array(await new Blob(damaged).arrayBuffer()));

    const wire = spawnWire(sb, ["--session", "dmg", "--config-file", config]);
    await wire.call("init", "initialize", { protocol_version: "1.10" });
    const replay = await wire.call("r-1", "replay", {});
    assertEquals(events(replay.lines), [
      ...want.slice(0, half),
      "TurnEnd", // the record whose payload was not an object, replayed with an empty one
      ...want.slice(half),
    ]);
    assertEquals(replay.response.result, {
      status: "finished",
      events: want.length + 1,
      requests: 0,
    });
    assertEquals((await wire.finish()).code, 0);

    // A FIFO in place of the file: reading it would wait forever. A clean error instead.
    await Deno.remove(path);
    const mk = await new Deno.Command("mkfifo", { args: [path] }).output();
    assertEquals(mk.code, 0);
    const again = spawnWire(sb, ["--session", "dmg", "--config-file", config]);
    await again.call("init", "initialize", { protocol_version: "1.10" });
    const failed = await again.call("r-2", "replay", {});
    assertEquals(failed.response.error.message, "Replay failed");
    assertStringIncludes(failed.response.error.data.reason, "is not a regular file");
    // The server still answers.
    const second = await again.call("r-3", "replay", {});
    assertEquals(second.response.error.message, "Replay failed");
    await again.finish();
  } finally {
    await Deno.remove(`${sb.root}`, { recursive: true }).catch(() => {});
  }
});
