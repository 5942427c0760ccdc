/**
 * The toolset's one pipeline and its scheduling: the order of the stages (a refused path never
 * reaches approval, a hook's block never reaches execution, approval comes before PreToolUse,
 * undo snapshots wrap execution), calls of one step that touch the same file run one after the
 * other in call order while independent reads overlap, and the bound on parallel calls.
 */
import { join } from "node:path";
import * as z from "zod";
import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";
import { loadConfigFromText } from "../../../lib/config/load.ts";
import { makeCallContext, makeToolEnv } from "../../helpers/tool_env.ts";
import { Toolset } from "../../../lib/soul/toolset.ts";
import {
  accessesConflict,
  DEFAULT_PARALLEL_TOOL_CALLS,
  ToolScheduler,
} from "../../../lib/soul/tool_scheduler.ts";
import { toolOk } from "../../../lib/tooling/result.ts";
import type { PermissionScope } from "../../../lib/tooling/scope.ts";
import type { ApprovalAsk, ApprovalOutcome, Tool, ToolAccess } from "../../../lib/tooling/tool.ts";
import { writeFileTool } from "../../../tools/write_file.ts";
import { strReplaceFileTool } from "../../../tools/str_replace_file.ts";

const call = (id: string, name: string, args: unknown) => ({
  type: "function" as const,
  id,
  function: { name, arguments: JSON.stringify(args) },
  extras: null,
});

/** Let every pending promise callback run (no wall-clock wait: one macrotask turn). */
const settle = () => new Promise<void>((r) => setTimeout(r, 0));

/** Wait, turn by turn, until `cond` holds (file I/O takes a few turns). */
async function waitFor(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 5_000 && !cond(); i++) await settle();
  assert(cond(), `never reached: ${what}`);
}

/** A scope that refuses writes under `denied`. */
function scopeDenyingWrites(denied: string): PermissionScope {
  return {
    check: (kind, target) =>
      kind === "write" && target !== undefined && target.startsWith(denied)
        ? { allowed: false, message: `Denied by the sandbox: this run may not write \`${target}\`` }
        : { allowed: true },
  };
}

/** A tool that records each stage it reaches into `log`. */
function recordingTool(log: string[], accesses: ToolAccess[]): Tool<{ n: number }> {
  return {
    name: "Rec",
    description: "records",
    parameters: z.object({ n: z.number() }),
    resolve: (p) => {
      log.push(`resolve ${p.n}`);
      return {
        accesses,
        approval: () => {
          log.push(`approval ${p.n}`);
          return { action: "rec", description: `rec ${p.n}`, display: [] };
        },
        execute: () => {
          log.push(`execute ${p.n}`);
          return Promise.resolve(toolOk({ output: `done ${p.n}` }));
        },
      };
    },
  };
}

function recordingToolset(log: string[], opts: { scope?: PermissionScope } = {}): Toolset {
  const toolset = new Toolset({
    scope: opts.scope,
    fileHistory: {
      beforeChange: (p) => {
        log.push(`before ${p}`);
        return Promise.resolve();
      },
      afterChange: (p) => {
        log.push(`after ${p}`);
        return Promise.resolve();
      },
    },
  });
  toolset.beforeCall = (c) => {
    log.push(`hook ${c.id}`);
    return Promise.resolve({ block: false });
  };
  toolset.afterCall = (c) => log.push(`post ${c.id}`);
  return toolset;
}

Deno.test("pipeline order: approval, PreToolUse, snapshot, execution, snapshot, PostToolUse", async () => {
  const log: string[] = [];
  const toolset = recordingToolset(log);
  toolset.add(recordingTool(log, [{ kind: "write", path: "/w/a.txt" }]));
  const ctx = makeCallContext({
    approve: (ask) => {
      log.push(`asked ${ask.description}`);
      return { approved: true };
    },
  });
  toolset.beginStep();
  const rv = await toolset.call(call("c1", "Rec", { n: 1 }), ctx);
  assertEquals(rv.output, "done 1");
  assertEquals(log, [
    "resolve 1",
    "approval 1",
    "asked rec 1",
    "hook c1",
    "before /w/a.txt",
    "execute 1",
    "after /w/a.txt",
    "post c1",
  ]);
});

Deno.test("a path the scope refuses never reaches approval, hooks, undo or execution", async () => {
  const log: string[] = [];
  // The tool's own resolution passes; the toolset's check of the declared write refuses it.
  const toolset = recordingToolset(log, { scope: scopeDenyingWrites("/denied") });
  toolset.add(recordingTool(log, [{ kind: "write", path: "/denied/x" }]));
  const ctx = makeCallContext();
  toolset.beginStep();
  const rv = await toolset.call(call("c1", "Rec", { n: 1 }), ctx);
  assertEquals([rv.is_error, rv.message], [
    true,
    "Denied by the sandbox: this run may not write `/denied/x`",
  ]);
  assertEquals(ctx.approvals, []);
  assertEquals(log, ["resolve 1"]);
});

Deno.test("WriteFile: a denied path is refused before any approval is asked", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const denied = join(dir, "locked");
    await Deno.mkdir(denied);
    const env = makeToolEnv({ workDir: dir, scope: scopeDenyingWrites(denied) });
    const log: string[] = [];
    const toolset = recordingToolset(log, { scope: env.scope });
    toolset.add((await writeFileTool(env))!);
    const ctx = makeCallContext();
    toolset.beginStep();
    const rv = await toolset.call(
      call("c1", "WriteFile", { path: join(denied, "a.txt"), content: "x" }),
      ctx,
    );
    assertEquals(rv.is_error, true);
    assert(rv.message.startsWith("Denied by the sandbox"), rv.message);
    assertEquals(ctx.approvals, []);
    assertEquals(log, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a PreToolUse block never reaches undo or execution, and no PostToolUse follows", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = makeToolEnv({ workDir: dir });
    await Deno.writeTextFile(join(dir, "a.txt"), "keep");
    const log: string[] = [];
    const toolset = recordingToolset(log);
    toolset.beforeCall = (c) => {
      log.push(`hook ${c.id}`);
      return Promise.resolve({ block: true, reason: "not today" });
    };
    toolset.add((await writeFileTool(env))!);
    toolset.add(recordingTool(log, [{ kind: "write", path: join(dir, "b.txt") }]));
    const ctx = makeCallContext();
    toolset.beginStep();
    const written = await toolset.call(
      call("c1", "WriteFile", { path: "a.txt", content: "x" }),
      ctx,
    );
    const recorded = await toolset.call(call("c2", "Rec", { n: 2 }), ctx);
    for (const rv of [written, recorded]) {
      assertEquals([rv.is_error, rv.message, rv.display], [true, "not today", [
        { type: "brief", text: "Hook blocked" },
      ]]);
    }
    // Both were approved first (the hook sees only calls that would run), then blocked.
    assertEquals(ctx.approvals.map((a) => a.action), ["edit file", "rec"]);
    assertEquals(log, ["hook c1", "resolve 2", "approval 2", "hook c2"]);
    assertEquals(await Deno.readTextFile(join(dir, "a.txt")), "keep");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a rejected call reaches neither hooks nor execution", async () => {
  const log: string[] = [];
  const toolset = recordingToolset(log);
  toolset.add(recordingTool(log, [{ kind: "write", path: "/w/a.txt" }]));
  toolset.beginStep();
  const rv = await toolset.call(
    call("c1", "Rec", { n: 1 }),
    makeCallContext({ approve: false }),
  );
  assertEquals(rv.is_error, true);
  assertEquals(log, ["resolve 1", "approval 1"]);
});

/** A call context whose approvals wait until the test answers them. */
function gatedContext() {
  const asks: { ask: ApprovalAsk; answer: (o: ApprovalOutcome) => void }[] = [];
  const ctx = makeCallContext({
    approve: (ask) => new Promise<ApprovalOutcome>((answer) => asks.push({ ask, answer })),
  });
  return { ctx, asks };
}

Deno.test("two edits of one file in one step run one after the other, in call order", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = makeToolEnv({ workDir: dir });
    await Deno.writeTextFile(join(dir, "f.txt"), "one\n");
    await Deno.symlink(join(dir, "f.txt"), join(dir, "alias.txt"));
    const toolset = new Toolset();
    toolset.add((await strReplaceFileTool(env))!);
    const { ctx, asks } = gatedContext();
    toolset.beginStep();
    const first = toolset.call(
      call("c1", "StrReplaceFile", { path: "f.txt", edit: { old: "one", new: "two" } }),
      ctx,
    );
    const second = toolset.call(
      // The same file under another name: calls are scheduled by the resolved real path.
      call("c2", "StrReplaceFile", { path: "alias.txt", edit: { old: "two", new: "3" } }),
      ctx,
    );
    await waitFor(() => asks.length >= 1, "the first approval");
    asks[0].answer({ approved: true });
    assertEquals(
      (await first).message,
      "File successfully edited. Applied 1 edit(s) with 1 total replacement(s).",
    );
    let secondDone = false;
    second.then(() => (secondDone = true));
    await waitFor(() => asks.length >= 2 || secondDone, "the second approval");
    // The second edit read the file only after the first was written: its diff starts there.
    assert(
      JSON.stringify(asks[1].ask.display).includes('"old_text":"two'),
      JSON.stringify(asks[1].ask.display),
    );
    asks[1].answer({ approved: true });
    assertEquals((await second).is_error, false);
    assertEquals(await Deno.readTextFile(join(dir, "f.txt")), "3\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two appends to one file in one step land in call order", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = makeToolEnv({ workDir: dir });
    const toolset = new Toolset();
    toolset.add((await writeFileTool(env))!);
    const { ctx, asks } = gatedContext();
    toolset.beginStep();
    const a = toolset.call(
      call("c1", "WriteFile", { path: "l.txt", content: "a", mode: "append" }),
      ctx,
    );
    const b = toolset.call(
      call("c2", "WriteFile", { path: "l.txt", content: "b", mode: "append" }),
      ctx,
    );
    await waitFor(() => asks.length >= 1, "the first approval");
    assertEquals(JSON.stringify(asks[0].ask.display).includes('"new_text":"a"'), true);
    asks[0].answer({ approved: true });
    await a;
    await waitFor(() => asks.length >= 2, "the second approval");
    // The second append was planned from the file the first one left.
    assert(
      JSON.stringify(asks[1].ask.display).includes('"old_text":"a","new_text":"ab"'),
      JSON.stringify(asks[1].ask.display),
    );
    asks[1].answer({ approved: true });
    await b;
    assertEquals(await Deno.readTextFile(join(dir, "l.txt")), "ab");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a write waits for the earlier call on its path before even its approval", async () => {
  const log: string[] = [];
  const toolset = new Toolset();
  const gates: (() => void)[] = [];
  toolset.add({
    name: "Gated",
    description: "waits in approval",
    parameters: z.object({ n: z.number(), path: z.string() }),
    resolve: (p) => ({
      accesses: [{ kind: "write", path: p.path }],
      approval: async () => {
        log.push(`approval ${p.n}`);
        await new Promise<void>((r) => gates.push(r));
        return null;
      },
      execute: () => {
        log.push(`execute ${p.n}`);
        return Promise.resolve(toolOk({ output: "" }));
      },
    }),
  });
  const ctx = makeCallContext();
  toolset.beginStep();
  const calls = [
    toolset.call(call("c1", "Gated", { n: 1, path: "/p" }), ctx),
    toolset.call(call("c2", "Gated", { n: 2, path: "/p" }), ctx),
    toolset.call(call("c3", "Gated", { n: 3, path: "/other" }), ctx),
  ];
  await settle();
  // Call 3 touches another path: it does not wait; call 2 waits for call 1.
  assertEquals(log, ["approval 1", "approval 3"]);
  gates.shift()!();
  await settle();
  assertEquals(log, ["approval 1", "approval 3", "execute 1", "approval 2"]);
  gates.shift()!();
  gates.shift()!();
  await Promise.all(calls);
  assertEquals(log.slice(4).sort(), ["execute 2", "execute 3"]);
});

Deno.test("scheduler: reads of one path overlap; a write waits for them and a later read for it", async () => {
  const s = new ToolScheduler(8);
  s.beginStep();
  const read = [{ kind: "read" as const, path: "/p" }];
  const write = [{ kind: "write" as const, path: "/p" }];
  const [t1, t2, t3, t4] = [s.enter(), s.enter(), s.enter(), s.enter()];
  const state: string[] = [];
  const r1 = await t1.acquire(read);
  const r2 = t2.acquire(read).then((r) => (state.push("read 2"), r));
  const w3 = t3.acquire(write).then((r) => (state.push("write 3"), r));
  const r4 = t4.acquire([{ kind: "read", path: "/p" }, { kind: "read", path: "/q" }])
    .then((r) => (state.push("read 4"), r));
  await settle();
  assertEquals(state, ["read 2"]);
  r1();
  await settle();
  assertEquals(state, ["read 2"]);
  (await r2)();
  await settle();
  assertEquals(state, ["read 2", "write 3"]);
  (await w3)();
  await settle();
  assertEquals(state, ["read 2", "write 3", "read 4"]);
  (await r4)();
});

Deno.test("scheduler: a skipped turn does not hold later calls; other paths never wait", async () => {
  const s = new ToolScheduler(8);
  s.beginStep();
  const [t1, t2, t3] = [s.enter(), s.enter(), s.enter()];
  let second = false;
  const p2 = t2.acquire([{ kind: "write", path: "/a" }]).then((r) => ((second = true), r));
  await settle();
  // The first call has not resolved its accesses yet: the second waits to know them.
  assertEquals(second, false);
  t1.skip();
  (await p2)();
  const r3 = await t3.acquire([{ kind: "write", path: "/b" }]);
  r3();
  assertEquals(
    accessesConflict([{ kind: "write", path: "/a" }], [{ kind: "read", path: "/b" }]),
    false,
  );
  assertEquals(
    accessesConflict([{ kind: "run", program: "bash", command: "x" }], [{
      kind: "write",
      path: "/a",
    }]),
    false,
  );
});

Deno.test("the toolset bounds how many calls of one step run at once", async () => {
  const toolset = new Toolset({ maxParallelCalls: 2 });
  assertEquals(toolset.maxParallelCalls, 2);
  let running = 0;
  let peak = 0;
  const gates: (() => void)[] = [];
  toolset.add({
    name: "Wait",
    description: "waits",
    parameters: z.object({ n: z.number() }),
    resolve: () => ({
      execute: async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((r) => gates.push(r));
        running--;
        return toolOk({ output: "" });
      },
    }),
  });
  const ctx = makeCallContext();
  toolset.beginStep();
  const calls = [1, 2, 3, 4, 5].map((n) => toolset.call(call(`c${n}`, "Wait", { n }), ctx));
  await settle();
  assertEquals([running, gates.length], [2, 2]);
  while (gates.length > 0 || running > 0) {
    gates.shift()?.();
    await settle();
    assert(running <= 2, `running ${running}`);
  }
  await Promise.all(calls);
  assertEquals(peak, 2);
});

Deno.test("call-style custom tools run through the same pipeline (hooks, errors)", async () => {
  const { fromCallStyle } = await import("../../../lib/tooling/call_style_tool.ts");
  const log: string[] = [];
  const toolset = recordingToolset(log);
  toolset.add(fromCallStyle({
    name: "Boom",
    description: "throws",
    parameters: z.object({}),
    call: () => Promise.reject(new Error("kaput")),
  }));
  toolset.beginStep();
  const rv = await toolset.call(call("c1", "Boom", {}), makeCallContext());
  assertEquals([rv.is_error, rv.message], [true, "Error running tool: kaput"]);
  assertEquals(log, ["hook c1", "post c1"]);
});

Deno.test("config: loop_control.max_parallel_tool_calls is optional, at least 1", () => {
  assertEquals(loadConfigFromText("{}").loop_control.max_parallel_tool_calls, undefined);
  assertEquals(
    loadConfigFromText('{"loop_control": {"max_parallel_tool_calls": 3}}').loop_control
      .max_parallel_tool_calls,
    3,
  );
  assertThrows(
    () => loadConfigFromText('{"loop_control": {"max_parallel_tool_calls": 0}}'),
    /loop_control\.max_parallel_tool_calls: must be greater than or equal to 1/,
  );
  assertEquals([new Toolset().maxParallelCalls, DEFAULT_PARALLEL_TOOL_CALLS], [16, 16]);
});

Deno.test("scheduler: a call that touches no path does not wait for earlier calls to resolve", async () => {
  const s = new ToolScheduler(8);
  s.beginStep();
  const [t1, t2] = [s.enter(), s.enter()];
  // t1 has not resolved its accesses (it may still be checking them); t2 runs a command only.
  let started = false;
  const p2 = t2.acquire([{ kind: "run", program: "bash", command: "true" }]).then((r) => {
    started = true;
    r();
  });
  await settle();
  assert(started, "the command call waited for an unrelated call");
  t1.skip();
  await p2;
});

Deno.test("a plugin tool that cannot be confined is refused before its approval is asked", async () => {
  const { pluginTool } = await import("../../../lib/plugins/tool.ts");
  let ran = false;
  const tool = pluginTool({
    plugin: "p",
    dir: "/nonexistent",
    spec: { name: "Echo", description: "d", command: ["echo"], parameters: {} },
    wrapper: () => {
      ran = true;
      throw new Error("must not run");
    },
    childEnv: () => ({}),
    injectEnv: () => Promise.resolve({}),
    reveal: [],
    isRoot: true,
    refusal: () => "Processes must run sandboxed and bubblewrap is missing.",
  });
  const log: string[] = [];
  const toolset = recordingToolset(log);
  toolset.add(tool);
  const ctx = makeCallContext();
  toolset.beginStep();
  const rv = await toolset.call(call("c1", "Echo", { a: 1 }), ctx);
  assertEquals([rv.is_error, rv.message], [
    true,
    "Processes must run sandboxed and bubblewrap is missing.",
  ]);
  assertEquals(ctx.approvals, []);
  assertEquals([log, ran], [[], false]);
});
