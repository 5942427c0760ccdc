/**
 * Unit tests of the hook engine: matchers, the stdin JSON, exit code / stdout → verdict,
 * timeouts, HookTriggered/HookResolved, wire subscriptions.
 */
import { assert, assertEquals, assertMatch } from "../../helpers/assert.ts";
import {
  compileMatcher,
  HOOK_EVENTS,
  HookEngine,
  matcherMatches,
} from "../../../lib/hooks/engine.ts";
import { interpretHookOutput, runHookCommand } from "../../../lib/hooks/runner.ts";
import { toolOutputText } from "../../../lib/hooks/soul_hooks.ts";
import type { HookDef } from "../../../lib/config/schema.ts";
import type { PendingRequest, WireEvent } from "../../../lib/wire/messages.ts";

const PATH = Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin";

function hook(event: HookDef["event"], command: string, matcher = "", timeout = 30): HookDef {
  return { event, command, matcher, timeout };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kimi-hooks-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function engine(dir: string, hooks: HookDef[], events: WireEvent[] = []): HookEngine {
  return new HookEngine({
    hooks,
    cwd: dir,
    sessionId: "sess-1",
    childEnv: () => ({ PATH, HOOK_TEST_VAR: "visible" }),
    emit: (e) => events.push(e),
  });
}

Deno.test("matchers: empty matches all, regex search, invalid never matches, (?i)", () => {
  assert(matcherMatches("", "Shell"));
  assert(matcherMatches("Shell|WriteFile", "WriteFile"));
  assert(matcherMatches("ell", "Shell"), "search, not full match");
  assert(!matcherMatches("^ell", "Shell"));
  assert(!matcherMatches("(", "("), "invalid regex matches nothing");
  assert(matcherMatches("(?i)shell", "Shell"));
  assertEquals(compileMatcher("("), null);
});

Deno.test("the 13 supported events, in the reference's order", () => {
  assertEquals(HOOK_EVENTS.length, 13);
  assertEquals(HOOK_EVENTS[0], "PreToolUse");
  assertEquals(HOOK_EVENTS[12], "Notification");
  assert(!(HOOK_EVENTS as readonly string[]).includes("MessageDisplay"));
});

Deno.test("interpretHookOutput: exit 2 blocks with stderr, JSON deny blocks, else allow", () => {
  const b = interpretHookOutput(2, "ignored", "  no rm -rf here \n");
  assertEquals([b.action, b.reason], ["block", "no rm -rf here"]);
  const deny = interpretHookOutput(
    0,
    JSON.stringify({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "nope" },
    }),
    "",
  );
  assertEquals([deny.action, deny.reason], ["block", "nope"]);
  const allowJson = interpretHookOutput(
    0,
    JSON.stringify({ hookSpecificOutput: { permissionDecision: "allow" } }),
    "",
  );
  assertEquals(allowJson.action, "allow");
  assertEquals(interpretHookOutput(0, "plain text", "").action, "allow");
  assertEquals(interpretHookOutput(1, "", "some error").action, "allow");
  // a deny on stdout only counts with exit 0
  assertEquals(
    interpretHookOutput(
      1,
      JSON.stringify({ hookSpecificOutput: { permissionDecision: "deny" } }),
      "",
    )
      .action,
    "allow",
  );
});

Deno.test("runHookCommand: JSON on stdin, cwd, env, exit code 2 → block with stderr", async () => {
  await withDir(async (dir) => {
    const r = await runHookCommand(
      `cat > stdin.json; echo "reason: $HOOK_TEST_VAR" >&2; exit 2`,
      { hook_event_name: "PreToolUse", tool_input: { command: "rm -rf /" } },
      { timeoutS: 10, cwd: dir, env: { PATH, HOOK_TEST_VAR: "visible" } },
    );
    assertEquals(r.action, "block");
    assertEquals(r.reason, "reason: visible");
    assertEquals(r.exitCode, 2);
    const stdin = JSON.parse(await Deno.readTextFile(`${dir}/stdin.json`));
    assertEquals(stdin, { hook_event_name: "PreToolUse", tool_input: { command: "rm -rf /" } });
  });
});

Deno.test("runHookCommand: the environment is exactly the one given", async () => {
  await withDir(async (dir) => {
    const r = await runHookCommand(`echo "[$SECRET_KEY][$HOOK_TEST_VAR]"`, {}, {
      timeoutS: 10,
      cwd: dir,
      env: { PATH, HOOK_TEST_VAR: "x" },
    });
    assertEquals(r.stdout, "[][x]\n");
    assertEquals(r.action, "allow");
  });
});

Deno.test("runHookCommand: stdout deny JSON with exit 0 blocks", async () => {
  await withDir(async (dir) => {
    const out = JSON.stringify({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "denied!" },
    });
    const r = await runHookCommand(`cat >/dev/null; echo '${out}'`, {}, {
      timeoutS: 10,
      cwd: dir,
      env: { PATH },
    });
    assertEquals([r.action, r.reason], ["block", "denied!"]);
  });
});

Deno.test("runHookCommand: other exit codes and bad commands allow", async () => {
  await withDir(async (dir) => {
    const one = await runHookCommand(`echo oops >&2; exit 1`, {}, {
      timeoutS: 10,
      cwd: dir,
      env: { PATH },
    });
    assertEquals([one.action, one.exitCode], ["allow", 1]);
    const missing = await runHookCommand(`no-such-command-xyz`, {}, {
      timeoutS: 10,
      cwd: dir,
      env: { PATH },
    });
    assertEquals([missing.action, missing.exitCode], ["allow", 127]);
    const badCwd = await runHookCommand(`exit 2`, {}, {
      timeoutS: 10,
      cwd: `${dir}/does-not-exist`,
      env: { PATH },
    });
    assertEquals(badCwd.action, "allow");
  });
});

Deno.test("runHookCommand: a timeout kills the command and allows", async () => {
  await withDir(async (dir) => {
    const t0 = performance.now();
    const r = await runHookCommand(`sleep 20; exit 2`, {}, {
      timeoutS: 1,
      cwd: dir,
      env: { PATH },
    });
    const elapsed = performance.now() - t0;
    assertEquals([r.action, r.timedOut], ["allow", true]);
    assert(elapsed < 5000, `took ${elapsed} ms`);
  });
});

Deno.test("HookEngine.trigger: matcher selects hooks, base input fields, events emitted", async () => {
  await withDir(async (dir) => {
    const events: WireEvent[] = [];
    const e = engine(dir, [
      hook("PreToolUse", `cat > pre.json; echo "blocked by test" >&2; exit 2`, "^Shell$"),
      hook("PreToolUse", `touch other-ran`, "WriteFile"),
      hook("PostToolUse", `touch post-ran`),
    ], events);
    const v = await e.trigger("PreToolUse", {
      target: "Shell",
      input: { tool_name: "Shell", tool_input: { command: "rm -rf x" }, tool_call_id: "tc-1" },
    });
    assertEquals([v.action, v.reason], ["block", "blocked by test"]);
    assertEquals(JSON.parse(await Deno.readTextFile(`${dir}/pre.json`)), {
      hook_event_name: "PreToolUse",
      session_id: "sess-1",
      cwd: dir,
      tool_name: "Shell",
      tool_input: { command: "rm -rf x" },
      tool_call_id: "tc-1",
    });
    const exists = await Deno.stat(`${dir}/other-ran`).then(() => true, () => false);
    assert(!exists, "the WriteFile hook must not run for Shell");
    assertEquals(events.length, 2);
    assertEquals(events[0], {
      type: "HookTriggered",
      payload: { event: "PreToolUse", target: "Shell", hook_count: 1 },
    });
    assertEquals(events[1].type, "HookResolved");
    const resolved = events[1].payload as Record<string, unknown>;
    assertEquals(
      [resolved.event, resolved.target, resolved.action, resolved.reason],
      ["PreToolUse", "Shell", "block", "blocked by test"],
    );
    assert(typeof resolved.duration_ms === "number" && Number.isInteger(resolved.duration_ms));
  });
});

Deno.test("HookEngine.trigger: nothing matching → allow and no events; duplicates run once", async () => {
  await withDir(async (dir) => {
    const events: WireEvent[] = [];
    const e = engine(dir, [
      hook("Stop", `echo x >> count.txt`),
      hook("Stop", `echo x >> count.txt`),
    ], events);
    const none = await e.trigger("PreToolUse", { target: "Shell" });
    assertEquals([none.action, none.results.length, events.length], ["allow", 0, 0]);
    const v = await e.trigger("Stop");
    assertEquals(v.action, "allow");
    assertEquals(await Deno.readTextFile(`${dir}/count.txt`), "x\n");
    assertEquals((events[0].payload as Record<string, unknown>).hook_count, 1);
  });
});

Deno.test("HookEngine.trigger: one allowing and one blocking hook → block", async () => {
  await withDir(async (dir) => {
    const e = engine(dir, [
      hook("UserPromptSubmit", `exit 0`),
      hook("UserPromptSubmit", `echo "no secrets" >&2; exit 2`, "secret"),
    ]);
    assertEquals((await e.trigger("UserPromptSubmit", { target: "hello" })).action, "allow");
    const v = await e.trigger("UserPromptSubmit", { target: "my secret plan" });
    assertEquals([v.action, v.reason, v.results.length], ["block", "no secrets", 2]);
  });
});

Deno.test("HookEngine.trigger: a hook that times out allows (maxTimeoutS caps it)", async () => {
  await withDir(async (dir) => {
    const e = engine(dir, [hook("SessionEnd", `sleep 30; exit 2`, "", 600)]);
    const t0 = performance.now();
    const v = await e.trigger("SessionEnd", { target: "exit", maxTimeoutS: 1 });
    assertEquals(v.action, "allow");
    assert(v.results[0].timedOut);
    assert(performance.now() - t0 < 5000);
  });
});

Deno.test("HookEngine: wire subscriptions send HookRequests and use the answer", async () => {
  await withDir(async (dir) => {
    const events: WireEvent[] = [];
    const e = engine(dir, [hook("PreToolUse", `exit 0`)], events);
    e.addWireSubscriptions([
      { id: "sub-1", event: "PreToolUse", matcher: "Shell", timeout: 5 },
      { id: "sub-x", event: "NoSuchEvent", matcher: "", timeout: 5 },
    ]);
    assertEquals(e.summary(), { PreToolUse: 2 });
    // without a sender, the subscription allows
    assertEquals((await e.trigger("PreToolUse", { target: "Shell" })).action, "allow");

    const sent: PendingRequest<"HookRequest">[] = [];
    e.setWireSender((req) => {
      sent.push(req);
      queueMicrotask(() =>
        req.resolve({ request_id: req.payload.id, action: "block", reason: "client says no" })
      );
    });
    events.length = 0;
    const v = await e.trigger("PreToolUse", {
      target: "Shell",
      input: { tool_name: "Shell", tool_input: {}, tool_call_id: "tc-9" },
    });
    assertEquals([v.action, v.reason], ["block", "client says no"]);
    assertEquals(sent.length, 1);
    const p = sent[0].payload;
    assertMatch(p.id, /^[0-9a-f]{12}$/);
    assertEquals([p.subscription_id, p.event, p.target], ["sub-1", "PreToolUse", "Shell"]);
    assertEquals(p.input_data.tool_call_id, "tc-9");
    assertEquals(p.input_data.hook_event_name, "PreToolUse");
    assertEquals((events[0].payload as Record<string, unknown>).hook_count, 2);

    // not matching the subscription's matcher: no request
    await e.trigger("PreToolUse", { target: "ReadFile" });
    assertEquals(sent.length, 1);
  });
});

Deno.test("HookEngine: an unanswered wire hook allows after its timeout", async () => {
  await withDir(async (dir) => {
    const e = engine(dir, []);
    e.addWireSubscriptions([{ id: "s", event: "Stop", timeout: 1 }]);
    let req: PendingRequest<"HookRequest"> | null = null;
    e.setWireSender((r) => (req = r));
    const t0 = performance.now();
    const v = await e.trigger("Stop");
    assertEquals(v.action, "allow");
    assert(v.results[0].timedOut);
    assert(performance.now() - t0 < 4000);
    assert(req !== null && (req as PendingRequest).settled, "the request is settled as allow");
  });
});

Deno.test("toolOutputText: string output, text parts, message fallback, 2000 char cap", () => {
  const base = { is_error: false, message: "msg", display: [], extras: null };
  assertEquals(toolOutputText({ ...base, output: "out" }), "out");
  assertEquals(
    toolOutputText({ ...base, output: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }),
    "ab",
  );
  assertEquals(toolOutputText({ ...base, output: "" }), "msg");
  assertEquals(toolOutputText({ ...base, output: "x".repeat(5000) }).length, 2000);
});
