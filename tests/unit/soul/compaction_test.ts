import type { NormalizedMessage } from "../../../lib/llm/message.ts";
import { COMPACT_PROMPT, compactionRequest, planCompaction } from "../../../lib/soul/compaction.ts";
import { assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { kimiSandbox } from "../../helpers/kimi_process.ts";

const msg = (role: NormalizedMessage["role"], text: string, extra = {}): NormalizedMessage => ({
  role,
  content: [{ type: "text", text }],
  ...extra,
});

Deno.test("planCompaction keeps the last two user/assistant messages and their tool results", () => {
  const h = [
    msg("user", "u1"),
    msg("assistant", "a1"),
    msg("user", "u2"),
    msg("assistant", "a2", { tool_calls: [] }),
    msg("tool", "t2", { tool_call_id: "x" }),
  ];
  const p = planCompaction(h);
  assertEquals(p.toCompact.map((m) => m.content[0]), h.slice(0, 2).map((m) => m.content[0]));
  assertEquals(p.preserved.length, 3);
  assertEquals(planCompaction(h.slice(0, 2)).toCompact, []);
});

Deno.test("compactionRequest: numbered messages, text parts only, prompt and custom instruction", () => {
  const req = compactionRequest([
    msg("user", "hello"),
    {
      role: "assistant",
      content: [{ type: "think", think: "x", encrypted: null }, { type: "text", text: "hi" }],
    },
  ], "keep the API names");
  assertEquals(req.content.slice(0, 4), [
    { type: "text", text: "## Message 1\nRole: user\nContent:\n" },
    { type: "text", text: "hello" },
    { type: "text", text: "## Message 2\nRole: assistant\nContent:\n" },
    { type: "text", text: "hi" },
  ]);
  const tail = req.content[4];
  assertEquals(tail.type === "text" && tail.text.startsWith("\n" + COMPACT_PROMPT), true);
  assertStringIncludes(tail.type === "text" ? tail.text : "", "keep the API names");
});

const wireTypes = async (dir: string) =>
  (await Deno.readTextFile(`${dir}/wire.jsonl`)).trim().split("\n").slice(1).map((l) =>
    JSON.parse(l).message
  );
const ctxRecords = async (dir: string) =>
  (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));

Deno.test("/compact on one exchange rewrites the context without a model call", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: hello there"]);
    await sb.run(["--print", "--config-file", config, "-p", "hi"]);
    const r = await sb.run(["--print", "--continue", "--config-file", config, "-p", "/compact"]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const [dir] = await sb.sessionDirs();
    const wire = await wireTypes(dir);
    assertEquals(wire.slice(5).map((m) => m.type), [
      "TurnBegin",
      "CompactionBegin",
      "CompactionEnd",
      "ContentPart",
      "StatusUpdate",
      "TurnEnd",
    ]);
    assertEquals(wire[8].payload.text, "The context has been compacted.");
    const ctx = await ctxRecords(dir);
    // What the reference counts after a compaction: the compacted context ("hi", "hello
    // there": 13 characters, 3 tokens), not the system prompt or the tool schemas.
    assertEquals(wire[9].payload.context_tokens, 3);
    assertEquals(wire[9].payload.max_context_tokens > 0, true);
    assertEquals(
      wire[9].payload.context_usage,
      3 / wire[9].payload.max_context_tokens,
    );
    assertEquals(ctx.map((c) => c.role), [
      "_system_prompt",
      "_checkpoint",
      "user",
      "assistant",
      "_usage",
    ]);
    assertEquals([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
      "context.jsonl",
      "context_1.jsonl",
      "state.json",
      "wire.jsonl",
    ]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("/compact on a longer history summarises the older part and keeps the todo list", async () => {
  const sb = await kimiSandbox();
  try {
    const c1 = await sb.scriptedConfig([
      'tool_call: {"id": "t1", "name": "SetTodoList", "arguments": "{\\"todos\\": [{\\"title\\": \\"ship it\\", \\"status\\": \\"in_progress\\"}]}"}',
      "text: first answer",
    ]);
    const c2 = await sb.scriptedConfig(["text: second answer"]);
    const c3 = await sb.scriptedConfig([
      "usage: input_other=50 output=7\ntext: <current_focus>shipping</current_focus>",
    ]);
    await sb.run(["--print", "--config-file", c1, "-p", "one"]);
    await sb.run(["--print", "--continue", "--config-file", c2, "-p", "two"]);
    const r = await sb.run([
      "--print",
      "--continue",
      "--config-file",
      c3,
      "-p",
      "/compact focus on shipping",
    ]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const [dir] = await sb.sessionDirs();
    const ctx = await ctxRecords(dir);
    assertEquals(ctx.map((c) => c.role), [
      "_system_prompt",
      "_checkpoint",
      "user",
      "user",
      "assistant",
      "_usage",
    ]);
    const summary = ctx[2].content.map((p: { text: string }) => p.text).join("");
    assertStringIncludes(summary, "Previous context has been compacted.");
    assertStringIncludes(summary, "<current_focus>shipping</current_focus>");
    assertStringIncludes(summary, "[in_progress] ship it");
    assertEquals(ctx[3].content, "two");
    assertEquals(
      ctx[5].token_count,
      // the summary's output tokens and the preserved messages, as the reference counts
      7 + Math.floor("twosecond answer".length / 4),
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("automatic compaction when the context no longer leaves the reserved room", async () => {
  const sb = await kimiSandbox();
  try {
    const small = async (scripts: string[]) => {
      const path = await sb.scriptedConfig(scripts, {
        loop_control: { reserved_context_size: 1000 },
      });
      const cfg = JSON.parse(await Deno.readTextFile(path));
      cfg.models.scripted.max_context_size = 2000;
      await Deno.writeTextFile(path, JSON.stringify(cfg));
      return path;
    };
    const c1 = await small(["usage: input_other=1500 output=10\ntext: a long first answer"]);
    const c2 = await small(["text: SUMMARY", "text: second"]);
    await sb.run(["--print", "--config-file", c1, "-p", "one"]);
    const r = await sb.run(["--print", "--continue", "--config-file", c2, "-p", "two"]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const [dir] = await sb.sessionDirs();
    const types = (await wireTypes(dir)).map((m) => m.type);
    const second = types.slice(types.lastIndexOf("TurnBegin"));
    assertEquals(second, [
      "TurnBegin",
      "StepBegin",
      "CompactionBegin",
      "CompactionEnd",
      "ContentPart",
      "StatusUpdate",
      "TurnEnd",
    ]);
    const ctx = await ctxRecords(dir);
    assertEquals(ctx.map((c) => c.role), [
      "_system_prompt",
      "_checkpoint",
      "user",
      "assistant",
      "user",
      "_usage",
      "_checkpoint",
      "assistant",
    ]);
    assertStringIncludes(JSON.stringify(ctx[2].content), "SUMMARY");
    assertEquals(ctx[7].content, "second");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("a prompt-too-long error compacts the context and retries the step once", async () => {
  const sb = await kimiSandbox();
  try {
    const c1 = await sb.scriptedConfig(["text: first answer"]);
    const c2 = await sb.scriptedConfig(["text: second answer"]);
    const c3 = await sb.scriptedConfig([
      "error: 400 This model's maximum context length is 8192 tokens; your prompt is too long",
      "text: SUMMARY OF EARLIER WORK",
      "text: third answer",
    ]);
    await sb.run(["--print", "--config-file", c1, "-p", "one"]);
    await sb.run(["--print", "--continue", "--config-file", c2, "-p", "two"]);
    const r = await sb.run([
      "--print",
      "--quiet",
      "--continue",
      "--config-file",
      c3,
      "-p",
      "three",
    ]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(r.stdout, "third answer\n");
    const [dir] = await sb.sessionDirs();
    const types = (await wireTypes(dir)).map((m) => m.type);
    const third = types.slice(types.lastIndexOf("TurnBegin"));
    assertEquals(third.slice(0, 4), ["TurnBegin", "StepBegin", "CompactionBegin", "CompactionEnd"]);
    const ctx = await ctxRecords(dir);
    assertStringIncludes(JSON.stringify(ctx[2].content), "SUMMARY OF EARLIER WORK");
    assertEquals(ctx[ctx.length - 1], { role: "assistant", content: "third answer" });
  } finally {
    await sb.cleanup();
  }
});
