/**
 * The stream scaffold the SDK-backed providers share (`lib/llm/providers/sdk_stream.ts`):
 * parts come from the provider's reader chunk by chunk, id and usage are what the reader last
 * recorded, and every failure (opening, mid-stream, a stream the SDK ended quietly after an
 * abort) goes through the provider's converter exactly once.
 *
 * @module
 */
import { assert, assertEquals } from "../../helpers/assert.ts";
import type { StreamPart } from "../../../lib/llm/provider.ts";
import { type ChunkReader, sdkStream } from "../../../lib/llm/providers/sdk_stream.ts";

class Converted extends Error {
  constructor(readonly original: unknown) {
    super(`converted: ${(original as Error)?.message ?? original}`);
  }
}
const convertError = (err: unknown) => new Converted(err);

async function* chunks<C>(items: C[], failAfter?: Error): AsyncGenerator<C> {
  for (const c of items) yield c;
  if (failAfter) throw failAfter;
}

const reader: ChunkReader<{ id?: string; text?: string; tokens?: number }> = function* (c, meta) {
  if (c.id) meta.id = c.id;
  if (c.tokens !== undefined) {
    meta.usage = { input_other: c.tokens, output: 1, input_cache_read: 0, input_cache_creation: 0 };
  }
  if (c.text) yield { type: "text", text: c.text };
};

async function collect(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const p of stream) out.push(p);
  return out;
}

Deno.test("sdk stream: parts from the reader, id and usage as last recorded", async () => {
  const stream = await sdkStream({
    open: () => Promise.resolve(chunks([{ id: "r1", text: "a" }, { text: "b" }, { tokens: 5 }])),
    read: reader,
    convertError,
  });
  assertEquals(stream.id, null);
  assertEquals(await collect(stream), [{ type: "text", text: "a" }, { type: "text", text: "b" }]);
  assertEquals(stream.id, "r1");
  assertEquals(stream.usage?.input_other, 5);
});

Deno.test("sdk stream: an error opening or mid-stream is converted once", async () => {
  const boom = new Error("refused");
  let caught: unknown;
  try {
    await sdkStream({ open: () => Promise.reject(boom), read: reader, convertError });
  } catch (err) {
    caught = err;
  }
  assert(caught instanceof Converted && caught.original === boom, String(caught));

  const cut = new Error("socket closed");
  const stream = await sdkStream({
    open: () => Promise.resolve(chunks([{ text: "a" }], cut)),
    read: reader,
    convertError,
  });
  const seen: StreamPart[] = [];
  caught = undefined;
  try {
    for await (const p of stream) seen.push(p);
  } catch (err) {
    caught = err;
  }
  assertEquals(seen, [{ type: "text", text: "a" }]);
  assert(caught instanceof Converted && caught.original === cut, String(caught));
});

Deno.test("sdk stream: a stream the SDK ends quietly after an abort fails with the reason", async () => {
  const ac = new AbortController();
  const reason = new Error("user cancelled");
  const stream = await sdkStream({
    open: () => Promise.resolve(chunks([{ text: "a" }])),
    read: function* (c, meta) {
      yield* reader(c, meta);
      ac.abort(reason);
    },
    convertError,
    signal: ac.signal,
  });
  let caught: unknown;
  try {
    await collect(stream);
  } catch (err) {
    caught = err;
  }
  assert(caught instanceof Converted && caught.original === reason, String(caught));
  // without an abort the same stream ends normally
  const calm = await sdkStream({
    open: () => Promise.resolve(chunks([{ text: "a" }])),
    read: reader,
    convertError,
    signal: new AbortController().signal,
  });
  assertEquals((await collect(calm)).length, 1);
});
