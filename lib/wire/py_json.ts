/**
 * JSON in the layout of Python's `json.dumps` defaults (`", "` and `": "` separators,
 * non-ASCII kept), used for `wire.jsonl` records and `context.jsonl` control records so files
 * match the reference byte for byte where it matters.
 *
 * @module
 */
import { BIG_STRING_CHARS, type JsonPiece } from "../session/json_pieces.ts";

/** Serialize a JSON value with Python's default separators. */
export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return "null";
    return String(value);
  }
  if (typeof value === "boolean") return value ? "true" : "false";
  if (Array.isArray(value)) return "[" + value.map(pyJsonDumps).join(", ") + "]";
  if (typeof value === "object") {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v === undefined) continue;
      parts.push(`${JSON.stringify(k)}: ${pyJsonDumps(v)}`);
    }
    return "{" + parts.join(", ") + "}";
  }
  return JSON.stringify(value);
}

/**
 * {@link pyJsonDumps} as pieces (see `lib/session/json_pieces.ts`): the same text once
 * serialized, with each string of at least `BIG_STRING_CHARS` characters kept unserialized and
 * no nested copies of it made.
 */
export function pyJsonPieces(value: unknown): JsonPiece[] {
  const out: JsonPiece[] = [];
  let text = "";
  const walk = (v: unknown): void => {
    if (typeof v === "string" && v.length >= BIG_STRING_CHARS) {
      if (text !== "") out.push(text);
      text = "";
      out.push({ big: v });
      return;
    }
    if (v === null || typeof v !== "object" || !isPlain(v)) {
      text += pyJsonDumps(v);
      return;
    }
    if (Array.isArray(v)) {
      text += "[";
      v.forEach((item, i) => {
        if (i > 0) text += ", ";
        walk(item);
      });
      text += "]";
      return;
    }
    text += "{";
    let first = true;
    for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
      if (item === undefined) continue;
      if (!first) text += ", ";
      first = false;
      text += `${JSON.stringify(k)}: `;
      walk(item);
    }
    text += "}";
  };
  walk(value);
  if (text !== "") out.push(text);
  return out;
}

function isPlain(v: object): boolean {
  return Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype ||
    Object.getPrototypeOf(v) === null;
}
