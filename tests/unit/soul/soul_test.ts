import * as z from "zod";
import { APIStatusError } from "../../../lib/llm/errors.ts";
import type { LLM } from "../../../lib/llm/provider.ts";
import { ApprovalRuntime, ApprovalState } from "../../../lib/soul/approval.ts";
import { Context } from "../../../lib/soul/context.ts";
import { MaxStepsReached, RunCancelled } from "../../../lib/soul/errors.ts";
import { runTurn } from "../../../lib/soul/run_turn.ts";
import { INTERRUPTED_BY_USER, KimiSoul } from "../../../lib/soul/soul.ts";
import { Toolset } from "../../../lib/soul/toolset.ts";
import { toolOk } from "../../../lib/tooling/result.ts";
import type { Tool } from "../../../lib/tooling/tool.ts";
import type { Wire } from "../../../lib/wire/channel.ts";
import type { WireMessage } from "../../../lib/wire/messages.ts";
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { fakeProvider, type FakeReply } from "../../helpers/fake_provider.ts";

const call = (id: string, name: string, args: unknown) => ({
  type: "function" as const,
  id,
  function: { name, arguments: JSON.stringify(args) },
  extras: null,
});

function sleepTool(log: string[]): Tool<{ ms: number; tag: string }> {
  return {
    name: "Sleep",
    description: "sleep",
    parameters: z.object({ ms: z.number(), tag: z.string() }),
    resolve: (p) => ({
      execute: async (ctx) => {
        log.push(`start ${p.tag}`);
        await new Promise<void>((res, rej) => {
          const t = setTimeout(res, p.ms);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(t);
            log.push(`killed ${p.tag}`);
            rej(ctx.signal.reason);
          });
        });
        log.push(`end ${p.tag}`);
        return toolOk({ output: `slept ${p.tag}` });
      },
    }),
  };
}

async function setup(replies: FakeReply[], opts: { maxSteps?: number } = {}) {
  const dir = await Deno.makeTempDir();
  const context = await Context.restore(`${dir}/context.jsonl`);
  await context.writeSystemPrompt("SYS");
  const toolset = new Toolset();
  const log: string[] = [];
  toolset.add(sleepTool(log));
  const provider = fakeProvider(replies);
  const llm: LLM = {
    provider,
    maxContextSize: 100000,
    capabilities: new Set(),
    modelAlias: "fake",
  };
  const soul = new KimiSoul({
    name: "",
    llm,
    context,
    toolset,
    approval: new ApprovalRuntime(new ApprovalState({ yolo: true })),
    loop: { maxStepsPerTurn: opts.maxSteps ?? 100, maxRetriesPerStep: 3 },
    isRoot: true,
  });
  return { dir, soul, log, provider, context };
}

function collect(msgs: WireMessage[]) {
  return (wire: Wire) => {
    const sub = wire.subscribe({ merge: true });
    return (async () => {
      for await (const m of sub) msgs.push(m);
    })();
  };
}

Deno.test("soul: tools start while streaming, run concurrently, results kept in call order", async () => {
  const { soul, log, context, dir } = await setup([
    {
      parts: [
        { type: "text", text: "working" },
        call("a", "Sleep", { ms: 80, tag: "a" }),
        call("b", "Sleep", { ms: 10, tag: "b" }),
        { type: "text", text: " more" },
      ],
      delayMs: 20,
    },
    { parts: [{ type: "text", text: "done" }] },
  ]);
  const msgs: WireMessage[] = [];
  const res = await runTurn(soul, "go", {
    ui: collect(msgs),
    signal: new AbortController().signal,
  });
  assertEquals(res.reason, "no_tool_calls");
  assertEquals(res.steps, 2);
  // b (10 ms) ends before a (80 ms): concurrency; a started before the stream ended.
  assertEquals(log.slice(0, 2), ["start a", "start b"]);
  assert(log.indexOf("end b") < log.indexOf("end a"));
  const types = msgs.map((m) => m.type);
  assertEquals(types[0], "TurnBegin");
  assertEquals(types[types.length - 1], "TurnEnd");
  const results = msgs.filter((m) => m.type === "ToolResult").map((m) =>
    (m.payload as { tool_call_id: string }).tool_call_id
  );
  assertEquals(results, ["b", "a"]);
  const roles = context.history.map((m) =>
    `${m.role}${m.tool_call_id ? ":" + m.tool_call_id : ""}`
  );
  assertEquals(roles, ["user", "assistant", "tool:a", "tool:b", "assistant"]);
  const lines = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n").map((l) =>
    JSON.parse(l).role
  );
  assertEquals(lines, [
    "_system_prompt",
    "_checkpoint",
    "user",
    "_checkpoint",
    "assistant",
    "tool",
    "tool",
    "_checkpoint",
    "assistant",
  ]);
});

Deno.test("soul: retryable errors emit StepRetry and succeed", async () => {
  const { soul } = await setup([
    { error: new APIStatusError(429, "slow down") },
    { parts: [{ type: "text", text: "ok" }] },
  ]);
  const msgs: WireMessage[] = [];
  await runTurn(soul, "hi", { ui: collect(msgs), signal: new AbortController().signal });
  const retry = msgs.find((m) => m.type === "StepRetry");
  assert(retry);
  const p = retry.payload as Record<string, unknown>;
  assertEquals([p.n, p.next_attempt, p.max_attempts, p.error_type, p.status_code], [
    1,
    2,
    3,
    "APIStatusError",
    429,
  ]);
});

Deno.test("soul: max steps raises before the next StepBegin and TurnEnd is still sent", async () => {
  const { soul } = await setup([
    { parts: [call("a", "Sleep", { ms: 1, tag: "a" })] },
    { parts: [call("b", "Sleep", { ms: 1, tag: "b" })] },
  ], { maxSteps: 1 });
  const msgs: WireMessage[] = [];
  await assertRejects(
    () => runTurn(soul, "hi", { ui: collect(msgs), signal: new AbortController().signal }),
    MaxStepsReached,
  );
  assertEquals(msgs.filter((m) => m.type === "StepBegin").length, 1);
  assertEquals(msgs[msgs.length - 1].type, "TurnEnd");
});

Deno.test("soul: cancel kills running tools, keeps context clean (the prompt, then the interruption marker), emits TurnEnd", async () => {
  const { soul, log, context } = await setup([
    { parts: [call("a", "Sleep", { ms: 5000, tag: "a" })] },
  ]);
  const msgs: WireMessage[] = [];
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  await assertRejects(
    () => runTurn(soul, "hi", { ui: collect(msgs), signal: ac.signal }),
    RunCancelled,
  );
  assertEquals(log, ["start a", "killed a"]);
  assertEquals(msgs[msgs.length - 1].type, "TurnEnd");
  assert(!msgs.some((m) => m.type === "StepInterrupted"));
  assertEquals(context.history.map((m) => m.role), ["user", "user"]);
  assertEquals(context.history[1].content, [{ type: "text", text: INTERRUPTED_BY_USER }]);
});

Deno.test("soul: unknown tool and bad JSON get the reference messages", async () => {
  const { soul, context } = await setup([
    {
      parts: [
        call("a", "Nope", {}),
        { type: "function", id: "b", function: { name: "Sleep", arguments: "{bad" }, extras: null },
        call("c", "Sleep", { ms: "x", tag: "c" }),
      ],
    },
    { parts: [{ type: "text", text: "ok" }] },
  ]);
  await runTurn(soul, "hi", { ui: collect([]), signal: new AbortController().signal });
  const tools = context.history.filter((m) => m.role === "tool").map((m) =>
    m.content[0].type === "text" ? m.content[0].text : ""
  );
  assertEquals(tools[0], "<system>ERROR: Tool `Nope` not found</system>");
  assert(tools[1].startsWith("<system>ERROR: Error parsing JSON arguments: "));
  assert(tools[2].startsWith("<system>ERROR: Error validating JSON arguments: "));
});

Deno.test("soul: steer input is consumed after the step and continues the loop", async () => {
  const { soul, context } = await setup([
    { parts: [{ type: "text", text: "first" }], delayMs: 30 },
    { parts: [{ type: "text", text: "second" }] },
  ]);
  const msgs: WireMessage[] = [];
  const p = runTurn(soul, "hi", { ui: collect(msgs), signal: new AbortController().signal });
  setTimeout(() => soul.steer("also this"), 5);
  await p;
  assertEquals(context.history.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
  assert(msgs.some((m) => m.type === "SteerInput"));
});

Deno.test("soul: identical calls across steps get reminders and are force-stopped at 12", async () => {
  const replies = Array.from({ length: 13 }, (_, i) => ({
    parts: [call(`c${i}`, "Sleep", { ms: 0, tag: "same" })],
  }));
  const { soul, context } = await setup(replies);
  const res = await runTurn(soul, "loop", {
    ui: collect([]),
    signal: new AbortController().signal,
  });
  assertEquals(res.reason, "tool_call_repeat");
  assertEquals(res.steps, 12);
  const outputs = context.history.filter((m) => m.role === "tool").map((m) =>
    m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
  );
  assert(!outputs[1].includes("<system-reminder>"));
  assert(outputs[2].includes("You are repeating the exact same tool call"));
  assert(outputs[4].includes("5 times in a row"));
  assert(outputs[7].includes("Stop calling tools now"));
});

Deno.test("soul: the same call twice in one step runs once and shares the result", async () => {
  const { soul, log } = await setup([
    { parts: [call("a", "Sleep", { ms: 1, tag: "x" }), call("b", "Sleep", { tag: "x", ms: 1 })] },
    { parts: [{ type: "text", text: "ok" }] },
  ]);
  await runTurn(soul, "hi", { ui: collect([]), signal: new AbortController().signal });
  assertEquals(log, ["start x", "end x"]);
});
