/**
 * Streaming reader for JSON-lines files (`context.jsonl`, `wire.jsonl`): yields one line at a
 * time so large files are never loaded whole.
 *
 * @module
 */

/**
 * Yield the non-blank lines of `path`, trimmed, in order. Stop iterating early to stop
 * reading. Throws `Deno.errors.NotFound` when the file does not exist.
 */
export async function* readJsonlLines(path: string): AsyncGenerator<string> {
  const file = await Deno.open(path, { read: true });
  const decoder = new TextDecoder();
  const buf = new Uint8Array(64 * 1024);
  let pending = "";
  try {
    for (;;) {
      const n = await file.read(buf);
      if (n === null) break;
      pending += decoder.decode(buf.subarray(0, n), { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) !== -1) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (line) yield line;
      }
    }
    pending += decoder.decode();
    const last = pending.trim();
    if (last) yield last;
  } finally {
    file.close();
  }
}

/** Parse one JSON line; `undefined` when it is not valid JSON. */
export function parseJsonLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
