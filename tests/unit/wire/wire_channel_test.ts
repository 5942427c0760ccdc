import { Wire } from "../../../lib/wire/channel.ts";
import {
  event,
  fromEnvelope,
  partEvent,
  toEnvelope,
  type WireMessage,
} from "../../../lib/wire/messages.ts";
import { pyJsonDumps } from "../../../lib/wire/py_json.ts";
import { WireFile } from "../../../lib/wire/recorder.ts";
import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";

async function drain(sub: AsyncIterable<WireMessage>): Promise<WireMessage[]> {
  const out: WireMessage[] = [];
  for await (const m of sub) out.push(m);
  return out;
}

Deno.test("wire: raw keeps every chunk, merged follows the merge rules", async () => {
  const wire = new Wire();
  const raw = drain(wire.subscribe({ merge: false }));
  const merged = drain(wire.subscribe({ merge: true }));
  wire.send(event("StepBegin", { n: 1 }));
  wire.send(partEvent({ type: "text", text: "Hel" }));
  wire.send(partEvent({ type: "text", text: "lo" }));
  wire.send(partEvent({ type: "think", think: "a", encrypted: null }));
  wire.send(partEvent({ type: "think", think: "b", encrypted: "sig" }));
  wire.send(partEvent({ type: "think", think: "c", encrypted: null }));
  wire.send(
    partEvent({
      type: "function",
      id: "t1",
      function: { name: "X", arguments: null },
      extras: null,
    }),
  );
  wire.send(partEvent({ arguments_part: '{"a"' }));
  wire.send(partEvent({ arguments_part: null }));
  wire.send(partEvent({ arguments_part: ": 1}" }));
  wire.send(partEvent({ type: "image_url", image_url: { url: "data:x", id: null } }));
  wire.send(partEvent({ type: "image_url", image_url: { url: "data:y", id: null } }));
  wire.send(event("TurnEnd", {}));
  wire.shutdown();
  assertEquals((await raw).length, 13);
  const m = (await merged).map((x) => x.payload);
  assertEquals(m, [
    { n: 1 },
    { type: "text", text: "Hello" },
    { type: "think", think: "ab", encrypted: "sig" },
    { type: "think", think: "c", encrypted: null },
    { type: "function", id: "t1", function: { name: "X", arguments: '{"a": 1}' }, extras: null },
    { type: "image_url", image_url: { url: "data:x", id: null } },
    { type: "image_url", image_url: { url: "data:y", id: null } },
    {},
  ]);
});

Deno.test("wire: text pieces merge into one text, the raw pieces stay as sent", async () => {
  const wire = new Wire();
  const raw = drain(wire.subscribe({ merge: false }));
  const merged = drain(wire.subscribe({ merge: true }));
  const pieces = Array.from({ length: 1000 }, (_, i) => `p${i};`);
  for (const text of pieces.slice(0, 500)) wire.send(partEvent({ type: "text", text }));
  wire.send(partEvent({ type: "think", think: "t", encrypted: null }));
  wire.send(partEvent({ type: "text", text: "solo" }));
  wire.send(event("StepBegin", { n: 2 }));
  // still buffered when the wire shuts down: published then
  for (const text of pieces.slice(500)) wire.send(partEvent({ type: "text", text }));
  wire.shutdown();
  assertEquals(
    (await raw).filter((m) => m.type === "ContentPart").map((m) => m.payload),
    [
      ...pieces.slice(0, 500).map((text) => ({ type: "text", text })),
      { type: "think", think: "t", encrypted: null },
      { type: "text", text: "solo" },
      ...pieces.slice(500).map((text) => ({ type: "text", text })),
    ],
  );
  assertEquals((await merged).map((m) => m.payload), [
    { type: "text", text: pieces.slice(0, 500).join("") },
    { type: "think", think: "t", encrypted: null },
    { type: "text", text: "solo" },
    { n: 2 },
    { type: "text", text: pieces.slice(500).join("") },
  ]);
});

Deno.test("wire.adoptText: only the exact joined text of the buffered pieces is taken", async () => {
  const pieces = ["alpha ", "beta ", "", "gamma", "é😀 δ"];
  const joined = pieces.join("");
  const offers: [string, string | null][] = [
    // [offered text, what the merged text part must then be]
    [joined, joined],
    [joined.slice(0, -1), joined], // a prefix
    [joined + "x", joined], // longer
    [joined.replace("beta", "bEta"), joined], // one piece differs
    ["alpha beta gamma", joined], // the pieces of another split
    ["", joined],
  ];
  for (const [offer, expected] of offers) {
    const wire = new Wire();
    const merged = drain(wire.subscribe({ merge: true }));
    const raw = drain(wire.subscribe({ merge: false }));
    for (const text of pieces) wire.send(partEvent({ type: "text", text }));
    wire.adoptText(offer);
    wire.send(event("StepBegin", { n: 1 }));
    // adopting after the buffer was published changes nothing
    wire.adoptText("late");
    wire.shutdown();
    assertEquals((await merged).map((m) => m.payload), [{ type: "text", text: expected }, {
      n: 1,
    }]);
    assertEquals(
      (await raw).filter((m) => m.type === "ContentPart").map((m) => m.payload),
      pieces.map((text) => ({ type: "text", text })),
    );
  }
  // nothing buffered, a think part buffered, a single text piece: the offer is ignored
  const wire = new Wire();
  const merged = drain(wire.subscribe({ merge: true }));
  wire.adoptText("x");
  wire.send(partEvent({ type: "think", think: "a", encrypted: null }));
  wire.send(partEvent({ type: "think", think: "b", encrypted: null }));
  wire.adoptText("ab");
  wire.send(partEvent({ type: "text", text: "one" }));
  wire.adoptText("two");
  wire.shutdown();
  assertEquals((await merged).map((m) => m.payload), [
    { type: "think", think: "ab", encrypted: null },
    { type: "text", text: "one" },
  ]);
});

Deno.test("envelopes: legacy names and fields are accepted; payloads are objects", () => {
  const a = fromEnvelope({
    type: "ApprovalRequestResolved",
    payload: { request_id: "r", response: "approve" },
  });
  assert(a.kind === "event");
  assertEquals(a.event, {
    type: "ApprovalResponse",
    payload: { request_id: "r", response: "approve", feedback: "" },
  });
  const s = fromEnvelope({
    type: "SubagentEvent",
    payload: { task_tool_call_id: "tc", event: { type: "TurnEnd", payload: {} } },
  });
  assert(s.kind === "event");
  assertEquals((s.event.payload as { parent_tool_call_id: string }).parent_tool_call_id, "tc");
  assertEquals(toEnvelope(event("TurnEnd", {})), { type: "TurnEnd", payload: {} });
  assertThrows(() => fromEnvelope({ type: "StepBegin", payload: { n: "1" } }));
  assertEquals(fromEnvelope({ type: "Nope", payload: { a: 1 } }).kind, "unknown");
});

Deno.test("py_json uses Python's separators and keeps non-ASCII", () => {
  assertEquals(
    pyJsonDumps({ a: [1, "é"], b: null, c: { d: true } }),
    '{"a": [1, "é"], "b": null, "c": {"d": true}}',
  );
});

Deno.test("wire.jsonl: header once, records read back, torn and malformed lines skipped", async () => {
  const dir = await Deno.makeTempDir();
  const f = new WireFile(`${dir}/wire.jsonl`);
  await f.append(event("TurnBegin", { user_input: "hi" }), 1.5);
  await f.append(event("TurnEnd", {}), 2);
  await Deno.writeTextFile(
    `${dir}/wire.jsonl`,
    'garbage\n{"timestamp": 3, "message": {"type": "Tu',
    {
      append: true,
    },
  );
  const lines = (await Deno.readTextFile(`${dir}/wire.jsonl`)).split("\n");
  assertEquals(lines[0], '{"type": "metadata", "protocol_version": "1.10"}');
  assertEquals(
    lines[1],
    '{"timestamp": 1.5, "message": {"type": "TurnBegin", "payload": {"user_input": "hi"}}}',
  );
  const recs = [];
  for await (const r of new WireFile(`${dir}/wire.jsonl`).records()) recs.push(r.message.type);
  assertEquals(recs, ["TurnBegin", "TurnEnd"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("wire.jsonl: appends through one WireFile land in call order, header first", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const f = new WireFile(`${dir}/wire.jsonl`);
    // not awaited one by one: a turn's records and a notification between turns can overlap
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => f.append(event("TurnBegin", { user_input: `m${i}` }))),
    );
    const lines = (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n");
    assertEquals(lines[0], '{"type": "metadata", "protocol_version": "1.10"}');
    assertEquals(
      lines.slice(1).map((l) => JSON.parse(l).message.payload.user_input),
      Array.from({ length: 40 }, (_, i) => `m${i}`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wire.room(): a producer waits while a reader lags, and resumes as it catches up", async () => {
  const wire = new Wire();
  const sub = wire.subscribe({ merge: false });
  for (let i = 0; i < 5; i++) wire.send(event("StepBegin", { n: i }));
  let released = false;
  const waiting = wire.room(3).then(() => (released = true));
  await new Promise((r) => setTimeout(r, 10));
  assertEquals(released, false);
  await sub.next();
  await sub.next();
  await new Promise((r) => setTimeout(r, 0));
  assertEquals(released, false); // 3 left: still not below the limit
  await sub.next();
  await waiting;
  assertEquals(released, true);
  wire.shutdown();
  await wire.room(1); // a closed wire never blocks
});
