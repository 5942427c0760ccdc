/**
 * `quickParseMessage` (the zod-free parse of well-formed `context.jsonl` records) against
 * `MessageSchema`: on generated records of every kind, then on those records mutated (a field
 * removed, retyped, renamed or added at any depth), the quick parse accepts exactly what the
 * schema accepts, with the same value (fields, defaults and key order), and defers to the schema
 * only for a tool call's non-null `extras`.
 */
import { assert, assertEquals } from "../../helpers/assert.ts";
import { MessageSchema, quickParseMessage } from "../../../lib/llm/message.ts";

/** A small seeded PRNG (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const maybe = (p = 0.5) => r() < p;
  const str = () => pick(["", "a", "héllo", "line\nbreak", "<system>x</system>", "{}", "🙂"]);
  const nullableStr = (o: Record<string, Json>, key: string) => {
    const v = r();
    if (v < 0.33) return;
    o[key] = v < 0.66 ? null : str();
  };
  const part = (): Json => {
    const type = pick(["text", "think", "image_url", "audio_url", "video_url"]);
    const o: Record<string, Json> = {};
    // key order varies: the output's order must not follow the input's
    if (maybe()) o.type = type;
    if (type === "text") o.text = str();
    else if (type === "think") {
      o.think = str();
      nullableStr(o, "encrypted");
    } else {
      const ref: Record<string, Json> = { url: `data:x/${str()}` };
      nullableStr(ref, "id");
      if (maybe(0.1)) ref.extra = 1;
      o[type] = ref;
    }
    if (!("type" in o)) o.type = type;
    if (maybe(0.1)) o.unknown = "dropped";
    return o;
  };
  const toolCall = (): Json => {
    const fn: Record<string, Json> = { name: pick(["Shell", "WriteFile", ""]) };
    nullableStr(fn, "arguments");
    const o: Record<string, Json> = {};
    if (maybe()) o.type = "function";
    o.id = `call_${Math.floor(r() * 100)}`;
    o.function = fn;
    const e = r();
    if (e < 0.2) o.extras = null;
    else if (e < 0.3) o.extras = { signature: str() };
    return o;
  };
  const message = (): Json => {
    const o: Record<string, Json> = {};
    const role = pick(["system", "user", "assistant", "tool"]);
    if (maybe(0.1)) o.content = "first";
    o.role = role;
    if (maybe(0.1)) o.name = str();
    o.content = maybe(0.4) ? str() : Array.from({ length: Math.floor(r() * 4) }, part);
    if (role === "assistant" && maybe(0.6)) {
      o.tool_calls = Array.from({ length: Math.floor(r() * 3) }, toolCall);
    }
    if (role === "tool" || maybe(0.05)) o.tool_call_id = `call_${Math.floor(r() * 100)}`;
    if (maybe(0.1)) o.partial = maybe();
    if (maybe(0.1)) o.extra_field = { any: [1, 2] };
    return o;
  };
  /** Every (container, key) in a value, depth first. */
  const slots = (v: Json, out: [Json[] | Record<string, Json>, string | number][] = []) => {
    if (Array.isArray(v)) {
      v.forEach((x, i) => {
        out.push([v, i]);
        slots(x, out);
      });
    } else if (v !== null && typeof v === "object") {
      for (const k of Object.keys(v)) {
        out.push([v, k]);
        slots(v[k], out);
      }
    }
    return out;
  };
  const otherValue = (): Json =>
    pick<Json>([
      null,
      0,
      1.5,
      true,
      false,
      "",
      "text",
      "function",
      "user",
      "think",
      "image_url",
      [],
      [{ type: "text", text: "x" }],
      {},
      { type: "text", text: "x" },
      { url: "u" },
    ]);
  /** One random mutation of a message, in place. */
  const mutate = (m: Json): void => {
    const all = slots(m);
    if (all.length === 0) return;
    const [container, key] = pick(all);
    const op = r();
    if (Array.isArray(container)) {
      if (op < 0.3) container.splice(key as number, 1);
      else if (op < 0.5) container.push(otherValue());
      else container[key as number] = otherValue();
    } else {
      const k = key as string;
      if (op < 0.3) delete container[k];
      else if (op < 0.45) container[`${k}_renamed`] = container[k];
      else if (op < 0.55) container[k] = pick(["system", "bogus", "tool", "text", "video_url"]);
      else container[k] = otherValue();
    }
  };
  return { message, mutate, maybe };
}

/** Whether a record has a tool call with non-null `extras` (left to the schema). */
function hasExtras(rec: unknown): boolean {
  const calls = (rec as { tool_calls?: unknown })?.tool_calls;
  return Array.isArray(calls) &&
    calls.some((c) => c !== null && typeof c === "object" && "extras" in c && c.extras !== null);
}

Deno.test("quickParseMessage gives exactly the schema's verdict and value, valid and mutated records", () => {
  const gen = generator(34);
  let accepted = 0;
  let rejected = 0;
  let deferred = 0;
  for (let i = 0; i < 20_000; i++) {
    const original = gen.message();
    const candidate = structuredClone(original);
    const mutations = i % 4 === 0 ? 0 : 1 + (i % 3);
    for (let j = 0; j < mutations; j++) gen.mutate(candidate);
    // Records come from JSON.parse: same for the candidates.
    const rec = JSON.parse(JSON.stringify(candidate));
    const quick = quickParseMessage(structuredClone(rec));
    const schema = MessageSchema.safeParse(structuredClone(rec));
    const where = `record ${i}: ${JSON.stringify(rec)}`;
    if (quick !== undefined) {
      assert(schema.success, `quick accepted what the schema rejects: ${where}`);
      assertEquals(quick, schema.data, where);
      assertEquals(JSON.stringify(quick), JSON.stringify(schema.data), `key order: ${where}`);
      accepted++;
    } else if (schema.success) {
      assert(hasExtras(rec), `quick refused what the schema accepts: ${where}`);
      deferred++;
    } else {
      rejected++;
    }
    if (mutations === 0 && !hasExtras(rec)) {
      assert(quick !== undefined, `a generated well-formed record was refused: ${where}`);
    }
  }
  // Both verdicts (and the deferral) are exercised in volume.
  assert(accepted > 5_000, `accepted ${accepted}`);
  assert(rejected > 3_000, `rejected ${rejected}`);
  assert(deferred > 100, `deferred ${deferred}`);
});

Deno.test("quickParseMessage fills the schema's defaults and drops unknown fields", () => {
  const rec = {
    content: [{ text: "a", type: "text", x: 1 }, { type: "think", think: "t" }, {
      type: "image_url",
      image_url: { url: "u", more: 1 },
    }],
    role: "assistant",
    tool_calls: [{ id: "1", function: { name: "f" } }],
    extra: true,
  };
  assertEquals(JSON.stringify(quickParseMessage(rec)), JSON.stringify(MessageSchema.parse(rec)));
  assertEquals(quickParseMessage(rec), {
    role: "assistant",
    content: [
      { type: "text", text: "a" },
      { type: "think", think: "t", encrypted: null },
      { type: "image_url", image_url: { url: "u", id: null } },
    ],
    tool_calls: [{
      type: "function",
      id: "1",
      function: { name: "f", arguments: null },
      extras: null,
    }],
  });
  // Malformed: left to the schema (which rejects these).
  for (
    const bad of [
      null,
      [],
      "user",
      { role: "user" },
      { role: "owner", content: "x" },
      { role: "user", content: "x", tool_calls: null },
      { role: "user", content: [{ type: "text" }] },
      { role: "user", content: [null] },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ type: null, id: "1", function: { name: "f" } }],
      },
      { role: "user", content: "x", partial: null },
    ]
  ) {
    assertEquals(quickParseMessage(bad), undefined, JSON.stringify(bad));
    assertEquals(MessageSchema.safeParse(bad).success, false, JSON.stringify(bad));
  }
});
