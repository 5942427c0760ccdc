/**
 * The OpenAI-compatible providers' HTTP client (`openai_http.ts`) against the `openai` SDK's
 * own client, which it replaces on the agent's path: the same scenario is sent through both to
 * a server on 127.0.0.1, and what the server receives (URL, headers, body) and what the caller
 * gets (events, error class, message, status, and the provider error `convertOpenAIError`
 * makes of it) must be identical. Provider-level checks go through `mock_openai.ts`.
 */
import { OpenAI } from "openai";
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { startMockOpenAI } from "../../helpers/mock_openai.ts";
import { APIStatusError, ChatProviderError } from "../../../lib/llm/errors.ts";
import { createOpenAIChatProvider } from "../../../lib/llm/providers/openai_chat.ts";
import { createOpenAIResponsesProvider } from "../../../lib/llm/providers/openai_responses.ts";
import {
  convertOpenAIError,
  createOpenAIClient,
  type OpenAIClientOptions,
} from "../../../lib/llm/providers/openai_client.ts";
import { buildUrl } from "../../../lib/llm/providers/openai_http.ts";
import { KimiVideoUploads } from "../../../lib/llm/providers/kimi_video_upload.ts";
import type { ChatRequest } from "../../../lib/llm/provider.ts";

const KEY = "sk-test-secret-key-123";
const REPO = new URL("../../../", import.meta.url);

/** The client the providers used before: the SDK's, built as `createOpenAIClient` built it. */
function sdkClient(opts: OpenAIClientOptions): OpenAI {
  const noKey = opts.apiKey === "";
  return new OpenAI({
    apiKey: noKey ? "no-key" : opts.apiKey,
    baseURL: opts.baseUrl,
    maxRetries: 0,
    defaultHeaders: noKey ? { ...opts.headers, Authorization: null } : opts.headers,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}

type Path = "/chat/completions" | "/responses";
type Opener = (path: Path, body: Record<string, unknown>, signal?: AbortSignal) => Promise<
  AsyncIterable<unknown>
>;

function viaSdk(opts: OpenAIClientOptions): Opener {
  const client = sdkClient(opts);
  return (path, body, signal) =>
    path === "/chat/completions"
      ? client.chat.completions.create(body as any, { signal }) as unknown as Promise<
        AsyncIterable<unknown>
      >
      : client.responses.create(body as any, { signal }) as unknown as Promise<
        AsyncIterable<unknown>
      >;
}

function viaHttp(opts: OpenAIClientOptions): Opener {
  const client = createOpenAIClient(opts);
  return (path, body, signal) =>
    path === "/chat/completions"
      ? client.chatCompletionStream(body, { signal })
      : client.responseStream(body, { signal });
}

/** What a caller can observe of an error. */
function describe(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { value: String(err) };
  const e = err as Error & Record<string, unknown>;
  const converted = convertOpenAIError(err, { apiKey: KEY });
  return {
    class: e.constructor.name,
    name: e.name,
    message: e.message,
    status: e.status,
    error: e.error,
    code: e.code,
    type: e.type,
    requestID: e.requestID,
    cause: e.cause instanceof Error ? `${e.cause.name}: ${e.cause.message}` : e.cause,
    converted: converted instanceof Error
      ? {
        class: converted.constructor.name,
        message: converted.message,
        status: (converted as { statusCode?: number }).statusCode,
      }
      : String(converted),
  };
}

interface Outcome {
  events: unknown[];
  error: Record<string, unknown> | null;
  /** Where it failed: opening the request or reading the stream. */
  at: "open" | "stream" | null;
}

async function outcome(
  open: Opener,
  path: Path,
  opts: { signal?: AbortSignal; onEvent?: () => void } = {},
): Promise<Outcome> {
  const events: unknown[] = [];
  let stream: AsyncIterable<unknown>;
  try {
    stream = await open(path, { model: "m", stream: true, input: "hi" }, opts.signal);
  } catch (err) {
    return { events, error: describe(err), at: "open" };
  }
  try {
    for await (const ev of stream) {
      events.push(ev);
      opts.onEvent?.();
    }
  } catch (err) {
    return { events, error: describe(err), at: "stream" };
  }
  return { events, error: null, at: null };
}

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A server on 127.0.0.1 answering every request with `reply`; it records what it receives. */
async function withServer(
  reply: (req: Request) => Response | Promise<Response>,
  fn: (base: string, seen: Seen[]) => Promise<void>,
): Promise<void> {
  const seen: Seen[] = [];
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    async (req) => {
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      seen.push({ method: req.method, url: req.url, headers, body: await req.text() });
      return await reply(req);
    },
  );
  try {
    await fn(`http://127.0.0.1:${await ready.promise}`, seen);
  } finally {
    await server.shutdown();
  }
}

const sse = (...events: string[]) =>
  new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
const chunk = (n: number) =>
  `data: {"id":"c${n}","choices":[{"index":0,"delta":{"content":"${n}"}}]}\n\n`;

/** Send the scenario through both clients; return both outcomes and what the server saw. */
async function compare(
  reply: (req: Request) => Response | Promise<Response>,
  opts: Partial<OpenAIClientOptions> & { path?: Path; base?: string } = {},
): Promise<{ sdk: Outcome; http: Outcome; seen: Seen[] }> {
  let result!: { sdk: Outcome; http: Outcome; seen: Seen[] };
  await withServer(reply, async (base, seen) => {
    const conn: OpenAIClientOptions = {
      baseUrl: `${base}${opts.base ?? "/v1"}`,
      apiKey: KEY,
      headers: { "User-Agent": "KimiCLI/1.49.0" },
      ...opts,
    };
    const path = opts.path ?? "/chat/completions";
    const sdk = await outcome(viaSdk(conn), path);
    const http = await outcome(viaHttp(conn), path);
    result = { sdk, http, seen };
  });
  return result;
}

Deno.test("openai http: the request is the SDK's (URL, method, every header, body)", async () => {
  const cases: (Partial<OpenAIClientOptions> & { path?: Path; base?: string })[] = [
    { headers: { "User-Agent": "KimiCLI/1.49.0", "X-Msh-Device-Id": "dev-1" } },
    { headers: { "user-agent": "lower/1", accept: "text/event-stream", "X-A": "1" } },
    { headers: { "Content-Type": "text/plain", Authorization: "Bearer other" } },
    { apiKey: "", headers: { "User-Agent": "KimiCLI/1.49.0" } },
    { apiKey: "", headers: { authorization: "Bearer custom" } },
    { base: "/v1/" },
    { base: "/v1/", path: "/responses" },
    { base: "/openai/v1?api-version=2024-10-01&x=a%20b&r=1&r=2" },
    { base: "/openai/v1/?api-version=1" },
  ];
  for (const c of cases) {
    const { sdk, http, seen } = await compare(() => sse(chunk(1), "data: [DONE]\n\n"), c);
    assertEquals(seen.length, 2, JSON.stringify(c));
    assertEquals(seen[1], seen[0], JSON.stringify(c));
    assertEquals(http, sdk, JSON.stringify(c));
    assertEquals(http.events.length, 1);
  }
  // the decisions spelled out, so the comparison cannot pass on two empty requests
  const { seen } = await compare(() => sse("data: [DONE]\n\n"), {
    headers: { "User-Agent": "KimiCLI/1.49.0", "X-Extra": "1" },
  });
  const h = seen[1].headers;
  assertEquals(h["authorization"], `Bearer ${KEY}`);
  assertEquals(h["user-agent"], "KimiCLI/1.49.0");
  assertEquals(h["accept"], "application/json");
  assertEquals(h["content-type"], "application/json");
  assertEquals(h["x-extra"], "1");
  assertEquals(h["x-stainless-retry-count"], "0");
  assertEquals(seen[1].method, "POST");
  assert(seen[1].url.endsWith("/v1/chat/completions"), seen[1].url);
  assertEquals(JSON.parse(seen[1].body), { model: "m", stream: true, input: "hi" });
});

Deno.test("openai http: URL joining keeps one slash and the base URL's query", () => {
  assertEquals(buildUrl("http://h/v1", "/responses"), "http://h/v1/responses");
  assertEquals(buildUrl("http://h/v1/", "/responses"), "http://h/v1/responses");
  assertEquals(buildUrl("http://h/v1?k=a b&q=(1)", "/x"), "http://h/v1/x?k=a%20b&q=%281%29");
  assertEquals(buildUrl("http://h/v1/?r=1&r=2&k=v", "/x"), "http://h/v1/x?k=v&r=1&r=2");
});

Deno.test("openai http: error statuses with JSON, other JSON and non-JSON bodies are the SDK's errors", async () => {
  const bodies: [string, string][] = [
    [
      '{"error":{"message":"Bad thing","type":"invalid_request_error","code":"c1"}}',
      "application/json",
    ],
    ['{"detail":"not the OpenAI shape"}', "application/json"],
    ['{"error":"a string error"}', "application/json"],
    ['"just a string"', "application/json"],
    ["<html><title>502 Bad Gateway</title></html>", "text/html"],
    ["", "text/plain"],
    [`key ${KEY} in a proxy page`, "text/plain"],
  ];
  for (const status of [400, 401, 403, 404, 409, 422, 429, 500, 503]) {
    for (const [body, type] of bodies) {
      const { sdk, http } = await compare(() =>
        new Response(body, {
          status,
          headers: { "content-type": type, "x-request-id": `req-${status}` },
        })
      );
      const what = `${status} ${body}`;
      assertEquals(http, sdk, what);
      assertEquals(http.at, "open", what);
      assertEquals((http.error?.converted as { status?: number }).status, status, what);
      assert(!String((http.error?.converted as { message: string }).message).includes(KEY));
    }
  }
});

Deno.test("openai http: an error object inside the stream, malformed JSON and early end", async () => {
  const replies: (() => Response)[] = [
    () => sse(chunk(1), 'data: {"error":{"message":"overloaded mid-stream","code":"x"}}\n\n'),
    () => sse(chunk(1), 'event: error\ndata: {"error":{"message":"named error event"}}\n\n'),
    () => sse(chunk(1), 'event: error\ndata: {"message":"bare error event"}\n\n'),
    () => sse(chunk(1), "data: {not json}\n\n"),
    () => sse(chunk(1), chunk(2)), // no [DONE]
    () => sse(chunk(1), "data: [DONE]\n\n", chunk(2)), // after [DONE]: ignored
    () => sse(chunk(1), "data: " + JSON.stringify({ x: 1 })), // no blank line at the end
  ];
  for (const [i, reply] of replies.entries()) {
    for (const path of ["/chat/completions", "/responses"] as const) {
      const { sdk, http } = await compare(reply, { path });
      assertEquals(http, sdk, `reply ${i} ${path}`);
    }
  }
  const { http } = await compare(replies[0]);
  assertEquals(http.at, "stream");
  assertEquals(http.events.length, 1);
  assertEquals(http.error?.message, "overloaded mid-stream");
  assertEquals((http.error?.converted as { class: string }).class, "ChatProviderError");
});

/** Abort mid-stream, before the response headers, and before sending, through `client`. */
async function abortScenarios(client: typeof viaSdk): Promise<Record<string, Outcome>> {
  const results: Record<string, Outcome> = {};
  const gate = Promise.withResolvers<void>();
  await withServer(async (req) => {
    if (new URL(req.url).searchParams.has("hang")) await gate.promise;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(chunk(1)));
        // the rest never comes: only the abort ends this stream
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  }, async (base, seen) => {
    const conn = { baseUrl: `${base}/v1`, apiKey: KEY, headers: {} };
    const hang = { ...conn, baseUrl: `${base}/v1?hang=1` };
    // mid-stream: the stream ends quietly (the provider stream turns that into the reason)
    const mid = new AbortController();
    results.mid = await outcome(client(conn), "/chat/completions", {
      signal: mid.signal,
      onEvent: () => mid.abort(new Error("caller's reason")),
    });
    // before the response headers
    const early = new AbortController();
    const pending = outcome(client(hang), "/chat/completions", { signal: early.signal });
    // wait until the server holds the request
    while (!seen.some((r) => r.url.includes("hang"))) await new Promise((r) => setTimeout(r, 5));
    early.abort();
    results.early = await pending;
    // an aborted signal sends nothing
    results.pre = await outcome(client(conn), "/chat/completions", {
      signal: AbortSignal.abort(),
    });
    gate.resolve();
  });
  return results;
}

Deno.test("openai http: aborts before the headers, mid-stream and before sending", async () => {
  const sdk = await abortScenarios(viaSdk);
  const http = await abortScenarios(viaHttp);
  assertEquals(http, sdk);
  assertEquals([http.mid.events.length, http.mid.error], [1, null]);
  assertEquals(http.early.error?.class, "APIUserAbortError");
  assertEquals(http.pre.error?.class, "APIUserAbortError");
});

Deno.test("openai http: connection refused, a timeout and a permission denial from fetch", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const refused = { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: KEY, headers: {} };
  const sdk = await outcome(viaSdk(refused), "/chat/completions");
  const http = await outcome(viaHttp(refused), "/chat/completions");
  assertEquals(http, sdk);
  assertEquals(http.error?.class, "APIConnectionError");
  assertEquals(http.error?.message, "Connection error.");
  assert(
    String((http.error?.converted as { message: string }).message).startsWith("Connection error: "),
  );
  const failing = (err: unknown): typeof fetch => () => Promise.reject(err);
  for (
    const err of [
      new TypeError("error sending request: operation timed out"),
      new DOMException("The signal has been aborted", "AbortError"),
      new Deno.errors.NotCapable('Requires net access to "api.example.com:443"'),
      "a string",
    ]
  ) {
    const conn = { baseUrl: "https://api.example.com/v1", apiKey: KEY, headers: {} };
    const a = await outcome(viaSdk({ ...conn, fetch: failing(err) }), "/responses");
    const b = await outcome(viaHttp({ ...conn, fetch: failing(err) }), "/responses");
    assertEquals(b, a, String(err));
  }
});

Deno.test("openai http: OPENAI_ORG_ID, OPENAI_PROJECT_ID and OPENAI_CUSTOM_HEADERS as the SDK reads them", async () => {
  let seen: Seen[] = [];
  await withServer(() => sse("data: [DONE]\n\n"), async (base, s) => {
    // the environment is the process's: read it in a child, not in the parallel test runner
    const code = `
      import { OpenAI } from "openai";
      import { createOpenAIClient } from "./lib/llm/providers/openai_client.ts";
      const opts = { baseUrl: "${base}/v1", apiKey: "${KEY}", headers: { "X-Mine": "1" } };
      const sdk = new OpenAI({ apiKey: opts.apiKey, baseURL: opts.baseUrl, maxRetries: 0,
        defaultHeaders: opts.headers });
      for await (const _ of await sdk.chat.completions.create({ model: "m", stream: true } as any)) {}
      for await (const _ of await createOpenAIClient(opts).chatCompletionStream(
        { model: "m", stream: true })) {}
    `;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=ts", code],
      cwd: REPO,
      env: {
        OPENAI_ORG_ID: " org-1 ",
        OPENAI_PROJECT_ID: "proj-1",
        OPENAI_CUSTOM_HEADERS: "X-Env: a\nX-Mine: from-env\nbroken line\nUser-Agent: env-agent",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    seen = s;
  });
  assertEquals(seen.length, 2);
  assertEquals(seen[1], seen[0]);
  const h = seen[1].headers;
  assertEquals(h["openai-organization"], "org-1");
  assertEquals(h["openai-project"], "proj-1");
  assertEquals([h["x-env"], h["x-mine"], h["user-agent"]], ["a", "1", "env-agent"]);
});

Deno.test("openai http: a bad OPENAI_CUSTOM_HEADERS name fails the client's creation clearly", async () => {
  const code = `
    import { createOpenAIClient } from "./lib/llm/providers/openai_client.ts";
    try {
      createOpenAIClient({ baseUrl: "http://127.0.0.1:9/v1", apiKey: "${KEY}", headers: {} });
    } catch (err) {
      console.log(err.name + ": " + err.message);
    }
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", code],
    cwd: REPO,
    env: { OPENAI_CUSTOM_HEADERS: "Bad Name: x" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(
    new TextDecoder().decode(out.stdout).trim(),
    'ChatProviderError: Cannot create the API client for http://127.0.0.1:9/v1: Header name must be a valid HTTP token ["Bad Name"]',
  );
});

const request: ChatRequest = {
  systemPrompt: "s",
  tools: [],
  history: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
};

Deno.test("openai http: providers over the mock server give the same provider errors as before", async () => {
  const mock = await startMockOpenAI();
  try {
    const chat = createOpenAIChatProvider({
      kind: "kimi",
      baseUrl: mock.url,
      apiKey: KEY,
      model: "kimi-for-coding",
      userAgent: "KimiCLI/1.49.0",
    });
    const responses = createOpenAIResponsesProvider({
      baseUrl: mock.url,
      apiKey: KEY,
      model: "gpt-5",
      userAgent: "KimiCLI/1.49.0",
    });
    const table: [number, string | undefined, string][] = [
      [400, "Invalid request: messages is empty", "400 Invalid request: messages is empty"],
      [401, "Invalid Authentication", "401 Invalid Authentication"],
      [403, `Forbidden for ${KEY}`, "403 Forbidden for [REDACTED]"],
      [404, "Not found the model", "404 Not found the model"],
      [429, "Rate limited", "429 Rate limited"],
      [500, "boom", "500 boom"],
    ];
    for (const provider of [chat, responses]) {
      for (const [status, error, message] of table) {
        mock.enqueue({ status, error });
        await assertRejects(() => provider.generate(request), (err: unknown) => {
          assert(err instanceof APIStatusError, `got ${err}`);
          assertEquals([err.statusCode, err.message], [status, message]);
          return true;
        });
        // a proxy's page instead of JSON: its text is the message
        mock.enqueue({ status, body: `<html>${status} from the proxy</html>` });
        await assertRejects(() => provider.generate(request), (err: unknown) => {
          assert(err instanceof APIStatusError, `got ${err}`);
          assertEquals([err.statusCode, err.message], [
            status,
            `${status} <html>${status} from the proxy</html>`,
          ]);
          return true;
        });
      }
    }
    // no key: no Authorization header at all, through both providers
    for (const make of [createOpenAIChatProvider, createOpenAIResponsesProvider]) {
      const p = make({
        kind: "openai_legacy",
        baseUrl: mock.url,
        apiKey: "",
        model: "m",
        userAgent: "KimiCLI/1.49.0",
        customHeaders: { Authorization: "Bearer must-not-go" },
      });
      const stream = await p.generate(request);
      for await (const _ of stream) { /* drain */ }
      const last = mock.requests.at(-1)!;
      assertEquals(last.headers["authorization"], undefined);
      assertEquals(last.headers["user-agent"], "KimiCLI/1.49.0");
    }
  } finally {
    await mock.close();
  }
});

Deno.test("openai http: an error event in a provider's stream is a ChatProviderError", async () => {
  await withServer(
    () => sse(chunk(1), 'data: {"error":{"message":"server overloaded for ' + KEY + '"}}\n\n'),
    async (base) => {
      const p = createOpenAIChatProvider({
        kind: "kimi",
        baseUrl: `${base}/v1`,
        apiKey: KEY,
        model: "m",
        userAgent: "KimiCLI/1.49.0",
      });
      const stream = await p.generate(request);
      const parts: unknown[] = [];
      await assertRejects(async () => {
        for await (const part of stream) parts.push(part);
      }, (err: unknown) => {
        assert(err instanceof ChatProviderError && !(err instanceof APIStatusError), `${err}`);
        assertEquals(err.message, "server overloaded for [REDACTED]");
        return true;
      });
      assertEquals(parts, [{ type: "text", text: "1" }]);
    },
  );
});

Deno.test("openai http: a Kimi video upload goes through the SDK's Files API with the same headers", async () => {
  const mock = await startMockOpenAI();
  try {
    for (const apiKey of [KEY, ""]) {
      const client = createOpenAIClient({
        baseUrl: mock.url,
        apiKey,
        headers: { "User-Agent": "KimiCLI/1.49.0", "X-Msh-Device-Id": "dev-1" },
      });
      const uploads = new KimiVideoUploads(client);
      const video = {
        type: "video_url" as const,
        video_url: { url: "data:video/mp4;base64,AAAA", id: null },
      };
      const history = [{ role: "user" as const, content: [video] }];
      const resolved = await uploads.resolve(history);
      const again = await uploads.resolve(history);
      const files = mock.requests.filter((r) => r.path === "/v1/files");
      const upload = files.at(-1)!;
      assertEquals(resolved[0].content, [{
        type: "video_url",
        video_url: { url: `ms://file-${files.length}`, id: null },
      }]);
      assertEquals(again, resolved, "uploaded once");
      assertEquals(upload.body.purpose, "video");
      assertEquals(upload.headers["user-agent"], "KimiCLI/1.49.0");
      assertEquals(upload.headers["x-msh-device-id"], "dev-1");
      assertEquals(upload.headers["authorization"], apiKey ? `Bearer ${KEY}` : undefined);
    }
    assertEquals(mock.requests.filter((r) => r.path === "/v1/files").length, 2);
  } finally {
    await mock.close();
  }
});
