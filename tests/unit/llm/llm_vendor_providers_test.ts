/**
 * The Anthropic and Gemini providers at the streaming interface: parts, message id, usage,
 * images in history, and thinking settings, against the mock APIs.
 */
import { assertEquals } from "../../helpers/assert.ts";
import { startVendorMock } from "../../helpers/mock_vendor_apis.ts";
import {
  createAnthropicProvider,
  toAnthropicMessages,
} from "../../../lib/llm/providers/anthropic.ts";
import { createGeminiProvider, geminiThinkingConfig } from "../../../lib/llm/providers/gemini.ts";
import type { ChatProvider, StreamPart } from "../../../lib/llm/provider.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";

const PNG = "data:image/png;base64,iVBORw0KGgo=";
const history: NormalizedMessage[] = [{
  role: "user",
  content: [{ type: "text", text: "what is this?" }, {
    type: "image_url",
    image_url: { url: PNG, id: null },
  }],
}];

async function collect(p: ChatProvider) {
  const stream = await p.generate({ systemPrompt: "sys", tools: [], history });
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return { parts, id: stream.id, usage: stream.usage };
}

Deno.test("anthropic: parts, id, usage with cache reads and writes; image as base64 block", async () => {
  const mock = await startVendorMock("anthropic");
  try {
    mock.enqueue({ text: "a cat" });
    const p = createAnthropicProvider({
      baseUrl: mock.url,
      apiKey: "k-123456",
      model: "claude-opus-4-7",
      userAgent: "KimiCLI/test",
    }).withThinking("medium");
    const r = await collect(p);
    assertEquals(r.parts, [{ type: "text", text: "a ca" }, { type: "text", text: "t" }]);
    assertEquals(r.id, "msg_1");
    assertEquals(r.usage, {
      input_other: 20,
      output: 7,
      input_cache_read: 5,
      input_cache_creation: 2,
    });
    const body = mock.requests[0].body;
    assertEquals(body.messages[0].content[1], {
      type: "image",
      source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
      cache_control: { type: "ephemeral" },
    });
    // Opus 4.7 thinks adaptively with an effort
    assertEquals(body.thinking, { type: "adaptive", display: "summarized" });
    assertEquals(body.output_config, { effort: "medium" });
    assertEquals(mock.requests[0].headers["user-agent"], "KimiCLI/test");
  } finally {
    await mock.close();
  }
});

Deno.test("gemini: parts, id, usage (cached and thought tokens); image as inline data; thinking off", async () => {
  const mock = await startVendorMock("gemini");
  try {
    mock.enqueue({ thinking: "hmm", text: "a dog" });
    const p = createGeminiProvider({
      kind: "gemini",
      baseUrl: mock.url,
      apiKey: "k-123456",
      model: "gemini-2.5-flash",
      userAgent: "KimiCLI/test",
    });
    const r = await collect(p);
    assertEquals(r.parts, [
      { type: "think", think: "hmm", encrypted: null },
      { type: "text", text: "a do" },
      { type: "text", text: "g" },
    ]);
    assertEquals(r.id, "resp_1");
    assertEquals(r.usage, {
      input_other: 20,
      output: 8,
      input_cache_read: 10,
      input_cache_creation: 0,
    });
    assertEquals(mock.requests[0].body.contents[0].parts[1], {
      inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" },
    });
    mock.enqueue({ text: "x" });
    await collect(p.withThinking("off"));
    assertEquals(mock.requests[1].body.generationConfig.thinkingConfig, { thinkingBudget: 0 });
    // models that cannot stop thinking get no budget; Gemini 3 takes a level
    assertEquals(geminiThinkingConfig("gemini-2.5-pro", "off"), null);
    assertEquals(geminiThinkingConfig("gemini-3-pro-preview", "medium"), {
      includeThoughts: true,
      thinkingLevel: "low",
    });
    assertEquals(geminiThinkingConfig("gemini-2.5-pro", null), null);
  } finally {
    await mock.close();
  }
});

Deno.test("anthropic history: signed and redacted thinking replayed, unsigned dropped, tool results merged", () => {
  const msgs = toAnthropicMessages([
    { role: "user", content: [{ type: "text", text: "go" }] },
    {
      role: "assistant",
      content: [
        { type: "think", think: "plan", encrypted: "sig" },
        { type: "think", think: "", encrypted: "anthropic-redacted:opaque" },
        { type: "think", think: "from another model", encrypted: null },
      ],
      tool_calls: [
        { type: "function", id: "a", function: { name: "T", arguments: '{"x":1}' }, extras: null },
        { type: "function", id: "b", function: { name: "T", arguments: null }, extras: null },
      ],
    },
    { role: "tool", tool_call_id: "a", content: [{ type: "text", text: "one" }] },
    { role: "tool", tool_call_id: "b", content: [] },
  ]);
  assertEquals(msgs.length, 3);
  assertEquals(msgs[1].content, [
    { type: "thinking", thinking: "plan", signature: "sig" },
    { type: "redacted_thinking", data: "opaque" },
    { type: "tool_use", id: "a", name: "T", input: { x: 1 } },
    { type: "tool_use", id: "b", name: "T", input: {} },
  ]);
  assertEquals(msgs[2].role, "user");
  assertEquals(msgs[2].content.map((b) => b.tool_use_id), ["a", "b"]);
  assertEquals(msgs[2].content[1].content, [{ type: "text", text: "(empty)" }]);
});
