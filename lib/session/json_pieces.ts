/**
 * JSON text of a session record as pieces, so a record holding a huge string (a pasted log, a
 * long streamed reply) is written to disk slice by slice instead of being built as one line:
 * `JSON.stringify` of a 95 MB string makes a 95 MB copy, each `+ "\n"` or `join` another, and
 * encoding it a third. With pieces, the huge string stays the one string the message holds and
 * is serialized and encoded 1 Mi characters at a time; the bytes written are identical to the
 * single-string serialization.
 *
 * @module
 */

/** Strings at least this long are kept as a {@link BigJsonString} piece. */
export const BIG_STRING_CHARS = 64 * 1024;

/** A string value serialized only when written (as `JSON.stringify(value)` would). */
export interface BigJsonString {
  /** The unserialized string. */
  big: string;
}

/** Part of a record's JSON text: serialized text, or a big string to serialize when written. */
export type JsonPiece = string | BigJsonString;

/** Whether `value` (plain JSON data) holds a string of at least {@link BIG_STRING_CHARS}. */
export function hasBigString(value: unknown): boolean {
  if (typeof value === "string") return value.length >= BIG_STRING_CHARS;
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(hasBigString);
  for (const k in value as Record<string, unknown>) {
    if (hasBigString((value as Record<string, unknown>)[k])) return true;
  }
  return false;
}

/**
 * `JSON.stringify(value)` as pieces: identical text once the pieces are serialized, with every
 * string value of at least {@link BIG_STRING_CHARS} left as a {@link BigJsonString}.
 */
export function jsonStringifyPieces(value: unknown): JsonPiece[] {
  if (!hasBigString(value)) return [JSON.stringify(value)];
  // Each big string is swapped for a marker no content can hold (a fresh random nonce), so
  // everything else keeps JSON.stringify's exact semantics.
  const nonce = crypto.randomUUID();
  const bigs: string[] = [];
  const text = JSON.stringify(value, (_key, v) => {
    if (typeof v === "string" && v.length >= BIG_STRING_CHARS) {
      bigs.push(v);
      return `${nonce}:${bigs.length - 1}`;
    }
    return v;
  });
  const pieces: JsonPiece[] = [];
  const open = `"${nonce}:`;
  let from = 0;
  for (;;) {
    const at = text.indexOf(open, from);
    if (at < 0) break;
    const close = text.indexOf('"', at + open.length);
    pieces.push(text.slice(from, at), { big: bigs[Number(text.slice(at + open.length, close))] });
    from = close + 1;
  }
  pieces.push(text.slice(from));
  return pieces.filter((p) => p !== "");
}

/**
 * Characters of a big string serialized at a time: small enough that each slice's JSON text
 * dies young (in V8's new space) instead of piling up as large objects until a full GC.
 */
const SLICE_CHARS = 16 * 1024;
/** Bytes encoded before they are handed out to be written (one buffer, reused). */
const CHUNK_BYTES = 1024 * 1024;
/** What `JSON.stringify` escapes in a string (or may: any surrogate). */
// deno-lint-ignore no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

const encoder = new TextEncoder();

/**
 * The UTF-8 bytes of `records` (each list of pieces one record; `\n` appended to each). Records
 * without a big string come as one chunk. Otherwise they are encoded into one reused buffer of
 * a megabyte, handed out when full (use each chunk before asking for the next): big strings are
 * serialized a slice at a time (never between the two halves of a surrogate pair, so escaping
 * matches the whole string's), a slice with nothing to escape encoded as it is.
 */
export function* recordBytes(records: readonly (readonly JsonPiece[])[]): Generator<Uint8Array> {
  if (!records.some((r) => r.some((p) => typeof p !== "string"))) {
    yield encoder.encode(records.map((r) => (r as string[]).join("") + "\n").join(""));
    return;
  }
  const buf = new Uint8Array(CHUNK_BYTES);
  let pos = 0;
  // encodeInto never splits a character: when the buffer is full, hand it out and go on
  function* put(text: string): Generator<Uint8Array> {
    for (;;) {
      const { read, written } = encoder.encodeInto(text, buf.subarray(pos));
      pos += written;
      if (read === text.length) return;
      yield buf.subarray(0, pos);
      pos = 0;
      text = text.slice(read);
    }
  }
  for (const pieces of records) {
    for (const piece of pieces) {
      if (typeof piece === "string") {
        yield* put(piece);
        continue;
      }
      const s = piece.big;
      yield* put('"');
      for (let i = 0; i < s.length;) {
        let end = Math.min(s.length, i + SLICE_CHARS);
        const last = s.charCodeAt(end - 1);
        if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--;
        const slice = s.slice(i, end);
        yield* put(NEEDS_ESCAPE.test(slice) ? JSON.stringify(slice).slice(1, -1) : slice);
        i = end;
      }
      yield* put('"');
    }
    yield* put("\n");
  }
  if (pos > 0) yield buf.subarray(0, pos);
}

/** The text of `pieces` as one string (for small records and tests). */
export function piecesText(pieces: readonly JsonPiece[]): string {
  return pieces.map((p) => typeof p === "string" ? p : JSON.stringify(p.big)).join("");
}
