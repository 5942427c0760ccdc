/**
 * A streamed response body read into one reused buffer.
 *
 * `fetch`'s default reader hands out every piece of the body that the connection delivers as a
 * new `Uint8Array`, and the memory behind each lives outside V8's heap until a garbage collection
 * gets to it: a reply streamed as 100,000 server-sent events of 250 bytes arrives as about as many
 * pieces, and the process grew by 42–49 MB of such buffers (64–67 MB of RSS) while it read 26 MB
 * of events (`scripts/bench/wire.ts`, the mock-server turn). Read with a BYOB reader into one
 * 64 KiB buffer, the same body costs no external memory at all; the bytes and their order are
 * the body's, and an error or abort of the body is the one `fetch` raised.
 *
 * @module
 */

/** Size of the reused buffer (a read returns at most this much). */
const BODY_CHUNK_BYTES = 64 * 1024;

/**
 * A `Response` with the same status, status text and headers whose body is `response`'s body
 * read into one reused 64 KiB buffer. Each chunk it yields is valid until the next is asked for:
 * for a consumer that copies or decodes a chunk before it reads on (the SDK's SSE parser does),
 * which is why it has no queue (`highWaterMark` 0). A response without a body, or whose body
 * cannot be read with a BYOB reader, is returned as it is.
 */
export function withReusedBodyBuffer(response: Response): Response {
  const body = response.body;
  if (body === null) return response;
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    return response;
  }
  let buffer = new ArrayBuffer(BODY_CHUNK_BYTES);
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // The read detaches `buffer` and returns the same memory as a new ArrayBuffer.
      const { value, done } = await reader.read(new Uint8Array(buffer));
      if (done) {
        controller.close();
        reader.releaseLock();
        return;
      }
      buffer = value.buffer;
      controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return new Response(stream, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
