/**
 * JSON in the layout of Python's `json.dumps` defaults (`", "` and `": "` separators,
 * non-ASCII kept), used for `wire.jsonl` records and `context.jsonl` control records so files
 * match the reference byte for byte where it matters.
 *
 * @module
 */

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
