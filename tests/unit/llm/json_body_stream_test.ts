/**
 * The streamed JSON request body (`json_body_stream.ts`): its bytes are exactly
 * `JSON.stringify`'s, whatever the values and wherever slices and chunks are cut; it is written
 * as it is pulled; each body is a fresh stream; small bodies stay one string.
 */
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import {
  JsonBodySender,
  jsonBodyStream,
  jsonLengthAtLeast,
  jsonTextPieces,
} from "../../../lib/llm/providers/json_body_stream.ts";

const decoder = new TextDecoder();

async function streamText(stream: ReadableStream<Uint8Array>): Promise<string> {
  return decoder.decode(await new Response(stream).arrayBuffer());
}

async function streamBytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Every cut of slices and chunks gives exactly `JSON.stringify(value)`'s bytes. */
async function assertSameAsStringify(value: unknown, label: string): Promise<void> {
  const expected = new TextEncoder().encode(JSON.stringify(value));
  for (const sliceChars of [2, 3, 7, 64 * 1024]) {
    for (const chunkChars of [1, 5, 4096]) {
      const opts = { sliceChars, chunkChars };
      assertEquals([...jsonTextPieces(value, opts)].join(""), JSON.stringify(value), label);
      const got = await streamBytes(jsonBodyStream(value, opts));
      assertEquals(got, expected, `${label} (slice ${sliceChars}, chunk ${chunkChars})`);
    }
  }
}

Deno.test("json body stream: strings with unicode, surrogates and escapes are JSON.stringify's bytes", async () => {
  const strings = [
    "",
    "plain ascii",
    'quotes " and \\ backslashes / slashes',
    "controls \u0000\u0001\b\t\n\f\r\u001f\u007f",
    "line separators \u2028 \u2029",
    "accents é ü ñ, CJK 漢字, Arabic مرحبا",
    "emoji 😀👍🏽 family 👨‍👩‍👧 flags 🇫🇷",
    "a😀b😀c😀d", // pairs falling on every slice boundary for small slices
    "lone high \ud83d at the middle",
    "lone low \ude00 at the middle",
    "\ud83d",
    "\ude00",
    "ends with a lone high \ud83d",
    "\ude00 starts with a lone low",
    "reversed pair \ude00\ud83d",
    "two highs \ud83d\ud83d\ude00 then a pair",
    "😀".repeat(50) + "\ud83d",
  ];
  for (const s of strings) await assertSameAsStringify(s, JSON.stringify(s));
  await assertSameAsStringify({ [strings[9]]: strings[10], "ключ": strings }, "keys");
});

Deno.test("json body stream: numbers, literals, omitted values, toJSON and key order as JSON.stringify", async () => {
  class Point {
    constructor(readonly x: number, readonly y: number) {}
    toJSON(key: string) {
      return { at: key, sum: this.x + this.y };
    }
  }
  const sparse: unknown[] = [1];
  sparse[3] = 4;
  const value = {
    numbers: [0, -0, 1.5, -2e-7, 1e21, 123456789012345680000, Number.MAX_VALUE, NaN, Infinity],
    literals: [true, false, null],
    omitted: { a: undefined, b: () => 1, c: Symbol("s"), d: "kept" },
    inArray: [undefined, () => 1, Symbol("s"), "kept"],
    sparse,
    date: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
    point: new Point(1, 2),
    points: [new Point(3, 4)],
    boxed: [new Number(3), new String("s😀"), new Boolean(false)],
    order: { b: 1, 2: "two", a: 2, 1: "one", "-1": "minus" },
    empty: [{}, [], [[]], { e: {} }],
    deep: { a: { b: { c: { d: [{ e: "f" }] } } } },
  };
  await assertSameAsStringify(value, "mixed");
  await assertSameAsStringify([undefined], "array of undefined");
  await assertSameAsStringify(new Point(5, 6), "top-level toJSON");
  await assertSameAsStringify("top-level string", "top-level string");
  await assertSameAsStringify(42, "top-level number");
  await assertSameAsStringify(null, "top-level null");
});

Deno.test("json body stream: a chat request with images, tool calls and long tool output", async () => {
  const image = "data:image/png;base64," + "iVBORw0KGgo".repeat(3000);
  const output = 'line\twith\ttabs and "quotes" 😀\n'.repeat(2000);
  const body = {
    model: "kimi-k2",
    messages: [
      { role: "system", content: "You are Kimi." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this picture? 🖼️" },
          { type: "image_url", image_url: { url: image } },
          { type: "video_url", video_url: { url: "ms://file-1", id: "file-1" } },
        ],
      },
      {
        role: "assistant",
        content: "",
        reasoning_content: "thinking about \u2028 it",
        tool_calls: [{
          type: "function",
          id: "call_1",
          function: { name: "Shell", arguments: '{"command":"ls -la \\"a b\\""}' },
        }],
      },
      { role: "tool", content: output, tool_call_id: "call_1" },
    ],
    stream: true,
    stream_options: { include_usage: true },
    tools: [{
      type: "function",
      function: {
        name: "Shell",
        description: "Run a command",
        parameters: { type: "object", properties: { command: { type: "string" } } },
      },
    }],
    max_completion_tokens: 32000,
    temperature: 0.6,
    thinking: { type: "enabled" },
  };
  await assertSameAsStringify(body, "chat request");
});

Deno.test("json body stream: random values with random cuts are JSON.stringify's bytes", async () => {
  let seed = 0x2545f491;
  const rand = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const units = [
    "a",
    " ",
    '"',
    "\\",
    "\n",
    "\u0000",
    "é",
    "漢",
    "\ud83d",
    "\ude00",
    "😀",
    "\u2028",
  ];
  const randomString = () => {
    let s = "";
    for (let i = rand(40); i > 0; i--) s += units[rand(units.length)];
    return s;
  };
  const randomValue = (depth: number): unknown => {
    switch (depth > 3 ? rand(4) : rand(7)) {
      case 0:
        return randomString();
      case 1:
        return [0, -1.25, 1e300, NaN][rand(4)];
      case 2:
        return [true, false, null, undefined][rand(4)];
      case 3:
        return randomString() + randomString();
      case 4:
        return Array.from({ length: rand(5) }, () => randomValue(depth + 1));
      default: {
        const o: Record<string, unknown> = {};
        for (let i = rand(5); i > 0; i--) o[randomString()] = randomValue(depth + 1);
        return o;
      }
    }
  };
  for (let i = 0; i < 200; i++) {
    const value = { v: randomValue(0) };
    const expected = JSON.stringify(value);
    const opts = { sliceChars: 2 + rand(9), chunkChars: 1 + rand(50) };
    assertEquals(await streamText(jsonBodyStream(value, opts)), expected, `value ${i}`);
  }
});

Deno.test("json body stream: a circular structure or a BigInt errors the stream as JSON.stringify throws", async () => {
  const circular: Record<string, unknown> = { a: "x" };
  circular.self = circular;
  await assertRejects(() => streamText(jsonBodyStream(circular)), {
    name: "TypeError",
    message: /circular/,
  });
  await assertRejects(() => streamText(jsonBodyStream({ n: 10n })), { name: "TypeError" });
  // a value seen twice without a cycle is fine, as for JSON.stringify
  const shared = { s: "shared" };
  await assertSameAsStringify({ a: shared, b: [shared, shared] }, "shared, not circular");
});

Deno.test("json body stream: parts are written when the stream is pulled, a chunk at a time", async () => {
  const written: number[] = [];
  const part = (i: number) => ({ toJSON: () => (written.push(i), "x".repeat(1000)) });
  const value = { messages: Array.from({ length: 10 }, (_, i) => part(i)) };
  const stream = jsonBodyStream(value, { chunkChars: 2500 });
  await Promise.resolve();
  assertEquals(written, [], "nothing is written before the first pull");
  const reader = stream.getReader();
  const first = await reader.read();
  // a chunk ends with the piece that reaches 2,500 characters: parts 0-2 (14 + 3 × 1,002 + 2)
  const x = `"${"x".repeat(1000)}"`;
  assertEquals(written, [0, 1, 2]);
  assertEquals(decoder.decode(first.value), `{"messages":[${x},${x},${x}`);
  const second = await reader.read();
  assertEquals(written, [0, 1, 2, 3, 4, 5]);
  assertEquals(decoder.decode(second.value), `,${x},${x},${x}`);
  await reader.cancel();
  assertEquals(written, [0, 1, 2, 3, 4, 5], "a cancelled stream writes nothing more");
});

Deno.test("json body stream: the length estimate decides on strings without serializing", () => {
  const body = { messages: [{ role: "user", content: "x".repeat(1000) }] };
  const length = JSON.stringify(body).length;
  assert(jsonLengthAtLeast(body, 1000));
  assert(jsonLengthAtLeast(body, length - 20), "within the punctuation the walk skips");
  assert(!jsonLengthAtLeast(body, length + 1), "never above the real length");
  const circular: Record<string, unknown> = { s: "abc" };
  circular.self = circular;
  assert(!jsonLengthAtLeast(circular, 100), "a cycle is walked once");
});

Deno.test("json body sender: small bodies are one string, large ones a fresh stream each time", async () => {
  const sender = new JsonBodySender({ threshold: 5000 });
  const small = { messages: ["x".repeat(100)] };
  const large = { messages: ["y".repeat(6000), "z😀"] };
  assertEquals(sender.body(small), { body: JSON.stringify(small), streamed: false });
  const a = sender.body(large);
  const b = sender.body(large);
  assert(a.streamed && b.streamed && a.body instanceof ReadableStream);
  assert(a.body !== b.body, "one stream per attempt");
  assertEquals(await streamText(a.body as ReadableStream<Uint8Array>), JSON.stringify(large));
  assertEquals(await streamText(b.body as ReadableStream<Uint8Array>), JSON.stringify(large));
});

Deno.test("json body sender: a 411 to a streamed body sends it again buffered, and later ones too", async () => {
  const sender = new JsonBodySender({ threshold: 5000 });
  const large = { messages: ["y".repeat(6000)] };
  const sent: string[] = [];
  const answer = async (body: string | ReadableStream<Uint8Array>) => {
    const streamed = typeof body !== "string";
    sent.push(streamed ? `stream:${(await streamText(body)).length}` : `string:${body.length}`);
    return new Response(streamed ? "Length Required" : "ok", { status: streamed ? 411 : 200 });
  };
  const length = JSON.stringify(large).length;
  const endpoint = { endpoint: "http://127.0.0.1/v1/chat/completions" };
  const first = await sender.send(large, answer, endpoint);
  assertEquals([first.status, await first.text()], [200, "ok"]);
  assertEquals(sent, [`stream:${length}`, `string:${length}`]);
  assert(sender.buffered);
  await sender.send(large, answer, endpoint);
  assertEquals(sent.slice(2), [`string:${length}`], "the endpoint is not asked to stream again");
  // a 411 to a buffered body is the server's answer, passed on
  const refusing = new JsonBodySender({ threshold: 5000 });
  const status = (await refusing.send({ s: "small" }, () => {
    return Promise.resolve(new Response("no", { status: 411 }));
  }, endpoint)).status;
  assertEquals(status, 411);
});

Deno.test("json body sender: a connection lost while streaming is tried once buffered", async () => {
  const large = { messages: ["y".repeat(6000)] };
  const broken = () =>
    new TypeError("fetch failed", { cause: new Error("Broken pipe (os error 32)") });
  const endpoint = { endpoint: "http://127.0.0.1/v1/chat/completions" };
  const sends =
    (outcomes: ("ok" | "411" | Error)[], sent: string[]) =>
    async (body: string | ReadableStream<Uint8Array>) => {
      sent.push(typeof body === "string" ? "string" : "stream");
      if (typeof body !== "string") await body.cancel();
      const next = outcomes.shift()!;
      if (next instanceof Error) throw next;
      return new Response(next, { status: next === "ok" ? 200 : 411 });
    };

  // broken, then answered buffered: the endpoint is buffered from then on
  let sent: string[] = [];
  const sender = new JsonBodySender({ threshold: 5000 });
  assertEquals((await sender.send(large, sends([broken(), "ok"], sent), endpoint)).status, 200);
  assertEquals([sent, sender.buffered], [["stream", "string"], true]);

  // broken twice (the network, not the body): the second error, nothing remembered
  sent = [];
  const flaky = new JsonBodySender({ threshold: 5000 });
  const second = broken();
  await assertRejects(() => flaky.send(large, sends([broken(), second], sent), endpoint), second);
  assertEquals([sent, flaky.buffered], [["stream", "string"], false]);

  // no connection at all, or an abort: not sent again
  for (
    const err of [
      new TypeError("fetch failed", {
        cause: new Error("client error (Connect): tcp connect error: Connection refused"),
      }),
      new Deno.errors.NotCapable("Requires net access to 127.0.0.1:1"),
    ]
  ) {
    sent = [];
    const refused = new JsonBodySender({ threshold: 5000 });
    await assertRejects(() => refused.send(large, sends([err, "ok"], sent), endpoint), err);
    assertEquals([sent, refused.buffered], [["stream"], false]);
  }
  sent = [];
  const aborted = new JsonBodySender({ threshold: 5000 });
  const controller = new AbortController();
  controller.abort();
  await assertRejects(
    () =>
      aborted.send(large, sends([broken(), "ok"], sent), {
        ...endpoint,
        signal: controller.signal,
      }),
    TypeError,
  );
  assertEquals(sent, ["stream"]);
});

Deno.test("json body sender: a server that answers 411 and closes at once gets the buffered body", async () => {
  // What a proxy without chunked support may do: answer from the headers, close, read nothing.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const heads: string[] = [];
  const serving = (async () => {
    for await (const conn of listener) {
      const buf = new Uint8Array(1 << 16);
      let text = "";
      let total = 0; // bytes read
      const headDecoder = new TextDecoder();
      while (!text.includes("\r\n\r\n")) {
        const n = await conn.read(buf);
        if (n === null) break;
        total += n;
        text += headDecoder.decode(buf.subarray(0, n), { stream: true });
      }
      const headBytes = text.indexOf("\r\n\r\n") + 4; // the head is ASCII
      const head = text.slice(0, headBytes - 4).toLowerCase();
      heads.push(head);
      const length = Number(head.match(/content-length: (\d+)/)?.[1] ?? -1);
      if (length < 0) {
        await conn.write(new TextEncoder().encode(
          "HTTP/1.1 411 Length Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        ));
      } else {
        let have = total - headBytes;
        while (have < length) have += (await conn.read(buf)) ?? length;
        await conn.write(new TextEncoder().encode(
          `HTTP/1.1 200 OK\r\nx-received: ${have}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`,
        ));
      }
      conn.close();
    }
  })();
  try {
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/v1/chat/completions`;
    const large = { messages: ["y😀".repeat(4_000_000)] };
    const sender = new JsonBodySender();
    const response = await sender.send(
      large,
      (body) => fetch(url, { method: "POST", body }),
      { endpoint: url },
    );
    assertEquals(response.status, 200);
    const length = new TextEncoder().encode(JSON.stringify(large)).length;
    assertEquals(await response.text(), "");
    assertEquals(response.headers.get("x-received"), String(length));
    assert(heads[0].includes("transfer-encoding: chunked"), heads[0]);
    assert(heads.at(-1)!.includes(`content-length: ${length}`), heads.at(-1));
    assert(sender.buffered);
  } finally {
    listener.close();
    await serving.catch(() => {});
  }
});
