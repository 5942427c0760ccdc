/**
 * AgentSwarm end to end through `main.ts --wire` with `_scripted_echo`: 32 items with
 * concurrency 4. The parent and every item share the scripted queue of one process, so the
 * scripts are interchangeable item answers (which item gets which is up to the scheduler);
 * the tests assert per-item outcomes by count and by content.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";

const ITEMS = Array.from({ length: 32 }, (_, i) => `pkg-${String(i + 1).padStart(2, "0")}`);

/** A final answer long enough to need no summary continuation (>= 200 characters). */
function summary(n: number): string {
  return `text: SUMMARY-${n}: I reviewed the package assigned to me, checked its sources and ` +
    "its tests, found nothing that needs a change, verified the result twice, and left every " +
    "file exactly as it was, so there is nothing open for the parent agent to handle.";
}

function swarmCall(id: string, concurrency: number): string {
  return toolCallLine(id, "AgentSwarm", {
    description: "review packages",
    prompt_template: "Review the package {{item}} and report.",
    items: ITEMS,
    subagent_type: "coder",
    concurrency,
  });
}

const events = (lines: WireLine[]) =>
  lines.filter((l) => l.method === "event").map((l) => l.params as { type: string; payload: any });

Deno.test("wire: AgentSwarm of 32 items, concurrency 4: one result per item, a failing item and an approval inside one item", async () => {
  const sb = await kimiSandbox();
  try {
    const scripts = [
      swarmCall("tc-swarm", 4),
      // 32 first steps: 30 plain answers, one provider error, one file write needing approval.
      toolCallLine("tc-write", "WriteFile", { path: "approved.txt", content: "from a swarm item" }),
      "error: 400 item model refused",
      ...Array.from({ length: 30 }, (_, i) => summary(i + 1)),
      // The second step of the item that wrote the file.
      summary(31),
      "text: parent done",
    ];
    const config = await sb.scriptedConfig(scripts, {
      loop_control: { max_retries_per_step: 1 },
    });
    const wp = spawnWire(sb, ["--config-file", config]);
    await wp.call("init", "initialize", { protocol_version: "1.12" });
    const approvals: any[] = [];
    const { lines, response } = await wp.call("p1", "prompt", { user_input: "review all" }, (m) => {
      if (m.params?.type !== "ApprovalRequest") return undefined;
      approvals.push(m.params.payload);
      return { request_id: m.params.payload.id, response: "approve" };
    });
    assertEquals(response.result, { status: "finished" });

    // The approval came from inside one item, with that subagent's identity.
    assertEquals(approvals.length, 1);
    assertEquals(approvals[0].sender, "WriteFile");
    assertEquals(approvals[0].subagent_type, "coder");
    assertMatch(approvals[0].agent_id, /^a[0-9a-f]{8}$/);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/approved.txt`), "from a swarm item");

    const evs = events(lines);
    const result = evs.find((e) =>
      e.type === "ToolResult" && e.payload.tool_call_id === "tc-swarm"
    )!.payload.return_value;
    assertEquals(result.is_error, false);
    const output: string = result.output;
    assertStringIncludes(output, "<summary>items: 32, ok: 31, error: 1, cancelled: 0</summary>");
    const itemLines = output.split("\n").filter((l) => l.startsWith("<item "));
    assertEquals(itemLines.length, 32);
    for (const [i, item] of ITEMS.entries()) {
      assertMatch(
        itemLines[i],
        new RegExp(
          `^<item index="${i + 1}" value="${item}" agent_id="a[0-9a-f]{8}" outcome="(ok|error)">`,
        ),
      );
    }
    const failed = itemLines.filter((l) => l.includes('outcome="error"'));
    assertEquals(failed.length, 1);
    assertStringIncludes(failed[0], "item model refused");
    // Every answer script reached exactly one item.
    for (let n = 1; n <= 31; n++) {
      assertEquals(itemLines.filter((l) => l.includes(`SUMMARY-${n}:`)).length, 1, `SUMMARY-${n}`);
    }

    // Each item is its own subagent: its events arrive as SubagentEvents of the swarm call.
    const sub = evs.filter((e) => e.type === "SubagentEvent").map((e) => e.payload);
    assert(sub.every((s) => s.parent_tool_call_id === "tc-swarm"));
    assertEquals(new Set(sub.map((s) => s.agent_id)).size, 32);

    // Progress: never more than 4 running, and a final update with every item counted.
    const updates = evs.filter((e) => e.type === "SwarmUpdate").map((e) => e.payload);
    assertEquals(Math.max(...updates.map((u) => u.counts.running)), 4);
    const last = updates.at(-1);
    assertEquals(last.done, true);
    assertEquals(last.counts, { pending: 0, running: 0, ok: 31, error: 1, cancelled: 0 });

    // Each instance has its own context file.
    const [session] = await sb.sessionDirs();
    let contexts = 0;
    for await (const e of Deno.readDir(`${session}/subagents`)) {
      const ctx = await Deno.readTextFile(`${session}/subagents/${e.name}/context.jsonl`);
      assertStringIncludes(ctx, "Review the package pkg-");
      contexts++;
    }
    assertEquals(contexts, 32);

    // `/swarm` shows the swarm and every item.
    const shown = await wp.call("p2", "prompt", { user_input: "/swarm" });
    const text = events(shown.lines).filter((e) => e.type === "ContentPart")
      .map((e) => e.payload.text).join("");
    assertStringIncludes(
      text,
      "review packages: 32 items, concurrency 4; ok 31, error 1, cancelled 0",
    );
    assertEquals(
      text.split("\n").filter((l) => /^ {2}#\d+ \[(ok|error)\] a[0-9a-f]{8} pkg-/.test(l)).length,
      32,
    );
    await wp.finish();
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: cancelling mid-swarm stops the running items and never starts the rest", async () => {
  const sb = await kimiSandbox();
  try {
    const scripts = [
      swarmCall("tc-swarm", 4),
      // Four items each wait for an approval nobody gives.
      ...[1, 2, 3, 4].map((n) =>
        toolCallLine(`tc-w${n}`, "WriteFile", { path: `w${n}.txt`, content: "x" })
      ),
    ];
    const config = await sb.scriptedConfig(scripts);
    const wp = spawnWire(sb, ["--config-file", config]);
    await wp.call("init", "initialize", { protocol_version: "1.12" });
    await wp.send({ jsonrpc: "2.0", id: "p1", method: "prompt", params: { user_input: "go" } });
    let pending = 0;
    const seen: WireLine[] = [];
    while (pending < 4) {
      const m = await wp.next();
      seen.push(m);
      if (m.method === "request" && m.params?.type === "ApprovalRequest") pending++;
    }
    await wp.send({ jsonrpc: "2.0", id: "c1", method: "cancel" });
    const { lines, response } = await wp.until("p1");
    assertEquals(response.result, { status: "cancelled" });
    const updates = events([...seen, ...lines]).filter((e) => e.type === "SwarmUpdate")
      .map((e) => e.payload);
    const last = updates.at(-1);
    assertEquals(last.done, true);
    assertEquals(last.counts, { pending: 0, running: 0, ok: 0, error: 0, cancelled: 32 });
    for (let n = 1; n <= 4; n++) {
      assertEquals(await Deno.stat(`${sb.workDir}/w${n}.txt`).catch(() => null), null);
    }
    // Only the four running items ever got a subagent instance.
    const [session] = await sb.sessionDirs();
    let instances = 0;
    for await (const _ of Deno.readDir(`${session}/subagents`)) instances++;
    assertEquals(instances, 4);

    const shown = await wp.call("p2", "prompt", { user_input: "/swarm" });
    const text = events(shown.lines).filter((e) => e.type === "ContentPart")
      .map((e) => e.payload.text).join("");
    assertStringIncludes(text, "32 items, concurrency 4; ok 0, error 0, cancelled 32");
    assertEquals(
      text.split("\n").filter((l) => l.includes("Not started: the swarm was cancelled.")).length,
      28,
    );
    assertEquals(text.split("\n").filter((l) => l.includes("Cancelled while running.")).length, 4);
    await wp.finish();
  } finally {
    await sb.cleanup();
  }
});

Deno.test("wire: a 1.11 client gets no SwarmUpdate or GoalUpdate events", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("tc-swarm", "AgentSwarm", {
        description: "two",
        prompt_template: "Do {{item}}",
        items: ["a", "b"],
      }),
      summary(1),
      summary(2),
      toolCallLine("g", "UpdateGoal", { status: "complete" }),
    ]);
    const wp = spawnWire(sb, ["--config-file", config]);
    await wp.call("init", "initialize", { protocol_version: "1.11" });
    const { lines } = await wp.call("p1", "prompt", { user_input: "/goal Do both items" });
    const types = new Set(events(lines).map((e) => e.type));
    assert(types.has("SubagentEvent"));
    assert(!types.has("SwarmUpdate"));
    assert(!types.has("GoalUpdate"));
    await wp.finish();
  } finally {
    await sb.cleanup();
  }
});
