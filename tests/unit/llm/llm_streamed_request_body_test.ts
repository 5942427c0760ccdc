/**
 * Requests of 1 MiB and more from the providers over kimi's own fetch client (`kimi`,
 * `openai_legacy`, `openai_responses`) reach a server on 127.0.0.1 chunked and complete, with
 * the same bytes as the buffered body; a server answering `411 Length Required` gets the
 * buffered body (logged once, without the body or the key); small requests keep their
 * `Content-Length`; every attempt sends a fresh stream.
 */
import { assert, assertEquals } from "../../helpers/assert.ts";
import { type MockOpenAI, startMockOpenAI } from "../../helpers/mock_openai.ts";
import { createOpenAIChatProvider } from "../../../lib/llm/providers/openai_chat.ts";
import { createOpenAIResponsesProvider } from "../../../lib/llm/providers/openai_responses.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";
import type { ChatProvider, ChatRequest } from "../../../lib/llm/provider.ts";
import { configureLog } from "../../../lib/log.ts";

const KEY = "sk-test-secret-key-streamed-body";
const MB = 1024 * 1024;

function kimi(url: string): ChatProvider {
  return createOpenAIChatProvider({
    kind: "kimi",
    baseUrl: url,
    apiKey: KEY,
    model: "kimi-for-coding",
    userAgent: "KimiCLI/1.49.0",
    promptCacheKey: "session-1",
    thinking: "high",
  });
}

/** A history of about `bytes` characters: tool outputs, unicode, an image, tool calls. */
function bigHistory(bytes: number): NormalizedMessage[] {
  const output = 'out\t"quoted" \\ é 漢 😀 \u2028 lone \ud83d end\n'.repeat(40);
  const history: NormalizedMessage[] = [{
    role: "user",
    content: [
      { type: "text", text: "look at this 🖼️" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", id: null } },
    ],
  }];
  for (let i = 0, total = 0; total < bytes; i++, total += output.length) {
    history.push({
      role: "assistant",
      content: [{ type: "think", think: `thinking ${i}`, encrypted: null }, {
        type: "text",
        text: `step ${i}`,
      }],
      tool_calls: [{
        type: "function",
        id: `call_${i}`,
        function: { name: "Shell", arguments: `{"command":"cat f${i}"}` },
        extras: null,
      }],
    });
    history.push({
      role: "tool",
      content: [{ type: "text", text: `${i}: ${output}` }],
      tool_call_id: `call_${i}`,
    });
  }
  return history;
}

function request(history: NormalizedMessage[]): ChatRequest {
  return {
    systemPrompt: "You are Kimi.",
    tools: [{
      name: "Shell",
      description: "Run a command",
      parameters: { type: "object", properties: { command: { type: "string" } } },
    }],
    history,
  };
}

async function complete(p: ChatProvider, r: ChatRequest): Promise<string> {
  let text = "";
  for await (const part of await p.generate(r)) {
    if ("type" in part && part.type === "text") text += part.text;
  }
  return text;
}

async function withMocks(
  fn: (plain: MockOpenAI, refusing: MockOpenAI) => Promise<void>,
): Promise<void> {
  const plain = await startMockOpenAI({ keepText: true });
  const refusing = await startMockOpenAI({ keepText: true, refuseChunked: true });
  try {
    await fn(plain, refusing);
  } finally {
    await plain.close();
    await refusing.close();
  }
}

const utf8Length = (s: string) => new TextEncoder().encode(s).length;

Deno.test("streamed body: a 1.5 MB chat request arrives chunked and complete, the buffered body's bytes", async () => {
  const share = await Deno.makeTempDir();
  configureLog({ shareDir: share, debug: true });
  try {
    await withMocks(async (plain, refusing) => {
      const r = request(bigHistory(1.5 * MB));
      assertEquals(await complete(kimi(plain.url), r), "done");
      const streamed = plain.requests[0];
      assertEquals(streamed.headers["transfer-encoding"], "chunked");
      assertEquals(streamed.headers["content-length"], undefined);
      assert(streamed.text!.length > 1.5 * MB);
      assertEquals(streamed.body.messages.length, r.history.length + 1);
      assertEquals(
        streamed.body.messages.at(-1).content,
        (r.history.at(-1)!.content[0] as { text: string }).text,
      );

      // The refusing server: the streamed body, a 411, then the same bytes with a length.
      const provider = kimi(refusing.url);
      assertEquals(await complete(provider, r), "done");
      assertEquals(refusing.requests.length, 2);
      const [refused, buffered] = refusing.requests;
      assertEquals(refused.headers["transfer-encoding"], "chunked");
      assertEquals(buffered.headers["transfer-encoding"], undefined);
      assertEquals(buffered.headers["content-length"], String(utf8Length(buffered.text!)));
      assert(refused.text === buffered.text, "streamed and buffered bodies differ");
      assert(streamed.text === buffered.text, "the two servers got different bodies");
      assertEquals(buffered.text, JSON.stringify(buffered.body), "JSON.stringify's own text");

      // Later requests to that endpoint go buffered at once; the log says so once, no secrets.
      assertEquals(await complete(provider, r), "done");
      assertEquals(refusing.requests.length, 3);
      assertEquals(
        refusing.requests[2].headers["content-length"],
        buffered.headers["content-length"],
      );
      const log = await Deno.readTextFile(`${share}/logs/kimi.log`);
      const lines = log.split("\n").filter((l) => l.includes("411"));
      assertEquals(lines.length, 1);
      assert(lines[0].includes(`| WARNING | openai_http |`), lines[0]);
      assert(
        lines[0].includes(`${refusing.url}/chat/completions answered 411 Length Required`),
        lines[0],
      );
      assert(!log.includes(KEY), "the key reached the log");
      assert(!log.includes("lone") && !log.includes("call_1"), "the body reached the log");
    });
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});

Deno.test("streamed body: each attempt sends a fresh stream; small requests keep Content-Length", async () => {
  await withMocks(async (plain) => {
    const provider = kimi(plain.url);
    const r = request(bigHistory(1.2 * MB));
    plain.enqueue({ status: 503, error: "overloaded" });
    await complete(provider, r).then(() => assert(false, "503 expected"), () => {});
    assertEquals(await complete(provider, r), "done");
    assertEquals(plain.requests.length, 2);
    for (const q of plain.requests) assertEquals(q.headers["transfer-encoding"], "chunked");
    assert(plain.requests[0].text === plain.requests[1].text, "the retry sent another body");
    assert(plain.requests[1].text!.length > 1.2 * MB);

    assertEquals(await complete(provider, request(bigHistory(10_000))), "done");
    const small = plain.requests[2];
    assertEquals(small.headers["transfer-encoding"], undefined);
    assertEquals(small.headers["content-length"], String(utf8Length(small.text!)));
  });
});

Deno.test("streamed body: the Responses provider streams a large request too", async () => {
  await withMocks(async (plain) => {
    const provider = createOpenAIResponsesProvider({
      baseUrl: plain.url,
      apiKey: KEY,
      model: "gpt-5",
      userAgent: "KimiCLI/1.49.0",
    });
    const r = request(bigHistory(1.2 * MB));
    assertEquals(await complete(provider, r), "done");
    const q = plain.requests[0];
    assertEquals(q.path, "/v1/responses");
    assertEquals(q.headers["transfer-encoding"], "chunked");
    assertEquals(q.text, JSON.stringify(q.body));
    assert(q.text!.length > 1.2 * MB);
  });
});

Deno.test("streamed body: an abort while the body is being sent stops it, not sent again", async () => {
  // A server that takes the request's head and never reads the body: the upload blocks.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const gotHead = Promise.withResolvers<void>();
  const serving = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      await conn.read(new Uint8Array(4096));
      gotHead.resolve();
    }
  })();
  try {
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/v1`;
    const ac = new AbortController();
    const r = { ...request(bigHistory(16 * MB)), signal: ac.signal };
    const sending = kimi(url).generate(r);
    await gotHead.promise;
    ac.abort();
    let error: unknown;
    await sending.catch((err) => error = err);
    assertEquals((error as Error)?.name, "AbortError", String(error));
    assertEquals(conns.length, 1, "the aborted request was sent again");
  } finally {
    listener.close();
    for (const c of conns) c.close();
    await serving.catch(() => {});
  }
});

Deno.test("streamed body: a 307 redirect is followed with the buffered body, logged as a redirect", async () => {
  const share = await Deno.makeTempDir();
  configureLog({ shareDir: share, debug: false });
  const mock = await startMockOpenAI({ keepText: true });
  const hops: string[] = [];
  const redirecting = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    hops.push(req.headers.get("content-length") === null ? "chunked" : "length");
    const path = new URL(req.url).pathname.replace(/^\/old/, "/v1");
    return new Response(null, {
      status: 307,
      headers: { location: `${mock.url}${path.slice(3)}` },
    });
  });
  try {
    const provider = kimi(`http://127.0.0.1:${redirecting.addr.port}/old`);
    const r = request(bigHistory(1.2 * MB));
    assertEquals(await complete(provider, r), "done");
    assertEquals(hops, ["chunked", "length"]);
    assertEquals(mock.requests.length, 1);
    assertEquals(mock.requests[0].text, JSON.stringify(mock.requests[0].body));
    assert(mock.requests[0].text!.length > 1.2 * MB);
    const log = await Deno.readTextFile(`${share}/logs/kimi.log`);
    assert(
      log.includes(
        `http://127.0.0.1:${redirecting.addr.port}/old/chat/completions redirected a streamed`,
      ),
      log,
    );
  } finally {
    await redirecting.shutdown();
    await mock.close();
    await Deno.remove(share, { recursive: true });
  }
});
