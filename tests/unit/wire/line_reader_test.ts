import { assertEquals } from "../../helpers/assert.ts";
import { readLines } from "../../../lib/wire/line_reader.ts";

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  // each chunk its own buffer, as a real stream yields them
  return ReadableStream.from(chunks.map((c) => c.slice()));
}

async function collect(chunks: Uint8Array[], maxBytes?: number): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for await (const line of readLines(streamOf(chunks), maxBytes)) out.push(line);
  return out;
}

const text = 'é😀中 {"a":"b"}\r\nsecond line ü\n\nthird\r\n😀😀\nlast without newline é';
const expected = [
  'é😀中 {"a":"b"}',
  "second line ü",
  "",
  "third",
  "😀😀",
  "last without newline é",
];
const bytes = new TextEncoder().encode(text);

Deno.test("readLines: the same lines whatever the chunking, multi-byte characters split anywhere", async () => {
  assertEquals(await collect([bytes]), expected);
  for (let cut = 1; cut < bytes.length; cut++) {
    assertEquals(
      await collect([bytes.subarray(0, cut), bytes.subarray(cut)]),
      expected,
      `cut ${cut}`,
    );
  }
  for (const size of [1, 2, 3, 5]) {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
    assertEquals(await collect(chunks), expected, `chunks of ${size}`);
  }
});

Deno.test("readLines: a line over the limit is yielded as null and the next line is intact", async () => {
  const enc = new TextEncoder();
  const long = enc.encode("é".repeat(20) + "\nok é\n");
  // the long line is 40 bytes: split it so the limit is crossed in the middle of a character
  assertEquals(
    await collect([long.subarray(0, 17), long.subarray(17, 31), long.subarray(31)], 30),
    [
      null,
      "ok é",
    ],
  );
  assertEquals(await collect([long], 30), [null, "ok é"]);
  // a truncated character at the end of a line decodes as U+FFFD, as decoding the line whole does
  assertEquals(await collect([new Uint8Array([0x61, 0xc3]), new Uint8Array([0x0a, 0x62])]), [
    "a\ufffd",
    "b",
  ]);
});

Deno.test("readLines: a source that reuses one buffer for every chunk gives the same lines", async () => {
  for (const size of [1, 3, 7, 16]) {
    const buf = new Uint8Array(size);
    const source = (async function* () {
      for (let i = 0; i < bytes.length; i += size) {
        const part = bytes.subarray(i, i + size);
        buf.fill(0xff); // whatever the reader kept of the last chunk is overwritten now
        buf.set(part);
        yield buf.subarray(0, part.length);
      }
    })();
    const out: (string | null)[] = [];
    for await (const line of readLines(source)) out.push(line);
    assertEquals(out, expected, `buffer of ${size}`);
  }
});

Deno.test("readLines: a U+FEFF inside a line is kept wherever the chunks split (no BOM stripping mid-stream)", async () => {
  const line = '{"text":"\uFEFFa\uFEFF"}';
  const data = new TextEncoder().encode(`\uFEFFfirst\n${line}\n`);
  const want = ["\uFEFFfirst", line];
  assertEquals(await collect([data]), want);
  for (let cut = 1; cut < data.length; cut++) {
    assertEquals(await collect([data.subarray(0, cut), data.subarray(cut)]), want, `cut ${cut}`);
  }
});
