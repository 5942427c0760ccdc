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
 * `maxBytes` is discarded and yielded as `null` so the caller can report it. No chunk is used
 * after the next one is asked for, so a source may hand out one reused buffer.
 */
export async function* readLines(
  stream: AsyncIterable<Uint8Array>,
  maxBytes: number = MAX_LINE_BYTES,
): AsyncGenerator<string | null> {
  // `ignoreBOM`: a streaming decoder would otherwise drop a U+FEFF that starts a decode
  // call, i.e. any that falls at a chunk boundary inside a line. Lines are passed on as sent.
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  // The current line: its first part undecoded (a line within one chunk, most lines, is decoded
  // from that chunk without a copy), or, once it spans chunks, its parts decoded as they come
  // (streaming decode), so a 95 MB line never exists as chunks plus a joined buffer plus text.
  let first: Uint8Array | null = null;
  let texts: string[] = [];
  let size = 0;
  let overflow = false;
  const take = (): string | null => {
    const wasOverflow = overflow;
    overflow = false;
    let text: string;
    if (first !== null) {
      text = decoder.decode(first);
    } else {
      texts.push(decoder.decode());
      text = texts.length === 1 ? texts[0] : texts.join("");
    }
    first = null;
    texts = [];
    size = 0;
    if (wasOverflow) return null;
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  };
  const push = (part: Uint8Array) => {
    if (overflow) return;
    if (size + part.length > maxBytes) {
      overflow = true;
      first = null;
      texts = [];
      decoder.decode(); // drop a partial character
      size = 0;
      return;
    }
    size += part.length;
    if (first === null && texts.length === 0) {
      first = part;
      return;
    }
    if (first !== null) {
      texts.push(decoder.decode(first, { stream: true }));
      first = null;
    }
    texts.push(decoder.decode(part, { stream: true }));
  };
  for await (const chunk of stream) {
    let start = 0;
    while (true) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) {
        if (start < chunk.length) push(chunk.subarray(start));
        break;
      }
      push(chunk.subarray(start, nl));
      yield take();
      start = nl + 1;
    }
    // Keep no view of this chunk past it (a source may reuse its buffer for the next chunk).
    if (first !== null) {
      texts.push(decoder.decode(first, { stream: true }));
      first = null;
    }
  }
  if (size > 0 || overflow) yield take();
}
