/**
 * The swarm registry with a fake item runner: bounded concurrency, one result per item in
 * order, failures isolated, cancel settling everything, request validation.
 */
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { swarmPrompts, SwarmRegistry } from "../../../lib/subagents/swarm.ts";
import type {
  AgentRunContext,
  AgentRunRequest,
  ForegroundRunResult,
  SwarmRequest,
} from "../../../lib/tooling/subagent_service.ts";
import type { WireMessage } from "../../../lib/wire/messages.ts";

const request = (n: number, over: Partial<SwarmRequest> = {}): SwarmRequest => ({
  description: "test swarm",
  promptTemplate: "Do {{item}} now",
  items: Array.from({ length: n }, (_, i) => `i${i + 1}`),
  subagentType: "coder",
  concurrency: 3,
  ...over,
});

function registry(
  run: (req: AgentRunRequest, ctx: AgentRunContext) => Promise<ForegroundRunResult>,
) {
  const events: WireMessage[] = [];
  const reg = new SwarmRegistry({
    runItem: run,
    hasType: (t) => t === "coder",
    emit: (m) => events.push(m),
    defaultConcurrency: 8,
  });
  return { reg, events };
}

Deno.test("swarm: at most `concurrency` items run at once; results in item order; a failure stays local", async () => {
  let inFlight = 0;
  let peak = 0;
  const prompts: string[] = [];
  const { reg, events } = registry(async (req, ctx) => {
    prompts.push(req.prompt);
    inFlight++;
    peak = Math.max(peak, inFlight);
    const id = `a${req.prompt.split(" ")[1]}`;
    ctx.onStarted?.(id);
    await new Promise((r) => setTimeout(r, Math.random() * 5));
    inFlight--;
    if (req.prompt.includes("i5 ")) throw new Error("boom");
    if (req.prompt.includes("i7 ")) return { status: "error", message: "bad item", brief: "x" };
    return {
      status: "completed",
      agentId: id,
      actualType: "coder",
      resumed: false,
      summary: `done ${req.prompt}`,
    };
  });
  const run = await reg.run(request(20), {
    toolCallId: "tc",
    signal: new AbortController().signal,
  });
  assert(!("status" in run));
  assertEquals(peak, 3);
  assertEquals(run.concurrency, 3);
  assertEquals(run.results.map((r) => r.index), Array.from({ length: 20 }, (_, i) => i + 1));
  assertEquals(run.results.filter((r) => r.status === "ok").length, 18);
  assertStringIncludes(run.results[4].output, "Failed to run agent: boom");
  assertEquals(run.results[4].agentId, "ai5");
  assertEquals(run.results[6].output, "bad item");
  assertEquals(run.results[0].output, "done Do i1 now");
  assertEquals(new Set(prompts).size, 20);
  const last = events.at(-1) as { payload: { done: boolean; counts: unknown } };
  assertEquals(last.payload.done, true);
  assertEquals(last.payload.counts, { pending: 0, running: 0, ok: 18, error: 2, cancelled: 0 });
  assertEquals(reg.snapshots()[0].items.length, 20);
});

Deno.test("swarm: cancel settles running and pending items at once and starts nothing more", async () => {
  const ac = new AbortController();
  let started = 0;
  const { reg, events } = registry((_req, ctx) => {
    started++;
    if (started === 4) queueMicrotask(() => ac.abort());
    return new Promise((resolve) =>
      ctx.signal.addEventListener("abort", () => resolve({ status: "cancelled" }), { once: true })
    );
  });
  const run = await reg.run(request(10, { concurrency: 4 }), {
    toolCallId: "tc",
    signal: ac.signal,
  });
  assert(!("status" in run));
  assertEquals(started, 4);
  assertEquals(run.results.filter((r) => r.output === "Cancelled while running.").length, 4);
  assertEquals(
    run.results.filter((r) => r.output === "Not started: the swarm was cancelled.").length,
    6,
  );
  assert(run.results.every((r) => r.status === "cancelled"));
  const done = events.filter((e) => (e.payload as { done: boolean }).done);
  assertEquals(done.length, 1);
});

Deno.test("swarm: requests are validated before anything runs", async () => {
  const { reg } = registry(() => {
    throw new Error("must not run");
  });
  const sig = new AbortController().signal;
  const bad = async (req: SwarmRequest) => {
    const r = await reg.run(req, { toolCallId: "tc", signal: sig });
    assert("status" in r && r.status === "error");
    return r.message;
  };
  assertStringIncludes(await bad(request(2, { promptTemplate: "no placeholder" })), "{{item}}");
  assertStringIncludes(await bad(request(129)), "at most 128 items; got 129");
  assertStringIncludes(await bad(request(0)), "at least one item");
  assertStringIncludes(
    await bad(request(2, { items: ["a", " a "] })),
    "Items 1 and 2 are the same",
  );
  assertStringIncludes(await bad(request(2, { subagentType: "nope" })), "Unknown subagent type");
  assertEquals(swarmPrompts(request(2)), ["Do i1 now", "Do i2 now"]);
});

Deno.test("swarm: concurrency defaults from config and never exceeds the items or 128", async () => {
  let peak = 0;
  let inFlight = 0;
  const { reg } = registry(async (req) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, 1));
    inFlight--;
    return {
      status: "completed",
      agentId: "a",
      actualType: "coder",
      resumed: false,
      summary: req.prompt,
    };
  });
  const sig = new AbortController().signal;
  const r1 = await reg.run(request(20, { concurrency: null }), { toolCallId: "t", signal: sig });
  assert(!("status" in r1));
  assertEquals(r1.concurrency, 8);
  assertEquals(peak, 8);
  const r2 = await reg.run(request(5, { concurrency: 500 }), { toolCallId: "t", signal: sig });
  assert(!("status" in r2));
  assertEquals(r2.concurrency, 5);
});

Deno.test("swarm: swarms running side by side share the 128-subagent ceiling", async () => {
  let inFlight = 0;
  let peak = 0;
  const { reg } = registry(async (req) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, 2));
    inFlight--;
    return {
      status: "completed",
      agentId: "a",
      actualType: "coder",
      resumed: false,
      summary: req.prompt,
    };
  });
  const sig = new AbortController().signal;
  const runs = await Promise.all(
    [0, 1, 2].map((n) =>
      reg.run(
        request(100, {
          concurrency: 100,
          items: Array.from({ length: 100 }, (_, i) => `${n}-${i}`),
        }),
        { toolCallId: `t${n}`, signal: sig },
      )
    ),
  );
  assertEquals(peak, 128);
  for (const r of runs) {
    assert(!("status" in r));
    assertEquals(r.results.filter((x) => x.status === "ok").length, 100);
  }
});
