/**
 * Big turns over `kimi --wire` keep their exact output: a prompt and a reply larger than the
 * size at which records and messages are written as pieces (64 Ki characters) come back whole
 * in the events, are recorded in `wire.jsonl` and `context.jsonl` byte for byte as the
 * single-string serializers write them, and replay as recorded.
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";
import { pyJsonDumps } from "../../lib/wire/py_json.ts";

async function findFile(dir: string, name: string): Promise<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isFile && e.name === name) return path;
    if (e.isDirectory) {
      try {
        return await findFile(path, name);
      } catch {
        // not under this one
      }
    }
  }
  throw new Error(`no ${name} under ${dir}`);
}

const events = (lines: WireLine[]) =>
  lines.filter((l) => l.method === "event").map((l) => l.params as { type: string; payload: any });

Deno.test("wire: a 200 KB prompt and a reply of 3,000 parts are streamed, recorded and replayed exactly", async () => {
  const sb = await kimiSandbox();
  try {
    // the reply: 3,000 pieces with multi-byte characters, quotes and backslashes (> 64 Ki chars)
    const pieces = Array.from(
      { length: 3000 },
      (_, i) => `piece ${i} é中😀 say "hi" \\ back;`,
    );
    const config = await sb.scriptedConfig([pieces.map((p) => `text: ${p}`).join("\n")], {
      models: {
        scripted: { provider: "echo", model: "scripted_echo", max_context_size: 10_000_000 },
      },
    });
    // the prompt: a pasted log with everything JSON escapes, a lone surrogate and emoji
    const prompt = Array.from(
      { length: 5000 },
      (_, i) => `${i}\t"quoted" \\path\\ \u0001 ü 😀 \ud800 end`,
    ).join("\n");
    assert(prompt.length > 150_000);

    const wire = spawnWire(sb, ["--config-file", config]);
    await wire.call("init", "initialize", { protocol_version: "1.10" });
    const { lines, response } = await wire.call("p", "prompt", { user_input: prompt });
    assertEquals(response.result, { status: "finished" });
    const live = events(lines);
    assertEquals(live[0], { type: "TurnBegin", payload: { user_input: prompt } });
    const texts = live.filter((e) => e.type === "ContentPart").map((e) => e.payload.text);
    assertEquals(texts, pieces);

    // wire.jsonl: every record as pyJsonDumps writes it; the merged reply is one record
    const wireText = await Deno.readTextFile(await findFile(sb.shareDir, "wire.jsonl"));
    const wireLines = wireText.split("\n");
    assertEquals(wireLines.pop(), "");
    for (const line of wireLines) assertEquals(line, pyJsonDumps(JSON.parse(line)));
    const recorded = wireLines.slice(1).map((l) => JSON.parse(l).message);
    assertEquals(recorded[0], { type: "TurnBegin", payload: { user_input: prompt } });
    assertEquals(
      recorded.filter((m) => m.type === "ContentPart"),
      [{ type: "ContentPart", payload: { type: "text", text: pieces.join("") } }],
    );

    // context.jsonl: messages as JSON.stringify writes them, bookkeeping as pyJsonDumps
    const contextText = await Deno.readTextFile(await findFile(sb.shareDir, "context.jsonl"));
    const contextLines = contextText.split("\n");
    assertEquals(contextLines.pop(), "");
    const records = contextLines.map((line) => {
      const rec = JSON.parse(line);
      const expected = rec.role.startsWith("_") ? pyJsonDumps(rec) : JSON.stringify(rec);
      assertEquals(line, expected);
      return rec;
    });
    const messages = records.filter((r) => !r.role.startsWith("_"));
    assertEquals(messages.map((m) => [m.role, m.content]), [
      ["user", prompt],
      ["assistant", pieces.join("")],
    ]);

    // replay sends what was recorded
    const replay = await wire.call("r", "replay");
    assertEquals(replay.response.result, {
      status: "finished",
      events: recorded.length,
      requests: 0,
    });
    assertEquals(events(replay.lines), recorded);
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
