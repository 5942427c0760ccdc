import { assert, assertEquals, assertMatch } from "../../helpers/assert.ts";
import {
  APIStatusError,
  APIStreamLimitError,
  APITimeoutError,
  isRetryableError,
} from "../../../lib/llm/errors.ts";
import { generate } from "../../../lib/llm/generate.ts";
import type {
  ChatProvider,
  ChatRequest,
  ChatStream,
  StreamPart,
} from "../../../lib/llm/provider.ts";
import { guardProvider, streamLimitsFor, utf8Length } from "../../../lib/llm/stream_guard.ts";
import { excerpt, looksBinary, summarizeErrorBody } from "../../../lib/excerpt.ts";

const REQUEST: ChatRequest = { systemPrompt: "", tools: [], history: [] };

/** A provider whose stream comes from `parts`; it records the signal it was given. */
function fakeProvider(
  parts: (signal: AbortSignal) => AsyncIterable<StreamPart>,
  seen: { signal?: AbortSignal } = {},
  before?: () => Promise<void>,
): ChatProvider {
  const provider: ChatProvider = {
    name: "fake",
    modelName: "fake-model",
    thinkingEffort: null,
    async generate(request: ChatRequest): Promise<ChatStream> {
      seen.signal = request.signal;
      await before?.();
      const iterable = parts(request.signal!);
      return {
        id: "fake-1",
        usage: null,
        [Symbol.asyncIterator]: () => iterable[Symbol.asyncIterator](),
      };
    },
    withThinking: () => provider,
  };
  return provider;
}

/** The error `p` rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

const never = () => new Promise<never>(() => {});
const limits = (o: Partial<ReturnType<typeof streamLimitsFor>> = {}) => ({
  ...streamLimitsFor(undefined, 1000),
  ...o,
});

Deno.test("stream guard: endless text is cut at the limit with a retryable error", async () => {
  const seen: { signal?: AbortSignal } = {};
  let produced = 0;
  const provider = guardProvider(
    fakeProvider(async function* () {
      for (;;) {
        produced += 1000;
        yield { type: "text", text: "y".repeat(1000) };
      }
    }, seen),
    limits({ maxTextBytes: 10_000 }),
  );
  const err = await rejection(generate(provider, REQUEST));
  assert(err instanceof APIStreamLimitError);
  assertEquals(err.part, "text");
  assertEquals(
    err.message,
    "The model's response was cut: its text passed 10000 bytes. Raise " +
      "model_stream.max_text_bytes in the config if such long output is expected.",
  );
  assert(isRetryableError(err));
  assert(seen.signal?.aborted, "the provider's request is aborted");
  assertEquals(produced, 11_000);
});

Deno.test("stream guard: thinking and one call's arguments have their own limits", async () => {
  const thinking = guardProvider(
    fakeProvider(async function* () {
      yield { type: "text", text: "short" };
      for (;;) yield { type: "think", think: "é".repeat(512), encrypted: null };
    }),
    limits({ maxThinkingBytes: 4096 }),
  );
  const e1 = await rejection(generate(thinking, REQUEST));
  assert(e1 instanceof APIStreamLimitError);
  assertEquals(e1.part, "thinking");
  assertMatch(e1.message, /its thinking passed 4 KiB\. Raise model_stream\.max_thinking_bytes/);

  const args = guardProvider(
    fakeProvider(async function* () {
      yield {
        type: "function",
        id: "c1",
        function: { name: "Shell", arguments: '{"command": "' },
        extras: null,
      };
      for (;;) yield { arguments_part: "z".repeat(1000) };
    }),
    limits({ maxToolArgumentsBytes: 1024 * 1024 }),
  );
  const e2 = await rejection(generate(args, REQUEST));
  assert(e2 instanceof APIStreamLimitError);
  assertEquals(e2.part, "tool_arguments");
  assertMatch(
    e2.message,
    /tool-call arguments passed 1 MiB\. Raise model_stream\.max_tool_arguments_bytes/,
  );
});

Deno.test("stream guard: a stalled stream fails as a retryable timeout even if the provider ignores its signal", async () => {
  const seen: { signal?: AbortSignal } = {};
  const provider = guardProvider(
    fakeProvider(async function* () {
      yield { type: "text", text: "partial" };
      await never(); // ignores the signal on purpose
    }, seen),
    limits({ stallTimeoutMs: 50 }),
  );
  const err = await rejection(generate(provider, REQUEST));
  assert(err instanceof APITimeoutError);
  assertEquals(
    err.message,
    "The model stream stalled: no data for 50 ms (model_stream.stall_timeout_s).",
  );
  assert(isRetryableError(err));
  assert(seen.signal?.aborted);
});

Deno.test("stream guard: waiting for the response headers counts as a stall too", async () => {
  const provider = guardProvider(
    fakeProvider(
      async function* () {
        yield { type: "text", text: "never seen" };
      },
      {},
      never,
    ),
    limits({ stallTimeoutMs: 2000 }),
  );
  const err = await rejection(generate(provider, REQUEST));
  assert(err instanceof APITimeoutError);
  assertMatch(err.message, /no data for 2 s/);
});

Deno.test("stream guard: a slow consumer (backpressure) is not a stall", async () => {
  const provider = guardProvider(
    fakeProvider(async function* () {
      for (let i = 0; i < 4; i++) yield { type: "text", text: `${i}` };
    }),
    limits({ stallTimeoutMs: 30 }),
  );
  const result = await generate(provider, REQUEST, {
    onPart: () => new Promise((r) => setTimeout(r, 80)),
  });
  assertEquals(result.message.content, [{ type: "text", text: "0123" }]);
  assertEquals(result.id, "fake-1");
});

Deno.test("stream guard: the stall clock restarts with every part (a long steady stream is no stall)", async () => {
  const provider = guardProvider(
    fakeProvider(async function* () {
      for (let i = 0; i < 15; i++) {
        await new Promise((r) => setTimeout(r, 20));
        yield { type: "text", text: `${i % 10}` };
      }
    }),
    limits({ stallTimeoutMs: 200 }),
  );
  const result = await generate(provider, REQUEST);
  assertEquals(result.message.content, [{ type: "text", text: "012345678901234" }]);
});

Deno.test("stream guard: the caller's abort ends a hung stream at once with the caller's reason", async () => {
  const ac = new AbortController();
  const provider = guardProvider(
    fakeProvider(async function* () {
      yield { type: "text", text: "partial" };
      await never();
    }),
    limits({ stallTimeoutMs: 600_000 }),
  );
  const reason = new Error("cancelled by the user");
  const pending = generate(provider, { ...REQUEST, signal: ac.signal }, {
    onPart: () => void setTimeout(() => ac.abort(reason), 10),
  });
  const err = await rejection(pending);
  assertEquals(err, reason);
});

Deno.test("stream guard: an HTML error page becomes its status and title", async () => {
  const page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>" +
    "<h1>Bad Gateway</h1>" + "<p>filler</p>".repeat(3000) + "</body></html>";
  const provider = guardProvider(
    fakeProvider(async function* () {}, {}, () => {
      throw new APIStatusError(502, `502 ${page}`);
    }),
    limits(),
  );
  const err = await rejection(generate(provider, REQUEST));
  assert(err instanceof APIStatusError);
  assertEquals(err.statusCode, 502);
  assertEquals(
    err.message,
    "HTTP 502: 502 Bad Gateway (an HTML error page, not an API response: the provider or a " +
      "proxy in front of it failed; retry later, or check the provider's base_url)",
  );
  assert(isRetryableError(err));
  // A short JSON-style message is passed through untouched.
  const plain = guardProvider(
    fakeProvider(async function* () {}, {}, () => {
      throw new APIStatusError(400, "400 Invalid request: bad tool schema");
    }),
    limits(),
  );
  const e2 = await rejection(generate(plain, REQUEST));
  assertEquals((e2 as Error).message, "400 Invalid request: bad tool schema");
});

Deno.test("stream limits: sized for the model's context unless configured", () => {
  assertEquals(streamLimitsFor(undefined, 100_000), {
    maxTextBytes: 1024 * 1024,
    maxThinkingBytes: 1024 * 1024,
    maxToolArgumentsBytes: 1024 * 1024,
    stallTimeoutMs: 120_000,
  });
  assertEquals(
    streamLimitsFor({
      max_text_bytes: 0,
      max_thinking_bytes: 5000,
      max_tool_arguments_bytes: 0,
      stall_timeout_s: 1.5,
    }, 262_144),
    {
      maxTextBytes: 2 * 1024 * 1024,
      maxThinkingBytes: 5000,
      maxToolArgumentsBytes: 2 * 1024 * 1024,
      stallTimeoutMs: 1500,
    },
  );
  assertEquals(utf8Length("aé€😀"), 1 + 2 + 3 + 4);
  assertEquals(utf8Length("x".repeat(10)), 10);
});

Deno.test("excerpts: escaped, short, binary detected, HTML summarized", () => {
  assertEquals(excerpt("a\u0000b\nc\ufffd"), "a\\u0000b\\nc\\ufffd");
  assertEquals(excerpt("x".repeat(500), 10), "xxxxxxxxxx…");
  assert(looksBinary("abc\u0000def"));
  assert(looksBinary("\ufffd".repeat(100) + "abc"));
  assert(!looksBinary("plain text with one \ufffd in it"));
  assertEquals(
    summarizeErrorBody("<html><body><h1>Service &amp; Co down</h1></body></html>"),
    "Service & Co down",
  );
  assertEquals(
    summarizeErrorBody("<html><body>\n\n  <p>first words</p>\n<p>second</p></body></html>"),
    "first words",
  );
  assertEquals(summarizeErrorBody("\n\nupstream exploded\nline two"), "upstream exploded");
});
