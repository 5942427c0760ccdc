import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { startMockOpenAI } from "../../helpers/mock_openai.ts";
import type { MockOpenAI } from "../../helpers/mock_openai.ts";
import {
  APIConnectionError,
  APIStatusError,
  isRetryableError,
  NetworkDeniedError,
} from "../../../lib/llm/errors.ts";
import { createOpenAIChatProvider } from "../../../lib/llm/providers/openai_chat.ts";
import type { OpenAIChatOptions } from "../../../lib/llm/providers/openai_chat.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";
import type { ChatProvider, ChatRequest, StreamPart } from "../../../lib/llm/provider.ts";

const KEY = "sk-test-secret-key-123";

function kimi(mock: MockOpenAI, extra: Partial<OpenAIChatOptions> = {}): ChatProvider {
  return createOpenAIChatProvider({
    kind: "kimi",
    baseUrl: mock.url,
    apiKey: KEY,
    model: "kimi-for-coding",
    userAgent: "KimiCLI/1.49.0",
    ...extra,
  });
}

function legacy(mock: MockOpenAI, extra: Partial<OpenAIChatOptions> = {}): ChatProvider {
  return createOpenAIChatProvider({
    kind: "openai_legacy",
    baseUrl: mock.url,
    apiKey: KEY,
    model: "gpt-4o",
    userAgent: "KimiCLI/1.49.0",
    ...extra,
  });
}

const hi: NormalizedMessage = { role: "user", content: [{ type: "text", text: "hi" }] };
const req = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  systemPrompt: "You are Kimi.",
  tools: [],
  history: [hi],
  ...extra,
});

async function run(p: ChatProvider, r: ChatRequest) {
  const stream = await p.generate(r);
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return { parts, id: stream.id, usage: stream.usage };
}

async function withMock(fn: (mock: MockOpenAI) => Promise<void>): Promise<void> {
  const mock = await startMockOpenAI();
  try {
    await fn(mock);
  } finally {
    await mock.close();
  }
}

Deno.test("openai chat (kimi): streamed reasoning and text, usage, id and request body", async () => {
  await withMock(async (mock) => {
    mock.enqueue({
      id: "chatcmpl-42",
      reasoning: ["Let me ", "think."],
      text: ["Hel", "lo", "!"],
      usage: { prompt_tokens: 100, completion_tokens: 7, cached_tokens: 60 },
    });
    const p = kimi(mock, {
      thinking: "high",
      thinkingKeep: "all",
      promptCacheKey: "session-1",
      temperature: 0.6,
      topP: 0.95,
      customHeaders: { "X-Msh-Device-Id": "dev-1" },
    });
    assertEquals([p.name, p.modelName, p.thinkingEffort], ["kimi", "kimi-for-coding", "high"]);
    const got = await run(p, req({ maxCompletionTokens: 4096 }));
    assertEquals(got.parts, [
      { type: "think", think: "Let me ", encrypted: null },
      { type: "think", think: "think.", encrypted: null },
      { type: "text", text: "Hel" },
      { type: "text", text: "lo" },
      { type: "text", text: "!" },
    ]);
    assertEquals(got.id, "chatcmpl-42");
    assertEquals(got.usage, {
      input_other: 40,
      output: 7,
      input_cache_read: 60,
      input_cache_creation: 0,
    });

    assertEquals(mock.requests.length, 1);
    const { path, headers, body } = mock.requests[0];
    assertEquals(path, "/v1/chat/completions");
    assertEquals(headers["user-agent"], "KimiCLI/1.49.0");
    assertEquals(headers["x-msh-device-id"], "dev-1");
    assertEquals(headers["authorization"], `Bearer ${KEY}`);
    assertEquals(headers["x-stainless-retry-count"], "0");
    assertEquals(body, {
      model: "kimi-for-coding",
      messages: [{ role: "system", content: "You are Kimi." }, { role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 4096,
      temperature: 0.6,
      top_p: 0.95,
      prompt_cache_key: "session-1",
      thinking: { type: "enabled", keep: "all" },
    });
  });
});

Deno.test("openai chat (kimi): thinking off, withThinking copies, Moonshot cached_tokens", async () => {
  await withMock(async (mock) => {
    mock.enqueue({
      text: "ok",
      usage: {
        prompt_tokens: 50,
        completion_tokens: 2,
        cached_tokens: 30,
        cached_tokens_at: "top",
      },
    });
    mock.enqueue({ text: "ok" });
    mock.enqueue({ text: "ok" });
    const base = kimi(mock, { thinkingKeep: "all" });
    assertEquals(base.thinkingEffort, null);
    const off = base.withThinking("off");
    assertEquals([base.thinkingEffort, off.thinkingEffort], [null, "off"]);
    const got = await run(off, req());
    assertEquals(got.usage, {
      input_other: 20,
      output: 2,
      input_cache_read: 30,
      input_cache_creation: 0,
    });
    assertEquals(mock.requests[0].body.thinking, { type: "disabled" });
    await run(base, req());
    assertEquals("thinking" in mock.requests[1].body, false);
    assertEquals("reasoning_effort" in mock.requests[1].body, false);
    await run(off.withThinking("medium"), req());
    assertEquals(mock.requests[2].body.thinking, { type: "enabled", keep: "all" });
  });
});

Deno.test("openai chat: streamed tool call fragments become ToolCall then ToolCallParts", async () => {
  await withMock(async (mock) => {
    mock.enqueue({
      text: "Checking.",
      toolCalls: [
        { id: "call_1", name: "Shell", arguments: ['{"comm', 'and": "ls', '"}'] },
        { id: "call_2", name: "ReadFile", arguments: '{"path": "a.txt"}' },
      ],
    });
    const tools = [
      {
        name: "Shell",
        description: "Run a command.",
        parameters: { type: "object", properties: { command: { type: "string" } } },
      },
      { name: "$web_search", description: "builtin", parameters: {} },
    ];
    const got = await run(kimi(mock), req({ tools }));
    assertEquals(got.parts, [
      { type: "text", text: "Checking." },
      {
        type: "function",
        id: "call_1",
        function: { name: "Shell", arguments: '{"comm' },
        extras: null,
      },
      { arguments_part: 'and": "ls' },
      { arguments_part: '"}' },
      {
        type: "function",
        id: "call_2",
        function: { name: "ReadFile", arguments: '{"path": "a.txt"}' },
        extras: null,
      },
    ]);
    assertEquals(got.usage, null);
    assertEquals(mock.requests[0].body.tools, [
      {
        type: "function",
        function: {
          name: "Shell",
          description: "Run a command.",
          parameters: { type: "object", properties: { command: { type: "string" } } },
        },
      },
      { type: "builtin_function", function: { name: "$web_search" } },
    ]);
  });
});

Deno.test("openai chat: history conversion (media, think parts, tool calls and results)", async () => {
  await withMock(async (mock) => {
    const history: NormalizedMessage[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "Look:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAA", id: null } },
          { type: "video_url", video_url: { url: "ms://file-1", id: "v1" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "think", think: "Need ", encrypted: null },
          { type: "think", think: "a tool.", encrypted: null },
        ],
        tool_calls: [{
          type: "function",
          id: "call_9",
          function: { name: "Glob", arguments: '{"pattern":"*"}' },
          extras: null,
        }],
      },
      {
        role: "tool",
        content: [{ type: "text", text: "a.txt" }, { type: "text", text: "b.txt" }],
        tool_call_id: "call_9",
      },
      {
        role: "assistant",
        content: [{ type: "think", think: "Done.", encrypted: null }, {
          type: "text",
          text: "Two files.",
        }],
      },
      hi,
    ];
    await run(kimi(mock), req({ history, systemPrompt: "" }));
    assertEquals(mock.requests[0].body.messages, [
      {
        role: "user",
        content: [
          { type: "text", text: "Look:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAA" } },
          { type: "video_url", video_url: { url: "ms://file-1", id: "v1" } },
        ],
      },
      {
        role: "assistant",
        content: "",
        tool_calls: [{
          type: "function",
          id: "call_9",
          function: { name: "Glob", arguments: '{"pattern":"*"}' },
        }],
        reasoning_content: "Need a tool.",
      },
      {
        role: "tool",
        content: [{ type: "text", text: "a.txt" }, { type: "text", text: "b.txt" }],
        tool_call_id: "call_9",
      },
      { role: "assistant", content: "Two files.", reasoning_content: "Done." },
      { role: "user", content: "hi" },
    ]);
  });
});

Deno.test("openai chat (openai_legacy): reasoning_effort, max_tokens and reasoning keys", async () => {
  await withMock(async (mock) => {
    const thinkHistory: NormalizedMessage[] = [
      { role: "assistant", content: [{ type: "think", think: "hmm", encrypted: null }] },
      hi,
    ];
    // 1. effort high, custom reasoning key in both directions
    mock.enqueue({ reasoning: ["r1"], reasoningKey: "reasoning", text: "t" });
    const p = legacy(mock, { reasoningKey: "reasoning", thinking: "high" });
    assertEquals([p.name, p.thinkingEffort], ["openai", "high"]);
    let got = await run(p, req({ history: thinkHistory, maxCompletionTokens: 100 }));
    assertEquals(got.parts, [
      { type: "think", think: "r1", encrypted: null },
      { type: "text", text: "t" },
    ]);
    let body = mock.requests[0].body;
    assertEquals(body.reasoning_effort, "high");
    assertEquals(body.max_tokens, 100);
    assertEquals("max_completion_tokens" in body, false);
    assertEquals("thinking" in body, false);
    assertEquals(body.messages[1], { role: "assistant", content: "", reasoning: "hmm" });

    // 2. thinking off: no reasoning_effort
    await run(p.withThinking("off"), req({ history: thinkHistory }));
    assertEquals("reasoning_effort" in mock.requests[1].body, false);

    // 3. thinking unset but history has think parts: medium is requested
    await run(legacy(mock), req({ history: thinkHistory }));
    body = mock.requests[2].body;
    assertEquals(body.reasoning_effort, "medium");
    assertEquals(body.messages[1].reasoning_content, "hmm");

    // 4. reasoning disabled with "": no field sent, deltas ignored
    mock.enqueue({ reasoning: "hidden", text: "visible" });
    got = await run(legacy(mock, { reasoningKey: "" }), req({ history: thinkHistory }));
    assertEquals(got.parts, [{ type: "text", text: "visible" }]);
    body = mock.requests[3].body;
    assertEquals(body.messages[1], { role: "assistant", content: "" });
    assertEquals("reasoning_effort" in body, false);
  });
});

Deno.test("openai chat: an empty-string reasoning delta is kept as a think part", async () => {
  await withMock(async (mock) => {
    mock.enqueue({ reasoning: ["", "x"], text: "y" });
    const got = await run(kimi(mock), req());
    assertEquals(got.parts, [
      { type: "think", think: "", encrypted: null },
      { type: "think", think: "x", encrypted: null },
      { type: "text", text: "y" },
    ]);
  });
});

Deno.test("openai chat: HTTP errors map to APIStatusError without leaking the key", async () => {
  await withMock(async (mock) => {
    mock.enqueue(
      { status: 429, error: "Rate limited" },
      { status: 500, error: `internal failure for key ${KEY}` },
      { status: 401, error: "Invalid Authentication" },
    );
    const p = kimi(mock);
    const expectStatus = async (status: number, message: string, retryable: boolean) => {
      await assertRejects(() => p.generate(req()), (err: unknown) => {
        assert(err instanceof APIStatusError, `got ${err}`);
        assertEquals(err.statusCode, status);
        assertEquals(err.message, message);
        assert(!err.message.includes(KEY));
        assertEquals(isRetryableError(err), retryable);
        return true;
      });
    };
    await expectStatus(429, "429 Rate limited", true);
    await expectStatus(500, "500 internal failure for key [REDACTED]", true);
    await expectStatus(401, "401 Invalid Authentication", false);
    assertEquals(mock.requests.length, 3, "the SDK must not retry on its own");
  });
});

Deno.test("openai chat: connection refused maps to APIConnectionError", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const p = createOpenAIChatProvider({
    kind: "openai_legacy",
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey: KEY,
    model: "m",
    userAgent: "KimiCLI/1.49.0",
  });
  await assertRejects(() => p.generate(req()), (err: unknown) => {
    assert(err instanceof APIConnectionError, `got ${err}`);
    assert(err.message.startsWith("Connection error"), err.message);
    assert(!err.message.includes(KEY));
    assert(err.cause !== undefined);
    assert(isRetryableError(err));
    return true;
  });
});

Deno.test("openai chat: aborting mid-stream rejects with the abort reason", async () => {
  await withMock(async (mock) => {
    mock.enqueue({ text: ["a", "b", "c", "d", "e", "f"], chunkDelayMs: 30 });
    const ac = new AbortController();
    const stream = await kimi(mock).generate(req({ signal: ac.signal }));
    const seen: StreamPart[] = [];
    await assertRejects(async () => {
      for await (const part of stream) {
        seen.push(part);
        ac.abort();
      }
    }, { name: "AbortError" });
    assertEquals(seen.length, 1);
  });
});

Deno.test("openai chat: an empty API key sends no Authorization header", async () => {
  await withMock(async (mock) => {
    await run(kimi(mock, { apiKey: "" }), req());
    assertEquals(mock.requests[0].headers["authorization"], undefined);
  });
});

Deno.test("mock server: models list, default reply and auto replies", async () => {
  const mock = await startMockOpenAI({
    models: ["kimi-k2", "kimi-for-coding"],
    auto: (body) => body.messages.length > 2 ? { text: "auto" } : undefined,
  });
  try {
    const res = await fetch(`${mock.url}/models`);
    assertEquals((await res.json()).data.map((m: { id: string }) => m.id), [
      "kimi-k2",
      "kimi-for-coding",
    ]);
    const p = kimi(mock);
    assertEquals((await run(p, req())).parts, [{ type: "text", text: "done" }]);
    assertEquals((await run(p, req({ history: [hi, hi] }))).parts, [{
      type: "text",
      text: "auto",
    }]);
  } finally {
    await mock.close();
  }
});

Deno.test("openai chat: a permission denial surfaces as NetworkDeniedError (not retried) naming the host", async () => {
  const denied: typeof fetch = () =>
    Promise.reject(
      new Deno.errors.NotCapable(
        'Requires net access to "api.example.com:443", run again with the --allow-net flag',
      ),
    );
  const p = createOpenAIChatProvider({
    kind: "kimi",
    baseUrl: "https://api.example.com/v1",
    apiKey: KEY,
    model: "m",
    userAgent: "KimiCLI/1.49.0",
    fetch: denied,
  });
  await assertRejects(() => p.generate(req()), (err: unknown) => {
    assert(err instanceof NetworkDeniedError, `got ${err}`);
    assert(err.cause instanceof Deno.errors.NotCapable);
    assertEquals(err.host, "api.example.com:443");
    assertEquals(isRetryableError(err), false);
    assert(err.message.startsWith("This run has no network access to `api.example.com:443`"));
    return true;
  });
});
