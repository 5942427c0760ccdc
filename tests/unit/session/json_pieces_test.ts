import { assert, assertEquals } from "../../helpers/assert.ts";
import {
  BIG_STRING_CHARS,
  jsonStringifyPieces,
  piecesText,
  recordBytes,
} from "../../../lib/session/json_pieces.ts";
import {
  appendJsonRecords,
  type AppendTarget,
  SessionWriteError,
} from "../../../lib/session/jsonl.ts";
import { pyJsonDumps, pyJsonPieces } from "../../../lib/wire/py_json.ts";

const decoder = new TextDecoder();

function bytesText(records: Parameters<typeof recordBytes>[0]): string {
  const parts: Uint8Array[] = [];
  // each chunk is only valid until the next is asked for: copy it
  for (const chunk of recordBytes(records)) parts.push(chunk.slice());
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    all.set(p, off);
    off += p.length;
  }
  return decoder.decode(all);
}

/** A big string with everything JSON escapes, multi-byte text and surrogate pairs at every offset. */
function hostileText(chars: number, seed: number): string {
  const alphabet = [
    "a",
    "é",
    "中",
    "😀",
    "\n",
    '"',
    "\\",
    "\u0001",
    "\u2028",
    "\ud800",
    "\udfff",
    "z",
  ];
  let x = seed;
  let s = "";
  while (s.length < chars) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += alphabet[x % alphabet.length];
  }
  return s;
}

Deno.test("recordBytes: big strings written in slices give the bytes of JSON.stringify", () => {
  for (const seed of [1, 2, 3]) {
    const big = hostileText(BIG_STRING_CHARS * 5 + seed * 7, seed);
    const value = {
      role: "assistant",
      content: [{ type: "text", text: big }, { type: "text", text: "short" }],
      tool_calls: [{ type: "function", id: "c1", function: { name: "x", arguments: big } }],
      skip: undefined,
    };
    const pieces = jsonStringifyPieces(value);
    assert(pieces.some((p) => typeof p !== "string"), "the big strings are kept as pieces");
    assertEquals(piecesText(pieces), JSON.stringify(value));
    assertEquals(
      bytesText([pieces, pieces]),
      `${JSON.stringify(value)}\n${JSON.stringify(value)}\n`,
    );
  }
});

Deno.test("recordBytes: a slice boundary inside a surrogate pair does not split the pair", () => {
  // a pair straddling every power-of-two boundary the slicer may use
  const big = "a".repeat(16 * 1024 - 1) + "😀".repeat(40_000) + "\ud800";
  const value = { text: big };
  assertEquals(bytesText([jsonStringifyPieces(value)]), JSON.stringify(value) + "\n");
});

Deno.test("pyJsonPieces: same text as pyJsonDumps, big strings kept unserialized", () => {
  const big = hostileText(BIG_STRING_CHARS + 3, 9);
  const value = {
    timestamp: 1.5,
    message: { type: "TurnBegin", payload: { user_input: big, n: [1, null, undefined, "x"] } },
    nested: { empty: {}, list: [], flag: false, nan: Number.NaN },
  };
  const pieces = pyJsonPieces(value);
  assertEquals(pieces.filter((p) => typeof p !== "string").length, 1);
  assertEquals(piecesText(pieces), pyJsonDumps(value));
  assertEquals(bytesText([pieces]), pyJsonDumps(value) + "\n");
  assertEquals(pyJsonPieces({ a: "small" }), [pyJsonDumps({ a: "small" })]);
});

Deno.test("appendJsonRecords: a write failing inside a big record is cut back to the last record", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/context.jsonl`;
    await Deno.writeTextFile(path, '{"role":"user","content":"hi"}\n');
    const before = await Deno.readTextFile(path);
    let left = 3 * 1024 * 1024;
    const open = async (p: string): Promise<AppendTarget> => {
      const f = await Deno.open(p, { append: true });
      return {
        stat: () => f.stat(),
        async write(data) {
          if (left <= 0) throw new Error("No space left on device (os error 28)");
          const n = await f.write(data.subarray(0, Math.min(left, data.length)));
          left -= n;
          return n;
        },
        truncate: (len) => f.truncate(len),
        close: () => f.close(),
      };
    };
    const record = jsonStringifyPieces({ role: "assistant", content: "x".repeat(8 * 1024 * 1024) });
    let error: unknown;
    try {
      await appendJsonRecords(path, [record], { open });
    } catch (err) {
      error = err;
    }
    assert(error instanceof SessionWriteError && error.restored);
    assertEquals(await Deno.readTextFile(path), before);
    await appendJsonRecords(path, [record]);
    const lines = (await Deno.readTextFile(path)).split("\n");
    assertEquals(lines.length, 3);
    assertEquals(JSON.parse(lines[1]).content.length, 8 * 1024 * 1024);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
