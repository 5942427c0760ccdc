import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

Deno.test("openai path: streamed text, tool call, reasoning, usage and a retried 429", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  try {
    mock.enqueue(
      { status: 429, error: "slow down" },
      {
        reasoning: ["Let me ", "check."],
        text: ["Running ", "it."],
        toolCalls: [{ id: "call_1", name: "Shell", arguments: ['{"command":', ' "echo hi"}'] }],
        usage: { prompt_tokens: 120, completion_tokens: 8, cached_tokens: 20 },
        id: "chatcmpl-1",
      },
      { text: ["All ", "done."], usage: { prompt_tokens: 150, completion_tokens: 3 } },
    );
    const config = await sb.openaiConfig(mock.url, { capabilities: ["thinking"] });
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--thinking",
      "--config-file",
      config,
      "-p",
      "say hi",
    ]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(jsonLines(r.stdout), [
      {
        role: "assistant",
        content: [
          { type: "think", think: "Let me check.", encrypted: null },
          { type: "text", text: "Running it." },
        ],
        tool_calls: [{
          type: "function",
          id: "call_1",
          function: { name: "Shell", arguments: '{"command": "echo hi"}' },
        }],
      },
      {
        role: "tool",
        content: [
          { type: "text", text: "<system>Command executed successfully.</system>" },
          { type: "text", text: "hi\n" },
        ],
        tool_call_id: "call_1",
      },
      { role: "assistant", content: "All done." },
    ]);
    const chats = mock.requests.filter((q) => q.path === "/v1/chat/completions");
    assertEquals(chats.length, 3);
    const first = chats[0].body;
    assertEquals(first.model, "mock-model");
    assertEquals(first.stream, true);
    assertEquals(first.messages[0].role, "system");
    assert(first.tools.some((t: { function: { name: string } }) => t.function.name === "Shell"));
    assertStringIncludes(chats[0].headers["user-agent"], "KimiCLI/1.49.0");
    assertEquals(chats[0].headers["authorization"], "Bearer sk-test");
    const third = chats[2].body.messages;
    const toolMsg = third.find((m: { role: string }) => m.role === "tool");
    assertEquals(toolMsg.tool_call_id, "call_1");
    // Print mode runs afk: the request ends with the afk reminder after the tool result.
    assertEquals(third[third.length - 2].role, "tool");
    assertStringIncludes(third[third.length - 1].content, "<system-reminder>");

    const [dir] = await sb.sessionDirs();
    const wire = (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n").slice(1).map((
      l,
    ) => JSON.parse(l).message);
    const retry = wire.find((m) => m.type === "StepRetry");
    assertEquals(
      [
        retry.payload.n,
        retry.payload.next_attempt,
        retry.payload.error_type,
        retry.payload.status_code,
      ],
      [1, 2, "APIStatusError", 429],
    );
    const status = wire.filter((m) => m.type === "StatusUpdate").map((m) => m.payload);
    assertEquals(status[0].token_usage, {
      input_other: 100,
      output: 8,
      input_cache_read: 20,
      input_cache_creation: 0,
    });
    assertEquals(status[0].context_tokens, 120);
    assertEquals(status[0].message_id, "chatcmpl-1");
    const ctx = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assertEquals(ctx.filter((c) => c.role === "_usage").map((c) => c.token_count), [
      120,
      128,
      150,
      153,
    ]);
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("openai path: a persistent 500 ends with exit 75 after three attempts", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  try {
    mock.enqueue({ status: 500, error: "boom" }, { status: 500, error: "boom" }, {
      status: 500,
      error: "boom",
    });
    const config = await sb.openaiConfig(mock.url);
    const r = await sb.run(["--print", "--final-message-only", "--config-file", config, "-p", "x"]);
    assertEquals(r.code, 75, r.stdout + r.stderr);
    assertStringIncludes(r.stdout, "boom");
    assertEquals(mock.requests.filter((q) => q.path === "/v1/chat/completions").length, 3);
    assert(!r.stdout.includes("sk-test") && !r.stderr.includes("sk-test"));
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("no usable model: print mode says LLM not set and exits 1", async () => {
  const sb = await kimiSandbox();
  try {
    const r = await sb.run(["--print", "--output-format", "text", "-p", "hi"]);
    assertEquals(r.code, 1);
    assertEquals(r.stdout, "hi\nTurnBegin(user_input='hi')\nTurnEnd()\nLLM not set\n");
    const config = await sb.scriptedConfig(["text: x"]);
    const unknown = await sb.run([
      "--quiet",
      "--model",
      "nope",
      "--config-file",
      config,
      "-p",
      "hi",
    ]);
    assertEquals(unknown.code, 1);
    assertEquals(unknown.stdout, "LLM not set\n");
  } finally {
    await sb.cleanup();
  }
});
