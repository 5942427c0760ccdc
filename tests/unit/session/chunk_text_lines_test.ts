/**
 * `chunkTextLines` (one decode per chunk; its `ChunkLineDecoder` is what `Context.restore`
 * uses) yields each line as if it were decoded on its own (bad UTF-8 replaced within the line, one leading BOM dropped, `\r`
 * stripped), on random byte streams cut into random chunks: multi-byte characters split across
 * chunks and lines, torn and invalid UTF-8, BOMs, `\r\n`, blank lines, empty chunks, lines
 * longer than a chunk, with and without a final newline.
 */
import { assertEquals } from "../../helpers/assert.ts";
import { chunkTextLines } from "../../../lib/session/jsonl.ts";

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

const enc = new TextEncoder();
const PIECES: Uint8Array[] = [
  enc.encode('{"role":"user","content":"hi"}'),
  enc.encode("é"),
  enc.encode("🙂"),
  enc.encode("\uFEFF"), // a BOM
  enc.encode("\r"),
  enc.encode("\n"),
  enc.encode("\r\n"),
  enc.encode("\n\n"),
  enc.encode("x".repeat(300)),
  new Uint8Array([0xF0, 0x9F]), // a torn 4-byte character
  new Uint8Array([0xC3]), // a torn 2-byte character
  new Uint8Array([0xFF, 0xFE]), // never valid
  new Uint8Array([0x80]), // a lone continuation byte
];

/** The same bytes as chunks, each copied into one reused buffer (as fileChunks hands them). */
async function* chunked(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  const buf = new Uint8Array(bytes.length + 1);
  let start = 0;
  for (const end of [...cuts, bytes.length]) {
    buf.set(bytes.subarray(start, end));
    yield buf.subarray(0, end - start);
    buf.fill(0x41); // whatever kept a view of the chunk now sees other bytes
    start = end;
  }
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The reference: split at newline bytes, each line decoded on its own. */
function linesOneByOne(bytes: Uint8Array): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 10) continue;
    if (i === bytes.length && start === i) break; // no last line after a final newline
    const line = new TextDecoder().decode(bytes.subarray(start, i));
    out.push(line.endsWith("\r") ? line.slice(0, -1) : line);
    start = i + 1;
  }
  return out;
}

Deno.test("chunkTextLines yields each line as decoded on its own, on random streams and cuts", async () => {
  const r = rng(3434);
  let lines = 0;
  for (let i = 0; i < 1_500; i++) {
    const parts: Uint8Array[] = [];
    const n = 1 + Math.floor(r() * 40);
    for (let j = 0; j < n; j++) parts.push(PIECES[Math.floor(r() * PIECES.length)]);
    const total = parts.reduce((s, p) => s + p.length, 0);
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.length;
    }
    // Random cut points, repeats allowed (empty chunks).
    const cuts = Array.from({ length: Math.floor(r() * 8) }, () => Math.floor(r() * (total + 1)))
      .sort((a, b) => a - b);
    const expected = linesOneByOne(bytes);
    const actual = await collect(chunkTextLines(chunked(bytes, cuts)));
    assertEquals(actual, expected, `stream ${i}: ${JSON.stringify([...bytes])} cut at ${cuts}`);
    lines += actual.length;
  }
  // The streams are not trivially empty.
  assertEquals(lines > 5_000, true);
});
