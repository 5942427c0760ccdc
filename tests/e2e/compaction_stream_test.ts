/**
 * `/compact` of a large context through `main.ts` with a `kimi` provider against a mock
 * server on 127.0.0.1: the summary request is streamed (`Transfer-Encoding: chunked`) and
 * arrives complete (every text of the history in it, in order), a retried attempt sends it
 * whole again, and a server that refuses chunked bodies (411) gets it with a `Content-Length`,
 * logged once in `kimi.log` without the key or the body; so does a request through an HTTP proxy
 * (`HTTP_PROXY`) that answers chunked requests with 411 and closes the connection at once.
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import { type MockOpenAI, startMockOpenAI } from "../helpers/mock_openai.ts";

const KEY = "sk-e2e-compaction-secret";
const SUMMARY = "<current_focus>the streamed summary</current_focus>";
const COMPACTED = "The context has been compacted.";

/** The tool outputs of the planted context: ~1.6 MB, unicode and escapes included. */
function toolOutputs(): string[] {
  const line = 'ls: "dir" \\ tab\t é 漢字 😀 \u2028 end\n';
  return Array.from({ length: 400 }, (_, i) => `output ${i}\n${line.repeat(100)}`);
}

async function config(sb: KimiSandbox, url: string): Promise<string> {
  const path = `${sb.root}/config.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      default_model: "mock",
      models: { mock: { provider: "mock", model: "mock-model", max_context_size: 2_000_000 } },
      providers: { mock: { type: "kimi", base_url: url, api_key: KEY } },
    }),
  );
  return path;
}

/** Create session `big`, then replace its context by turns holding `outputs`. */
async function plantSession(sb: KimiSandbox, cfg: string, outputs: string[]): Promise<void> {
  const first = await sb.run([
    "--print",
    "--yolo",
    "--config-file",
    cfg,
    "--session",
    "big",
    "-p",
    "hi",
  ]);
  assertEquals(first.code, 0, first.stderr);
  const [dir] = await sb.sessionDirs();
  const lines = [JSON.stringify({ role: "_system_prompt", content: "SYSTEM" })];
  outputs.forEach((output, i) => {
    lines.push(JSON.stringify({ role: "_checkpoint", id: i }));
    lines.push(JSON.stringify({ role: "user", content: `turn ${i}` }));
    lines.push(JSON.stringify({
      role: "assistant",
      content: `looking ${i}`,
      tool_calls: [{ type: "function", id: `c${i}`, function: { name: "Shell", arguments: "{}" } }],
    }));
    lines.push(JSON.stringify({
      role: "tool",
      content: [{ type: "text", text: output }],
      tool_call_id: `c${i}`,
    }));
    lines.push(JSON.stringify({ role: "assistant", content: `done ${i}` }));
  });
  await Deno.writeTextFile(`${dir}/context.jsonl`, lines.join("\n") + "\n");
}

/** `/compact` of the planted session in `kimi --print` (stream-json), with extra `env`. */
function compact(sb: KimiSandbox, cfg: string, env?: Record<string, string>) {
  return sb.run([
    "--print",
    "--yolo",
    "--config-file",
    cfg,
    "--session",
    "big",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
  ], { stdin: JSON.stringify({ role: "user", content: "/compact" }) + "\n", env });
}

/** The texts of the summary request's user message, in order. */
function requestTexts(mock: MockOpenAI, index: number): string[] {
  const body = mock.requests[index].body;
  assert(body !== null, "the request body did not parse as JSON");
  const user = body.messages.at(-1);
  assertEquals(user.role, "user");
  return user.content.map((p: { type: string; text: string }) => p.text);
}

/**
 * The planted tool outputs appear whole, in order, in the request's texts: all but those of
 * the last turn, which compaction keeps as they are. Returns how many the request holds.
 */
function assertHoldsEveryOutput(texts: string[], outputs: string[]): number {
  const found = texts.filter((t) => t.startsWith("output "));
  assertEquals(found.length, outputs.length - 1);
  for (let i = 0; i < found.length; i++) {
    assert(found[i] === outputs[i], `tool output ${i} arrived altered`);
  }
  return found.length;
}

Deno.test("e2e compaction stream: /compact of a 1.6 MB context streams its request, whole, on each attempt", async () => {
  const mock = await startMockOpenAI({ defaultReply: { text: SUMMARY }, keepText: true });
  const sb = await kimiSandbox();
  try {
    const cfg = await config(sb, mock.url);
    const outputs = toolOutputs();
    await plantSession(sb, cfg, outputs);
    const before = mock.requests.length;
    mock.enqueue({ status: 503, error: "overloaded" });
    const out = await compact(sb, cfg);
    assertEquals(out.code, 0, out.stderr);
    assert(out.stdout.includes(COMPACTED), out.stdout);

    // the refused attempt and the retry: both chunked, no length, both whole and the same
    assertEquals(mock.requests.length, before + 2);
    for (const i of [before, before + 1]) {
      const q = mock.requests[i];
      assertEquals(q.headers["transfer-encoding"], "chunked");
      assertEquals(q.headers["content-length"], undefined);
      assert(q.text!.length > 1.5 * 1024 * 1024, `request ${i}: ${q.text!.length} characters`);
      assertEquals(q.text, JSON.stringify(q.body), "not JSON.stringify's text of what it holds");
      assertHoldsEveryOutput(requestTexts(mock, i), outputs);
    }
    assert(mock.requests[before].text === mock.requests[before + 1].text, "the retry differs");

    // the context now holds the summary, not the history
    const [dir] = await sb.sessionDirs();
    const context = await Deno.readTextFile(`${dir}/context.jsonl`);
    assert(context.includes("the streamed summary"));
    assert(!context.includes('"output 0\\n'), "the compacted history is still in the context");
    assert(context.includes(JSON.stringify(outputs.at(-1))), "the kept turn is gone");
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("e2e compaction stream: a server refusing chunked bodies gets the request with a Content-Length", async () => {
  const mock = await startMockOpenAI({
    defaultReply: { text: SUMMARY },
    keepText: true,
    refuseChunked: true,
  });
  const sb = await kimiSandbox();
  try {
    const cfg = await config(sb, mock.url);
    const outputs = toolOutputs();
    await plantSession(sb, cfg, outputs);
    const before = mock.requests.length;
    const out = await compact(sb, cfg);
    assertEquals(out.code, 0, out.stderr);
    assert(out.stdout.includes(COMPACTED), out.stdout);

    assertEquals(mock.requests.length, before + 2);
    const [refused, buffered] = mock.requests.slice(before);
    assertEquals(refused.headers["transfer-encoding"], "chunked");
    assertEquals(buffered.headers["transfer-encoding"], undefined);
    assertEquals(
      buffered.headers["content-length"],
      String(new TextEncoder().encode(buffered.text!).length),
    );
    assert(refused.text === buffered.text, "the buffered body is not the streamed one");
    assertHoldsEveryOutput(requestTexts(mock, before + 1), outputs);

    const log = await Deno.readTextFile(`${sb.shareDir}/logs/kimi.log`);
    const lines = log.split("\n").filter((l) => l.includes("Length Required"));
    assertEquals(lines.length, 1, log);
    assert(
      lines[0].includes(
        `WARNING | openai_http | `,
      ) && lines[0].includes(`${mock.url}/chat/completions answered 411 Length Required`),
      lines[0],
    );
    assert(!log.includes(KEY), "the API key reached the log");
    assert(!log.includes("漢字"), "the request body reached the log");
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

/** A request an HTTP proxy received: its request line and whether its body came chunked. */
interface ProxiedRequest {
  line: string;
  chunked: boolean;
}

/**
 * A forward HTTP proxy on 127.0.0.1 that wants a `Content-Length`: a request without one gets
 * `411 Length Required` and the connection closed at once, unread (as old proxies do); others
 * are forwarded with `fetch` and their answers passed back, the connection closed after them.
 */
function startLengthOnlyProxy(): { url: string; seen: ProxiedRequest[]; close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: ProxiedRequest[] = [];
  const conns = new Set<Deno.Conn>();
  const encoder = new TextEncoder();
  const serve = async (conn: Deno.Conn) => {
    const buf = new Uint8Array(1 << 16);
    let head = new Uint8Array(0);
    let end = -1;
    while (end < 0) {
      const n = await conn.read(buf);
      if (n === null) return;
      const next = new Uint8Array(head.length + n);
      next.set(head);
      next.set(buf.subarray(0, n), head.length);
      head = next;
      for (let i = 3; i < head.length && end < 0; i++) {
        if (head[i - 3] === 13 && head[i - 2] === 10 && head[i - 1] === 13 && head[i] === 10) {
          end = i + 1;
        }
      }
    }
    const [line, ...fields] = new TextDecoder().decode(head.subarray(0, end - 4)).split("\r\n");
    const headers = new Headers();
    for (const f of fields) {
      const colon = f.indexOf(":");
      headers.append(f.slice(0, colon).trim(), f.slice(colon + 1).trim());
    }
    const length = headers.get("content-length");
    seen.push({ line, chunked: length === null });
    if (length === null) {
      await conn.write(encoder.encode(
        "HTTP/1.1 411 Length Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
      ));
      return;
    }
    const body = new Uint8Array(Number(length));
    let have = Math.min(head.length - end, body.length);
    body.set(head.subarray(end, end + have));
    while (have < body.length) {
      const n = await conn.read(body.subarray(have));
      if (n === null) return;
      have += n;
    }
    const [method, target] = line.split(" ");
    for (const h of ["host", "connection", "proxy-connection", "content-length"]) headers.delete(h);
    const answer = await fetch(target, { method, headers, body });
    await conn.write(encoder.encode(
      `HTTP/1.1 ${answer.status} ${answer.statusText}\r\ncontent-type: ` +
        `${answer.headers.get("content-type")}\r\nconnection: close\r\n\r\n`,
    ));
    for await (const chunk of answer.body!) await conn.write(chunk);
  };
  const accepting = (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      serve(conn).catch(() => {}).finally(() => {
        conns.delete(conn);
        try {
          conn.close();
        } catch {
          // closed already
        }
      });
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    seen,
    async close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // closed already
        }
      }
      await accepting.catch(() => {});
    },
  };
}

Deno.test("e2e compaction stream: through an HTTP proxy that answers chunked bodies with 411 and closes", async () => {
  const mock = await startMockOpenAI({ defaultReply: { text: SUMMARY }, keepText: true });
  const proxy = startLengthOnlyProxy();
  const sb = await kimiSandbox();
  try {
    const cfg = await config(sb, mock.url);
    const outputs = toolOutputs();
    await plantSession(sb, cfg, outputs);
    const before = mock.requests.length;
    const out = await compact(sb, cfg, {
      HTTP_PROXY: proxy.url,
      http_proxy: proxy.url,
      NO_PROXY: "",
      no_proxy: "",
    });
    assertEquals(out.code, 0, out.stderr);
    assert(out.stdout.includes(COMPACTED), out.stdout);

    // the proxy saw the streamed request (refused), then the buffered one, which it forwarded
    const target = `POST ${mock.url}/chat/completions HTTP/1.1`;
    assertEquals(proxy.seen, [{ line: target, chunked: true }, { line: target, chunked: false }]);
    assertEquals(mock.requests.length, before + 1);
    assertHoldsEveryOutput(requestTexts(mock, before), outputs);

    const log = await Deno.readTextFile(`${sb.shareDir}/logs/kimi.log`);
    const lines = log.split("\n").filter((l) => l.includes("from now on"));
    assertEquals(lines.length, 1, log);
    assert(lines[0].includes("WARNING | openai_http | "), lines[0]);
    assert(lines[0].includes(`${mock.url}/chat/completions`), lines[0]);
    assert(!log.includes(KEY), "the API key reached the log");
  } finally {
    await sb.cleanup();
    await proxy.close();
    await mock.close();
  }
});
