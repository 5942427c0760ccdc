/**
 * `withReusedBodyBuffer`: a fetched body read into one reused buffer gives the body's bytes in
 * order, its status and headers, the body's own error, and passes a cancel on; a response
 * without a body is returned as it is.
 */
import { assert, assertEquals } from "../../helpers/assert.ts";
import { withReusedBodyBuffer } from "../../../lib/llm/providers/reused_body_buffer.ts";

/** Serve `handler` on 127.0.0.1; returns its URL and a stop function. */
function serve(handler: (req: Request) => Response): { url: string; stop: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  return { url: `http://127.0.0.1:${server.addr.port}/`, stop: () => server.shutdown() };
}

Deno.test("withReusedBodyBuffer: the body's bytes, status and headers, read into one buffer", async () => {
  // 3 MB in pieces of every size, as a server streams them
  const pieces: Uint8Array[] = [];
  let total = 0;
  for (let i = 0; total < 3_000_000; i++) {
    const p = new Uint8Array(1 + (i * 7919) % 100_000).map((_, j) => (i + j) % 256);
    pieces.push(p);
    total += p.length;
  }
  const { url, stop } = serve(() =>
    new Response(ReadableStream.from(pieces), {
      status: 201,
      headers: { "x-probe": "1", "content-type": "text/event-stream" },
    })
  );
  try {
    const fetched = await fetch(url);
    const res = withReusedBodyBuffer(fetched);
    assertEquals([res.status, res.statusText, res.headers.get("x-probe")], [201, "Created", "1"]);
    assertEquals(res.statusText, fetched.statusText);
    const got = new Uint8Array(total);
    let at = 0;
    const buffers = new Set<ArrayBufferLike>();
    let previous: Uint8Array | null = null;
    for await (const chunk of res.body!) {
      // the chunk before was handed out in the same memory, now taken back for this one
      if (previous !== null) assertEquals(previous.byteLength, 0);
      assert(chunk.byteLength <= 64 * 1024);
      assertEquals(chunk.buffer.byteLength, 64 * 1024);
      got.set(chunk, at);
      at += chunk.byteLength;
      buffers.add(chunk.buffer);
      previous = chunk;
    }
    assertEquals(at, total);
    const expected = new Uint8Array(total);
    let off = 0;
    for (const p of pieces) {
      expected.set(p, off);
      off += p.length;
    }
    assertEquals(got, expected);
    assert(buffers.size > 40); // one ArrayBuffer object per read, all over the same memory
  } finally {
    await stop();
  }
});

Deno.test("withReusedBodyBuffer: a body's error is the caller's, a cancel reaches the body", async () => {
  // a body that fails after some bytes: the same error object comes out
  const boom = new Error("connection reset");
  let cancelled: unknown = "not cancelled";
  const failing = new Response(
    new ReadableStream({
      type: "bytes",
      start(c) {
        c.enqueue(new TextEncoder().encode("data: 1\n\n"));
      },
      pull(c) {
        c.error(boom);
      },
    }),
  );
  const reader = withReusedBodyBuffer(failing).body!.getReader();
  assertEquals(new TextDecoder().decode((await reader.read()).value), "data: 1\n\n");
  let caught: unknown = null;
  try {
    await reader.read();
  } catch (err) {
    caught = err;
  }
  assertEquals(caught, boom);

  const endless = new Response(
    new ReadableStream({
      type: "bytes",
      pull(c) {
        c.enqueue(new Uint8Array(10));
      },
      cancel(reason) {
        cancelled = reason;
      },
    }),
  );
  const r2 = withReusedBodyBuffer(endless).body!.getReader();
  await r2.read();
  await r2.cancel("stop");
  assertEquals(cancelled, "stop");

  // no body: the response itself
  const empty = new Response(null, { status: 204 });
  assert(withReusedBodyBuffer(empty) === empty);
});
