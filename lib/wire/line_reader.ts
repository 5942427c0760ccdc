/**
 * Reading newline-delimited input with a per-line size limit (the wire protocol allows lines
 * up to 100 MiB).
 *
 * @module
 */

/** Largest accepted line, in bytes. */
export const MAX_LINE_BYTES = 100 * 1024 * 1024;

/**
 * Yield each line of a byte stream (without its newline, `\r` stripped). A line longer than
 * `maxBytes` is discarded and yielded as `null` so the caller can report it.
 */
export async function* readLines(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number = MAX_LINE_BYTES,
): AsyncGenerator<string | null> {
  const decoder = new TextDecoder();
  let chunks: Uint8Array[] = [];
  let size = 0;
  let overflow = false;
  const take = (): string | null => {
    if (overflow) {
      overflow = false;
      chunks = [];
      size = 0;
      return null;
    }
    // A line within one chunk (most lines) is decoded from that chunk without a copy.
    const buf = chunks.length === 1 ? chunks[0] : new Uint8Array(size);
    if (chunks.length > 1) {
      let off = 0;
      for (const c of chunks) {
        buf.set(c, off);
        off += c.length;
      }
    }
    chunks = [];
    size = 0;
    const text = decoder.decode(buf);
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  };
  const push = (part: Uint8Array) => {
    if (overflow) return;
    if (size + part.length > maxBytes) {
      overflow = true;
      chunks = [];
      size = 0;
      return;
    }
    chunks.push(part);
    size += part.length;
  };
  for await (const chunk of stream) {
    let start = 0;
    while (true) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) {
        // (a view: every chunk a stream yields is its own buffer)
        if (start < chunk.length) push(chunk.subarray(start));
        break;
      }
      push(chunk.subarray(start, nl));
      yield take();
      start = nl + 1;
    }
  }
  if (size > 0 || overflow) yield take();
}
