/**
 * Subagents end to end through `main.ts` with `_scripted_echo`: the parent and its subagent
 * share the scripted queue of one process (parent step, subagent steps, parent step).
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";

const LONG_SUMMARY = "Summary: I created hello.txt in the working directory with the content " +
  "'hi there'. I verified the write succeeded through the WriteFile tool result, changed no " +
  "other file, and nothing is left open for the parent agent to handle afterwards.";

/** Text of a message's content (a string, or a list of parts). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as { text?: string }[]).map((p) => p.text ?? "").join("");
}

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

async function onlySubagent(sb: KimiSandbox): Promise<{ dir: string; id: string }> {
  const [session] = await sb.sessionDirs();
  const ids: string[] = [];
  for await (const e of Deno.readDir(`${session}/subagents`)) ids.push(e.name);
  assertEquals(ids.length, 1, `instances: ${ids}`);
  return { dir: `${session}/subagents/${ids[0]}`, id: ids[0] };
}

async function readJsonl(path: string): Promise<Record<string, any>[]> {
  return jsonLines(await Deno.readTextFile(path));
}

Deno.test("wire: Agent(coder) edits a file; approval carries agent_id, events are SubagentEvents", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      `text: delegating\n${
        toolCallLine("tc-agent", "Agent", {
          description: "write hello file",
          prompt: "Create hello.txt containing 'hi there'.",
          subagent_type: "coder",
        })
      }`,
      `text: I will write the file now.\n${
        toolCallLine("tc-write", "WriteFile", { path: "hello.txt", content: "hi there" })
      }`,
      `text: ${LONG_SUMMARY}`,
      "text: parent done",
    ]);
    const wp = spawnWire(sb, ["--config-file", config]);
    await wp.call("init", "initialize", { protocol_version: "1.10" });
    const approvals: WireLine[] = [];
    const { lines, response } = await wp.call(
      "p1",
      "prompt",
      { user_input: "please delegate" },
      (msg) => {
        if (msg.params?.type !== "ApprovalRequest") return undefined;
        approvals.push(msg.params.payload);
        return { request_id: msg.params.payload.id, response: "approve" };
      },
    );
    assertEquals(response.result, { status: "finished" });
    await wp.finish();

    // The subagent's approval reaches the client with its identity.
    assertEquals(approvals.length, 1);
    const ap = approvals[0];
    assertEquals(ap.sender, "WriteFile");
    assertEquals(ap.tool_call_id, "tc-write");
    assertEquals(ap.subagent_type, "coder");
    assertEquals(ap.source_kind, "foreground_turn");
    assertMatch(ap.agent_id, /^a[0-9a-f]{8}$/);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/hello.txt`), "hi there");

    const events = lines.filter((l) => l.method === "event").map((l) => l.params);
    const subEvents = events.filter((e) => e.type === "SubagentEvent").map((e) => e.payload);
    assert(subEvents.length > 0, "no SubagentEvent");
    for (const s of subEvents) {
      assertEquals(s.parent_tool_call_id, "tc-agent");
      assertEquals(s.agent_id, ap.agent_id);
      assertEquals(s.subagent_type, "coder");
    }
    const inner = subEvents.map((s) => s.event);
    assertEquals(inner[0], {
      type: "TurnBegin",
      payload: { user_input: "Create hello.txt containing 'hi there'." },
    });
    // merged: the whole text arrives in one ContentPart
    assert(
      inner.some((e) =>
        e.type === "ContentPart" && e.payload.text === "I will write the file now."
      ),
      JSON.stringify(inner),
    );
    assert(inner.some((e) => e.type === "ToolResult" && e.payload.tool_call_id === "tc-write"));
    assertEquals(inner.at(-1), { type: "TurnEnd", payload: {} });
    // The subagent's own events never appear unwrapped on the parent wire.
    assert(!events.some((e) => e.type === "ToolResult" && e.payload.tool_call_id === "tc-write"));

    const parentResult = events.find((e) =>
      e.type === "ToolResult" && e.payload.tool_call_id === "tc-agent"
    );
    assert(parentResult, "no Agent ToolResult");
    assertEquals(parentResult.payload.return_value.is_error, false);
    assertEquals(
      parentResult.payload.return_value.output,
      `agent_id: ${ap.agent_id}\nresumed: false\nactual_subagent_type: coder\nstatus: completed\n\n[summary]\n${LONG_SUMMARY}`,
    );

    // Instance files.
    const { dir, id } = await onlySubagent(sb);
    assertEquals(id, ap.agent_id);
    const meta = JSON.parse(await Deno.readTextFile(`${dir}/meta.json`));
    assertEquals(meta.agent_id, id);
    assertEquals(meta.subagent_type, "coder");
    assertEquals(meta.status, "idle");
    assertEquals(meta.description, "write hello file");
    assertEquals(meta.launch_spec, {
      agent_id: id,
      subagent_type: "coder",
      model_override: null,
      effective_model: null,
      created_at: meta.created_at,
    });
    assertEquals(
      await Deno.readTextFile(`${dir}/prompt.txt`),
      "Create hello.txt containing 'hi there'.",
    );
    const wire = await readJsonl(`${dir}/wire.jsonl`);
    assertEquals(wire[0], { type: "metadata", protocol_version: "1.10" });
    assertEquals(wire[1].message.type, "TurnBegin");
    assertEquals(wire.at(-1)!.message.type, "TurnEnd");
    const ctx = await readJsonl(`${dir}/context.jsonl`);
    const sys = ctx.find((r) => r.role === "_system_prompt");
    assert(sys, "no persisted system prompt");
    assertStringIncludes(sys.content, "You are running as a subagent.");
    assertEquals(ctx.filter((r) => r.role === "user").length, 1);
    assertEquals(ctx.filter((r) => r.role === "assistant").length, 2);

    // The parent's wire.jsonl records the SubagentEvent wrappers.
    const [session] = await sb.sessionDirs();
    const parentWire = await readJsonl(`${session}/wire.jsonl`);
    assert(parentWire.some((r) => r.message?.type === "SubagentEvent"));
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print: per-type tools (plan cannot write, no subagent can call Agent); short answers get one continuation", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("tc-agent", "Agent", {
        description: "plan it",
        prompt: "Plan.",
        subagent_type: "plan",
      }),
      `${toolCallLine("tc-w", "WriteFile", { path: "x.txt", content: "no" })}\n${
        toolCallLine("tc-a", "Agent", { description: "nested", prompt: "nested" })
      }`,
      "text: short",
      `text: ${LONG_SUMMARY}`,
      "text: parent done",
    ]);
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "go",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const out = jsonLines(r.stdout);
    const toolMsg = out.find((m) => m.role === "tool" && m.tool_call_id === "tc-agent");
    assert(toolMsg, r.stdout);
    const text = textOf(toolMsg.content);
    assertStringIncludes(text, "actual_subagent_type: plan");
    assertStringIncludes(text, "[summary]\n" + LONG_SUMMARY);
    assertEquals(out.at(-1), { role: "assistant", content: "parent done" });
    await Deno.stat(`${sb.workDir}/x.txt`).then(
      () => {
        throw new Error("plan subagent wrote a file");
      },
      () => {},
    );

    const { dir } = await onlySubagent(sb);
    const ctx = await readJsonl(`${dir}/context.jsonl`);
    const toolResults = ctx.filter((r) => r.role === "tool");
    assertEquals(toolResults.map((r) => [r.tool_call_id, textOf(r.content)]), [
      ["tc-w", "<system>ERROR: Tool `WriteFile` not found</system>"],
      ["tc-a", "<system>ERROR: Tool `Agent` not found</system>"],
    ]);
    // the continuation prompt followed the too-short answer
    const users = ctx.filter((r) => r.role === "user").map((r) => textOf(r.content));
    assertEquals(users.length, 2);
    assertEquals(users[0], "Plan.");
    assertStringIncludes(users[1], "Your previous response was too brief.");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print: resume an instance by agent_id (context kept, requested type reported)", async () => {
  const sb = await kimiSandbox();
  try {
    const first = await sb.scriptedConfig([
      toolCallLine("tc-1", "Agent", { description: "first task", prompt: "Remember 42." }),
      `text: ${LONG_SUMMARY}`,
      "text: parent done",
    ]);
    const r1 = await sb.run(["--print", "--config-file", first, "-p", "start"]);
    assertEquals(r1.code, 0, r1.stderr);
    const { dir, id } = await onlySubagent(sb);
    const [session] = await sb.sessionDirs();
    const sessionId = session.split("/").at(-1)!;

    const second = await sb.scriptedConfig([
      toolCallLine("tc-2", "Agent", {
        description: "second task",
        prompt: "What did I ask you to remember?",
        subagent_type: "explore",
        resume: id,
      }),
      `text: ${LONG_SUMMARY} (42)`,
      "text: parent done again",
    ]);
    const r2 = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      second,
      "--session",
      sessionId,
      "-p",
      "continue",
    ]);
    assertEquals(r2.code, 0, r2.stderr);
    const toolMsg = jsonLines(r2.stdout).find((m) => m.role === "tool");
    const text = textOf(toolMsg.content);
    assertStringIncludes(
      text,
      `agent_id: ${id}\nresumed: true\nrequested_subagent_type: explore\nactual_subagent_type: coder\nstatus: completed\n\n[summary]\n${LONG_SUMMARY} (42)`,
    );
    const ctx = await readJsonl(`${dir}/context.jsonl`);
    assertEquals(ctx.filter((r) => r.role === "_system_prompt").length, 1);
    assertEquals(
      ctx.filter((r) => r.role === "user").map((r) => textOf(r.content)),
      ["Remember 42.", "What did I ask you to remember?"],
    );
    const meta = JSON.parse(await Deno.readTextFile(`${dir}/meta.json`));
    assertEquals(meta.status, "idle");
    assertEquals(meta.description, "second task");

    // Resuming an unknown id is a tool error naming it.
    const third = await sb.scriptedConfig([
      toolCallLine("tc-3", "Agent", { description: "x", prompt: "x", resume: "a00000000" }),
      "text: ok",
    ]);
    const r3 = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      third,
      "--session",
      sessionId,
      "-p",
      "again",
    ]);
    assertEquals(r3.code, 0, r3.stderr);
    const err = jsonLines(r3.stdout).find((m) => m.role === "tool");
    assertStringIncludes(textOf(err.content), "Subagent instance not found: a00000000");
  } finally {
    await sb.cleanup();
  }
});
