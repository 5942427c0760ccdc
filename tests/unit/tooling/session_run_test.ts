import { ControlPathSet } from "../../../lib/tooling/control_paths.ts";
import { rejectionOf, toolError, toolRejected } from "../../../lib/tooling/result.ts";
import { isToolRuntimeError, Toolset } from "../../../lib/soul/toolset.ts";
import * as z from "zod";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeSessionRun } from "../../helpers/tool_env.ts";

Deno.test("session run: two sessions' output feeds, control paths and task managers are separate", async () => {
  const root = await Deno.makeTempDir({ prefix: "kimi-session-run-" });
  try {
    const cfg = { path: `${root}/a.toml`, kind: "file" as const, what: "A's config", secret: true };
    const a = makeSessionRun({
      shareDir: `${root}/share`,
      sessionDir: `${root}/sa`,
      controls: { cli: [cfg] },
    });
    const b = makeSessionRun({ shareDir: `${root}/share`, sessionDir: `${root}/sb` });
    const seen: string[] = [];
    a.toolOutput.subscribe((id, line) => seen.push(`a ${id} ${line}`));
    const stop = b.toolOutput.subscribe((id, line) => seen.push(`b ${id} ${line}`));
    a.toolOutput.publish("c1", "one");
    b.toolOutput.publish("c2", "two");
    stop();
    b.toolOutput.publish("c3", "three");
    assertEquals(seen, ["a c1 one", "b c2 two"]);

    assert(a.controlPaths.list().some((c) => c.path === cfg.path));
    assert(!b.controlPaths.list().some((c) => c.path === cfg.path));
    // Registering again replaces what the source registered before.
    a.controlPaths.register("cli", []);
    assert(!a.controlPaths.list().some((c) => c.path === cfg.path));

    const task = await a.tasks.start({
      command: "sleep 30",
      description: "a-task",
      cwd: root,
      env: { PATH: "/usr/bin:/bin" },
      wrapper: a.commands,
    });
    assertEquals((await a.tasks.list({ activeOnly: false })).map((t) => t.id), [task.id]);
    assertEquals(await b.tasks.list({ activeOnly: false }), []);
    // Ending one session stops its tasks only.
    assertEquals(await b.tasks.stopAll(), []);
    assertEquals(await a.tasks.stopAll(), [task.id]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("control path set: the share dir's entries and itself are always listed", () => {
  const list = new ControlPathSet("/s").list();
  assertEquals(list.at(-1)?.path, "/s");
  assert(list.some((c) => c.path === "/s/config.toml" && c.secret));
});

Deno.test("result marks: a rejection or runtime error is a field of the value, never serialized", async () => {
  const rejected = toolRejected("no");
  assertEquals(rejectionOf(rejected), { feedback: "no" });
  assertEquals(rejectionOf(toolError({ message: "x" })), undefined);
  // The mark is not part of the wire form: JSON and a copy drop it, equality ignores it.
  assertEquals(JSON.parse(JSON.stringify(rejected)), { ...rejected });
  assertEquals(rejectionOf({ ...rejected }), undefined);
  assertEquals(rejected, toolError({ message: rejected.message, brief: "Rejected: no" }));

  const toolset = new Toolset();
  toolset.add({
    name: "Boom",
    description: "throws",
    parameters: z.object({}),
    resolve: () => ({ execute: () => Promise.reject(new Error("kaboom")) }),
  });
  const ctx = {
    toolCallId: "t",
    signal: new AbortController().signal,
    requestApproval: () => Promise.resolve({ approved: true as const }),
  };
  const call = {
    type: "function" as const,
    id: "t",
    function: { name: "Boom", arguments: "{}" },
    extras: null,
  };
  toolset.beginStep();
  const rv = await toolset.call(call, ctx);
  assertEquals(rv.message, "Error running tool: kaboom");
  assert(isToolRuntimeError(rv));
  assert(!isToolRuntimeError(toolError({ message: "Error running tool: kaboom" })));
  assertEquals(Object.keys(rv).sort(), ["display", "extras", "is_error", "message", "output"]);
  // The repeat reminder copies the result and keeps the mark.
  toolset.endStep(true);
  toolset.beginStep();
  await toolset.call(call, ctx);
  toolset.endStep(true);
  toolset.beginStep();
  const third = await toolset.call(call, ctx);
  assert(typeof third.output === "string" && third.output.includes("system-reminder"));
  assert(isToolRuntimeError(third));
});
