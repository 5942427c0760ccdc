/**
 * A background subagent's task and instance files when the task is stopped through its
 * `control.json` and when kimi is killed under it (the next run marks the task lost and the
 * instance failed, as the reference's recovery does).
 */
import { assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { type MockReply, startMockOpenAI } from "../helpers/mock_openai.ts";
import { spawnWire } from "../helpers/wire_process.ts";

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

const textOf = (c: unknown): string =>
  typeof c === "string"
    ? c
    : Array.isArray(c)
    ? (c as { text?: string }[]).map((p) => p.text ?? "").join("")
    : "";

/** The root agent starts a background coder, then lists tasks; the subagent streams slowly. */
function reply(body: Msg): MockReply {
  const tools: string[] = (body.tools ?? []).map((t: Msg) => t.function?.name);
  if (!tools.includes("Agent")) {
    return { text: Array.from({ length: 600 }, () => "."), chunkDelayMs: 100 };
  }
  const messages: Msg[] = body.messages;
  const last = messages.findLast((m) => !textOf(m.content).startsWith("<system-reminder>"))!;
  const text = textOf(last.content);
  if (last.role === "user" && text.startsWith("start")) {
    return {
      toolCalls: [{
        id: "tc-agent",
        name: "Agent",
        arguments: JSON.stringify({
          description: "slow job",
          prompt: "Take your time.",
          subagent_type: "coder",
          run_in_background: true,
        }),
      }],
    };
  }
  if (last.role === "user" && text.startsWith("list")) {
    return { toolCalls: [{ id: "tc-list", name: "TaskList", arguments: '{"active_only":false}' }] };
  }
  return { text: "ok" };
}

const readJson = async (path: string) => JSON.parse(await Deno.readTextFile(path));

async function waitFor<T>(probe: () => Promise<T | null>, what: string): Promise<T> {
  const end = Date.now() + 30000;
  while (Date.now() < end) {
    const v = await probe().catch(() => null);
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function startBackgroundAgent(extra: string[] = []) {
  const sb = await kimiSandbox();
  const mock = await startMockOpenAI({ auto: (body) => reply(body) });
  const config = `${sb.root}/config.json`;
  await Deno.writeTextFile(
    config,
    await Deno.readTextFile(await sb.openaiConfig(mock.url)).then((t) =>
      JSON.stringify({ ...JSON.parse(t), background: { wait_poll_interval_ms: 50 } })
    ),
  );
  const wire = spawnWire(sb, ["--yolo", "--config-file", config, ...extra]);
  await wire.call("init", "initialize", { protocol_version: "1.10" });
  await wire.call("p1", "prompt", { user_input: "start" });
  const [session] = await sb.sessionDirs();
  const taskDir = await waitFor(async () => {
    for await (const e of Deno.readDir(`${session}/tasks`)) {
      if (e.name.startsWith("agent-")) return `${session}/tasks/${e.name}`;
    }
    return null;
  }, "the agent task");
  const spec = await readJson(`${taskDir}/spec.json`);
  const agentId: string = spec.kind_payload.agent_id;
  await waitFor(async () => {
    const rt = await readJson(`${taskDir}/runtime.json`);
    return rt.status === "running" ? rt : null;
  }, "running");
  return { sb, mock, wire, session, taskDir, agentId, config };
}

Deno.test("a background subagent stopped through control.json: task killed, instance killed", async () => {
  const { sb, mock, wire, session, taskDir, agentId } = await startBackgroundAgent();
  try {
    const spec = await readJson(`${taskDir}/spec.json`);
    assertEquals([spec.kind, spec.description, spec.tool_call_id], [
      "agent",
      "slow job",
      "tc-agent",
    ]);
    assertEquals(spec.kind_payload.subagent_type, "coder");
    await Deno.writeTextFile(
      `${taskDir}/control.json`,
      JSON.stringify({ kill_requested_at: Date.now() / 1000, kill_reason: "no longer needed" }),
    );
    const rt = await waitFor(async () => {
      const r = await readJson(`${taskDir}/runtime.json`);
      return r.status === "killed" ? r : null;
    }, "killed");
    assertEquals([rt.interrupted, rt.failure_reason], [true, "no longer needed"]);
    const meta = await waitFor(async () => {
      const m = await readJson(`${session}/subagents/${agentId}/meta.json`);
      return m.status === "killed" ? m : null;
    }, "the instance to be killed");
    assertEquals(meta.last_task_id, taskDir.split("/").pop());
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});

Deno.test("kill -9 under a background subagent: the next run marks the task lost, the instance failed", async () => {
  const { sb, mock, wire, session, taskDir, agentId, config } = await startBackgroundAgent();
  try {
    wire.child.kill("SIGKILL");
    await wire.child.status;
    assertEquals(
      (await readJson(`${session}/subagents/${agentId}/meta.json`)).status,
      "running_background",
    );
    const r = await sb.run([
      "--print",
      "--config-file",
      config,
      "--session",
      session.split("/").pop()!,
      "-p",
      "list",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const rt = await readJson(`${taskDir}/runtime.json`);
    assertEquals(
      [rt.status, rt.failure_reason],
      ["lost", "In-process background agent is no longer running"],
    );
    assertEquals((await readJson(`${session}/subagents/${agentId}/meta.json`)).status, "failed");
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});
