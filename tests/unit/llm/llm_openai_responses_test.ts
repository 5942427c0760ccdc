import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { startMockOpenAI } from "../../helpers/mock_openai.ts";
import type { MockOpenAI } from "../../helpers/mock_openai.ts";
import { APIConnectionError, APIStatusError } from "../../../lib/llm/errors.ts";
import { createOpenAIResponsesProvider } from "../../../lib/llm/providers/openai_responses.ts";
import type { OpenAIResponsesOptions } from "../../../lib/llm/providers/openai_responses.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";
import type { ChatProvider, ChatRequest, StreamPart } from "../../../lib/llm/provider.ts";

const KEY = "sk-responses-secret-456";

function provider(mock: MockOpenAI, extra: Partial<OpenAIResponsesOptions> = {}): ChatProvider {
  return createOpenAIResponsesProvider({
    baseUrl: mock.url,
    apiKey: KEY,
    model: "gpt-5",
    userAgent: "KimiCLI/1.49.0",
    ...extra,
  });
}

const hi: NormalizedMessage = { role: "user", content: [{ type: "text", text: "hi" }] };
const req = (extra: Partial<ChatRequest> = {}): ChatRequest => ({
  systemPrompt: "Be brief.",
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

Deno.test("openai responses: text deltas, usage, id and request body", async () => {
  await withMock(async (mock) => {
    mock.enqueue({
      id: "msg_77",
      text: ["Hi ", "there"],
      usage: { prompt_tokens: 30, completion_tokens: 4, cached_tokens: 10 },
    });
    const p = provider(mock, {
      promptCacheKey: "sess",
      temperature: 0.2,
      customHeaders: { "X-Extra": "1" },
    });
    assertEquals([p.name, p.modelName, p.thinkingEffort], ["openai-responses", "gpt-5", null]);
    const got = await run(p, req({ maxCompletionTokens: 512 }));
    assertEquals(got.parts, [{ type: "text", text: "Hi " }, { type: "text", text: "there" }]);
    assertEquals(got.id, "msg_77");
    assertEquals(got.usage, {
      input_other: 20,
      output: 4,
      input_cache_read: 10,
      input_cache_creation: 0,
    });
    const { path, headers, body } = mock.requests[0];
    assertEquals(path, "/v1/responses");
    assertEquals(headers["user-agent"], "KimiCLI/1.49.0");
    assertEquals(headers["x-extra"], "1");
    assertEquals(body, {
      model: "gpt-5",
      input: [
        { role: "developer", content: "Be brief." },
        { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] },
      ],
      store: false,
      stream: true,
      max_output_tokens: 512,
      temperature: 0.2,
      prompt_cache_key: "sess",
    });
  });
});

Deno.test("openai responses: reasoning summaries become think parts; reasoning params", async () => {
  await withMock(async (mock) => {
    mock.enqueue({ reasoning: ["Plan", " it."], encryptedReasoning: "ENC==", text: "ok" });
    const p = provider(mock).withThinking("medium");
    assertEquals(p.thinkingEffort, "medium");
    const got = await run(p, req({ systemPrompt: "" }));
    assertEquals(got.parts, [
      { type: "think", think: "", encrypted: null },
      { type: "think", think: "Plan", encrypted: null },
      { type: "think", think: " it.", encrypted: null },
      { type: "think", think: "", encrypted: "ENC==" },
      { type: "text", text: "ok" },
    ]);
    const body = mock.requests[0].body;
    assertEquals(body.reasoning, { effort: "medium", summary: "auto" });
    assertEquals(body.include, ["reasoning.encrypted_content"]);
    assertEquals(body.input.length, 1);

    await run(p.withThinking("off"), req());
    assertEquals("reasoning" in mock.requests[1].body, false);
  });
});

Deno.test("openai responses: function calls stream as ToolCall (call_id) plus argument parts", async () => {
  await withMock(async (mock) => {
    mock.enqueue({
      toolCalls: [{ id: "call_A", name: "Shell", arguments: ['{"command":', '"pwd"}'] }],
      usage: { prompt_tokens: 5, completion_tokens: 5 },
    });
    const tools = [{
      name: "Shell",
      description: "Run.",
      parameters: { type: "object", properties: {} },
    }];
    const got = await run(provider(mock), req({ tools }));
    assertEquals(got.parts, [
      { type: "function", id: "call_A", function: { name: "Shell", arguments: "" }, extras: null },
      { arguments_part: '{"command":' },
      { arguments_part: '"pwd"}' },
    ]);
    assertEquals(got.usage?.input_other, 5);
    assertEquals(mock.requests[0].body.tools, [{
      type: "function",
      name: "Shell",
      description: "Run.",
      parameters: { type: "object", properties: {} },
      strict: false,
    }]);
  });
});

Deno.test("openai responses: history becomes message, reasoning and function items", async () => {
  await withMock(async (mock) => {
    const history: NormalizedMessage[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "See" },
          { type: "image_url", image_url: { url: "https://x/i.png", id: null } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "think", think: "a", encrypted: "E1" },
          { type: "think", think: "b", encrypted: "E1" },
          { type: "text", text: "Calling." },
        ],
        tool_calls: [{
          type: "function",
          id: "call_1",
          function: { name: "Glob", arguments: null },
          extras: null,
        }],
      },
      { role: "tool", content: [{ type: "text", text: "x.ts" }], tool_call_id: "call_1" },
    ];
    await run(provider(mock, { model: "my-local-model" }), req({ history }));
    assertEquals(mock.requests[0].body.input, [
      { role: "system", content: "Be brief." },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "See" },
          { type: "input_image", detail: "auto", image_url: "https://x/i.png" },
        ],
      },
      {
        type: "reasoning",
        summary: [{ type: "summary_text", text: "a" }, { type: "summary_text", text: "b" }],
        encrypted_content: "E1",
      },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "Calling.", annotations: [] }],
      },
      { type: "function_call", call_id: "call_1", name: "Glob", arguments: "{}" },
      {
        type: "function_call_output",
        call_id: "call_1",
        output: [{ type: "input_text", text: "x.ts" }],
      },
    ]);
  });
});

Deno.test("openai responses: status and connection errors", async () => {
  await withMock(async (mock) => {
    mock.enqueue({ status: 503, error: `overloaded (${KEY})` });
    await assertRejects(() => provider(mock).generate(req()), (err: unknown) => {
      assert(err instanceof APIStatusError);
      assertEquals(err.statusCode, 503);
      assertEquals(err.message, "503 overloaded ([REDACTED])");
      return true;
    });
  });
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const p = createOpenAIResponsesProvider({
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey: KEY,
    model: "gpt-5",
    userAgent: "KimiCLI/1.49.0",
  });
  await assertRejects(() => p.generate(req()), APIConnectionError);
});
