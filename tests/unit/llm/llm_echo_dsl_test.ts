import { assert, assertEquals, assertRejects, assertThrows } from "../../helpers/assert.ts";
import { echoScriptStream, parseEchoDsl } from "../../../lib/llm/echo_dsl.ts";
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
} from "../../../lib/llm/errors.ts";
import { createEchoProvider } from "../../../lib/llm/providers/echo.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";
import type { StreamPart } from "../../../lib/llm/provider.ts";

function dslError(text: string): string {
  try {
    parseEchoDsl(text);
  } catch (err) {
    assert(err instanceof ChatProviderError, `expected ChatProviderError, got ${err}`);
    return err.message;
  }
  throw new Error("expected parseEchoDsl to throw");
}

Deno.test("echo DSL: the reference example parses to the documented parts", () => {
  const script = parseEchoDsl([
    "id: echo-42",
    'usage: {"input_other": 10, "output": 2}',
    "think: thinking...",
    "text: Hello,",
    "text:  world!",
    'image_url: {"url": "https://example.com/image.png", "id": "img-1"}',
    'tool_call: {"id": "call-1", "name": "search", "arguments": "{\\"query"}',
    'tool_call_part: {"arguments_part": "\\": \\"what time is"}',
    'tool_call_part: {"arguments_part": " it?\\"}"}',
  ].join("\n"));
  assertEquals(script.id, "echo-42");
  assertEquals(script.usage, {
    input_other: 10,
    output: 2,
    input_cache_read: 0,
    input_cache_creation: 0,
  });
  assertEquals(script.error, null);
  assertEquals(script.parts, [
    { type: "think", think: "thinking...", encrypted: null },
    { type: "text", text: "Hello," },
    { type: "text", text: " world!" },
    { type: "image_url", image_url: { url: "https://example.com/image.png", id: "img-1" } },
    {
      type: "function",
      id: "call-1",
      function: { name: "search", arguments: '{"query' },
      extras: null,
    },
    { arguments_part: '": "what time is' },
    { arguments_part: ' it?"}' },
  ]);
});

Deno.test("echo DSL: skip rules, kind case, one leading space and quote stripping", () => {
  const script = parseEchoDsl([
    "",
    "   ",
    "# a comment",
    "```dsl",
    "ECHO",
    "  echo  ",
    "TEXT:   three spaces",
    'text: "quoted"',
    "text: 'single'",
    "text: 'mismatched\"",
    "text:",
    "text:no space",
    "id: 'quoted-id'",
    "```",
  ].join("\n"));
  assertEquals(script.parts, [
    { type: "text", text: "  three spaces" },
    { type: "text", text: "quoted" },
    { type: "text", text: "single" },
    { type: "text", text: "'mismatched\"" },
    { type: "text", text: "" },
    { type: "text", text: "no space" },
  ]);
  assertEquals(script.id, "quoted-id");
});

Deno.test("echo DSL: usage key=value form with commas, missing keys are 0", () => {
  assertEquals(
    parseEchoDsl("usage: input_other=1, output=2 input_cache_read=3,input_cache_creation=4").usage,
    { input_other: 1, output: 2, input_cache_read: 3, input_cache_creation: 4 },
  );
  assertEquals(parseEchoDsl("usage: output=7").usage, {
    input_other: 0,
    output: 7,
    input_cache_read: 0,
    input_cache_creation: 0,
  });
  // strings holding integers are accepted like Python's int()
  assertEquals(parseEchoDsl('usage: {"output": "5"}').usage?.output, 5);
  // usage alone produces no parts
  assertEquals(parseEchoDsl("usage: output=1").parts, []);
});

Deno.test("echo DSL: tool_call key=value form, function.name form and extras", () => {
  assertEquals(parseEchoDsl("tool_call: id=c1, name=Shell").parts, [
    { type: "function", id: "c1", function: { name: "Shell", arguments: null }, extras: null },
  ]);
  assertEquals(
    parseEchoDsl(
      'tool_call: {"id": "c2", "function": {"name": "Glob", "arguments": "{}"}, "extras": {"k": 1}}',
    ).parts,
    [{ type: "function", id: "c2", function: { name: "Glob", arguments: "{}" }, extras: { k: 1 } }],
  );
  // an empty name falls back to function.name
  assertEquals(
    (parseEchoDsl('tool_call: {"id": "c3", "name": "", "function": {"name": "F"}}')
      .parts[0] as { function: { name: string } }).function.name,
    "F",
  );
});

Deno.test("echo DSL: tool_call_part forms", () => {
  const parts = parseEchoDsl([
    "tool_call_part: plain text",
    'tool_call_part: "quoted"',
    'tool_call_part: {"arguments_part": {"a": [1, "é"]}}',
    'tool_call_part: ["x", 2]',
    "tool_call_part: null",
    "tool_call_part:",
    'tool_call_part: {"arguments_part": ""}',
    'tool_call_part: {"other": 1}',
  ].join("\n")).parts;
  assertEquals(parts, [
    { arguments_part: "plain text" },
    { arguments_part: "quoted" },
    { arguments_part: '{"a":[1,"\\u00e9"]}' },
    { arguments_part: '["x",2]' },
    { arguments_part: null },
    { arguments_part: null },
    { arguments_part: null },
    { arguments_part: null },
  ]);
});

Deno.test("echo DSL: media parts from URLs and objects", () => {
  assertEquals(
    parseEchoDsl([
      "image_url: https://e.com/a.png",
      'video_url: {"url": "https://e.com/v.mp4", "id": "v1"}',
      "audio_url: 'https://e.com/a.mp3'",
    ].join("\n")).parts,
    [
      { type: "image_url", image_url: { url: "https://e.com/a.png", id: null } },
      { type: "video_url", video_url: { url: "https://e.com/v.mp4", id: "v1" } },
      { type: "audio_url", audio_url: { url: "https://e.com/a.mp3", id: null } },
    ],
  );
});

Deno.test("echo DSL: error directives become provider errors and stop parsing", () => {
  let s = parseEchoDsl("text: before\nerror: 429\nthis line is not DSL");
  assert(s.error instanceof APIStatusError);
  assertEquals(s.error.statusCode, 429);
  assertEquals(s.error.message, "Simulated 429 error");

  s = parseEchoDsl("error: 503 upstream is  down ");
  assert(s.error instanceof APIStatusError);
  assertEquals([s.error.statusCode, s.error.message], [503, "upstream is  down"]);

  s = parseEchoDsl("error: Connection reset by peer");
  assert(s.error instanceof APIConnectionError);
  assertEquals(s.error.message, "reset by peer");
  s = parseEchoDsl("error: connection");
  assertEquals(s.error?.message, "Simulated connection error");

  s = parseEchoDsl("error: timeout");
  assert(s.error instanceof APITimeoutError);
  assertEquals(s.error.message, "Simulated timeout error");
});

Deno.test("echo DSL: every error message verbatim", () => {
  assertEquals(dslError("text: ok\nno colon here"), "Invalid echo DSL at line 2: 'no colon here'");
  assertEquals(dslError("  it's bad  "), `Invalid echo DSL at line 1: "  it's bad  "`);
  assertEquals(dslError("a\tb"), "Invalid echo DSL at line 1: 'a\\tb'");
  assertEquals(
    dslError("text: a\r\n\r\nFoo: bar"),
    "Unknown echo DSL kind 'foo' at line 3: 'Foo: bar'",
  );
  assertEquals(
    dslError('tool_call: {"id": "c1"}'),
    `tool_call requires string id and name at line 1: 'tool_call: {"id": "c1"}'`,
  );
  assertEquals(
    dslError('tool_call: {"id": "c", "name": "n", "arguments": {"a": 1}}'),
    "tool_call.arguments must be a string at line 1, got dict",
  );
  assertEquals(
    dslError('tool_call: {"id": "c", "name": "n", "arguments": 3}'),
    "tool_call.arguments must be a string at line 1, got int",
  );
  assertEquals(dslError("tool_call: [1, 2]"), "tool_call payload must be an object, got [1, 2]");
  assertEquals(dslError("usage: output=abc"), "Usage field 'output' must be an integer, got 'abc'");
  assertEquals(
    dslError('usage: {"output": null}'),
    "Usage field 'output' must be an integer, got None",
  );
  assertEquals(dslError("usage: foo"), "Invalid token 'foo' in usage payload.");
  assertEquals(dslError("usage:"), "usage payload cannot be empty.");
  assertEquals(dslError("usage: 5"), "usage payload must be an object, got 5");
  assertEquals(dslError("error:"), "Empty error payload at line 1: 'error:'");
  assertEquals(
    dslError("error: boom"),
    "Invalid error spec at line 1: expected status code or 'connection'/'timeout', got 'boom'",
  );
  assertEquals(
    dslError('image_url: {"id": "x"}'),
    "image_url requires a url field, got {'id': 'x'}",
  );
  assertEquals(dslError("image_url: 42"), "image_url expects url string or object, got 42");
  assertEquals(dslError("video_url:"), "video_url expects url string or object, got None");
  assertEquals(
    dslError('audio_url: {"url": "u", "id": 1}'),
    "audio_url id must be a string when provided.",
  );
});

Deno.test("echo DSL: non-ASCII and non-printable characters in quoted lines", () => {
  assertEquals(dslError("é\u00a0x"), "Invalid echo DSL at line 1: 'é\\xa0x'");
});

Deno.test("echoScriptStream replays copies with id and usage", async () => {
  const script = parseEchoDsl("id: m1\nusage: output=3\ntext: a\ntool_call: id=c, name=n");
  const stream = echoScriptStream(script);
  const got: StreamPart[] = [];
  for await (const p of stream) got.push(p);
  assertEquals(got, script.parts);
  assert(got[0] !== script.parts[0], "parts must be copies");
  assertEquals(stream.id, "m1");
  assertEquals(stream.usage?.output, 3);
});

const user = (text: string): NormalizedMessage => ({
  role: "user",
  content: [{ type: "text", text }],
});

Deno.test("echo provider: streams the last user message's script", async () => {
  const p = createEchoProvider();
  assertEquals([p.name, p.modelName, p.thinkingEffort], ["echo", "echo", null]);
  const stream = await p.generate({
    systemPrompt: "",
    tools: [],
    history: [user("ignored"), user("id: e1\ntext: hi\ntext:  there")],
  });
  const got: StreamPart[] = [];
  for await (const part of stream) got.push(part);
  assertEquals(got, [{ type: "text", text: "hi" }, { type: "text", text: " there" }]);
  assertEquals(stream.id, "e1");
  const copy = p.withThinking("high");
  assertEquals(copy.name, "echo");
});

Deno.test("echo provider: error messages", async () => {
  const p = createEchoProvider();
  const gen = (history: NormalizedMessage[]) =>
    p.generate({ systemPrompt: "", tools: [], history });
  await assertRejects(
    () => gen([]),
    {
      name: "ChatProviderError",
      message: "EchoChatProvider requires at least one message in history.",
    },
  );
  await assertRejects(
    () => gen([{ role: "assistant", content: [{ type: "text", text: "text: x" }] }]),
    {
      name: "ChatProviderError",
      message: "EchoChatProvider expects the last history message to be user.",
    },
  );
  await assertRejects(
    () => gen([user("# nothing\nid: x")]),
    { name: "ChatProviderError", message: "EchoChatProvider DSL produced no streamable parts." },
  );
  await assertRejects(() => gen([user("text: a\nerror: 502")]), (err: unknown) => {
    assert(err instanceof APIStatusError);
    assertEquals([err.statusCode, err.message], [502, "Simulated 502 error"]);
    return true;
  });
  await assertRejects(() => gen([user("bogus")]), {
    message: "Invalid echo DSL at line 1: 'bogus'",
  });
});

Deno.test("echo DSL: tool_call without id is invalid", () => {
  assertThrows(() => parseEchoDsl("tool_call: name=x"), ChatProviderError);
});
