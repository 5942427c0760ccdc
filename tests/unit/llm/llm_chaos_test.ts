import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  isRetryableError,
} from "../../../lib/llm/errors.ts";
import { chaosConfigFromEnv, createChaosProvider } from "../../../lib/llm/providers/chaos.ts";
import { createEchoProvider } from "../../../lib/llm/providers/echo.ts";
import type { ChatProvider, ChatRequest, StreamPart } from "../../../lib/llm/provider.ts";

const envOf = (vars: Record<string, string>) => (name: string) => vars[name];
const request = (script: string): ChatRequest => ({
  systemPrompt: "",
  tools: [],
  history: [{ role: "user", content: [{ type: "text", text: script }] }],
});

async function outcome(p: ChatProvider, script: string): Promise<string> {
  try {
    const s = await p.generate(request(script));
    const parts: StreamPart[] = [];
    for await (const x of s) parts.push(x);
    return "ok";
  } catch (err) {
    if (err instanceof APIStatusError) return String(err.statusCode);
    if (err instanceof APITimeoutError) return "timeout";
    if (err instanceof APIConnectionError) return "connection";
    throw err;
  }
}

Deno.test("chaos: config defaults and parsing", () => {
  assertEquals(chaosConfigFromEnv(envOf({})), {
    errorProbability: 0.8,
    errorTypes: [429, 500, 503],
    retryAfter: 2,
    seed: null,
    corruptToolCallProbability: 0.1,
  });
  assertEquals(
    chaosConfigFromEnv(envOf({
      CHAOS_ERROR_PROBABILITY: "0.25",
      CHAOS_ERROR_TYPES: "502, connection,TIMEOUT",
      CHAOS_RETRY_AFTER: "7",
      CHAOS_SEED: "42",
      CHAOS_CORRUPT_TOOL_CALL_PROBABILITY: "0",
    })),
    {
      errorProbability: 0.25,
      errorTypes: [502, "connection", "timeout"],
      retryAfter: 7,
      seed: 42,
      corruptToolCallProbability: 0,
    },
  );
  assertThrows(() => chaosConfigFromEnv(envOf({ CHAOS_ERROR_PROBABILITY: "lots" })), {
    message: "Invalid CHAOS_ERROR_PROBABILITY 'lots': expected a number between 0 and 1.",
  });
  assertThrows(() => chaosConfigFromEnv(envOf({ CHAOS_ERROR_TYPES: "429,oops" })), {
    message:
      "Invalid CHAOS_ERROR_TYPES entry 'oops': expected an HTTP status code, 'connection' or 'timeout'.",
  });
});

Deno.test("chaos: same seed, same failure sequence; injected errors are retryable", async () => {
  const env = envOf({ CHAOS_SEED: "7", CHAOS_ERROR_PROBABILITY: "0.5" });
  const run = async () => {
    const p = createChaosProvider(createEchoProvider(), { getEnv: env });
    const seq: string[] = [];
    for (let i = 0; i < 40; i++) seq.push(await outcome(p, "text: hi"));
    return seq;
  };
  const a = await run();
  assertEquals(await run(), a);
  assert(a.includes("ok"), "some calls succeed");
  assert(a.some((x) => ["429", "500", "503"].includes(x)), "some calls fail");
  assert(a.every((x) => ["ok", "429", "500", "503"].includes(x)));
});

Deno.test("chaos: probability 1 always fails with the configured kinds and messages", async () => {
  const p = createChaosProvider(createEchoProvider(), {
    getEnv: envOf({
      CHAOS_ERROR_PROBABILITY: "1",
      CHAOS_ERROR_TYPES: "429",
      CHAOS_RETRY_AFTER: "5",
    }),
  });
  try {
    await p.generate(request("text: hi"));
    throw new Error("expected a failure");
  } catch (err) {
    assert(err instanceof APIStatusError);
    assertEquals([err.statusCode, err.message], [429, "429 Rate limit exceeded"]);
    assertEquals((err as unknown as { retryAfter: number }).retryAfter, 5);
    assert(isRetryableError(err));
  }
  const c = createChaosProvider(createEchoProvider(), {
    getEnv: envOf({ CHAOS_ERROR_PROBABILITY: "1", CHAOS_ERROR_TYPES: "connection,timeout" }),
  });
  const kinds = new Set<string>();
  for (let i = 0; i < 30; i++) kinds.add(await outcome(c, "text: hi"));
  assertEquals([...kinds].sort(), ["connection", "timeout"]);
});

Deno.test("chaos: names, thinking and pass-through when disabled", async () => {
  const off = createChaosProvider(createEchoProvider(), {
    getEnv: envOf({ CHAOS_ERROR_PROBABILITY: "0", CHAOS_CORRUPT_TOOL_CALL_PROBABILITY: "0" }),
  });
  assertEquals([off.name, off.modelName], ["echo", "echo"]);
  const s = await off.generate(request("id: m\nusage: output=2\ntext: hi"));
  const parts: StreamPart[] = [];
  for await (const x of s) parts.push(x);
  assertEquals(parts, [{ type: "text", text: "hi" }]);
  assertEquals([s.id, s.usage?.output], ["m", 2]);

  const on = createChaosProvider(createEchoProvider(), { getEnv: envOf({}) });
  assertEquals(on.modelName, "chaos(echo)");
  assertEquals(on.withThinking("high").modelName, "chaos(echo)");
});

Deno.test("chaos: corruption drops the closing brace of tool-call arguments", async () => {
  const p = createChaosProvider(createEchoProvider(), {
    getEnv: envOf({ CHAOS_ERROR_PROBABILITY: "0", CHAOS_CORRUPT_TOOL_CALL_PROBABILITY: "1" }),
  });
  const script = [
    "text: keep}",
    'tool_call: {"id": "c1", "name": "f", "arguments": "{\\"a\\": 1}"}',
    'tool_call: {"id": "c2", "name": "g", "arguments": "{\\"b\\""}',
    "tool_call_part: : 2}",
  ].join("\n");
  const s = await p.generate(request(script));
  const parts: StreamPart[] = [];
  for await (const x of s) parts.push(x);
  assertEquals(parts, [
    { type: "text", text: "keep}" },
    { type: "function", id: "c1", function: { name: "f", arguments: '{"a": 1' }, extras: null },
    { type: "function", id: "c2", function: { name: "g", arguments: '{"b"' }, extras: null },
    { arguments_part: ": 2" },
  ]);
});
