/**
 * Background subagents, subagent hooks and the explore git context, end to end through
 * `main.ts`: a background coder run started in one turn and read back with TaskList/TaskOutput
 * in the next (one `--print --input-format stream-json` process against a mock OpenAI server
 * that answers from the request), the completion notification reaching the model,
 * SubagentStart/SubagentStop hook commands, and `<git-context>` in a real git repository.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../../helpers/kimi_process.ts";
import { type MockReply, startMockOpenAI } from "../../helpers/mock_openai.ts";
import { formatTaskNotification, tailText } from "../../../lib/background/notifications.ts";
import { newTaskRecord, type TaskRecord } from "../../../lib/background/task_record.ts";

const LONG_SUMMARY = "Summary: the background job inspected the repository layout, confirmed " +
  "that every module compiles, found no failing checks and changed no file. Nothing is left " +
  "open, and the parent agent can report the job as finished without further action.";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as { text?: string }[]).map((p) => p.text ?? "").join("");
}

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

function call(id: string, name: string, args: unknown): MockReply {
  return { toolCalls: [{ id, name, arguments: JSON.stringify(args) }] };
}

/** Replies of the root agent, decided by the last message of the request. */
function rootReply(messages: Msg[]): MockReply {
  // print mode appends an afk `<system-reminder>` message to every request
  const last = messages.findLast((m) => !textOf(m.content).startsWith("<system-reminder>"))!;
  const text = textOf(last.content);
  if (last.role === "user" && text.startsWith("start")) {
    return call("tc-agent", "Agent", {
      description: "bg coder job",
      prompt: "Check the repository.",
      subagent_type: "coder",
      run_in_background: true,
    });
  }
  if (last.role === "tool" && last.tool_call_id === "tc-agent") return { text: "started" };
  if (last.role === "user" && text.startsWith("check")) return call("tc-list", "TaskList", {});
  if (last.role === "tool" && last.tool_call_id === "tc-list") {
    const id = text.match(/task_id: (agent-[0-9a-f]{8})/)?.[1] ?? "missing";
    return call("tc-out", "TaskOutput", { task_id: id, block: true, timeout: 60 });
  }
  return { text: "all done" };
}

Deno.test("print: Agent(run_in_background) runs as an agent task; TaskList/TaskOutput see it; the model is notified", async () => {
  const sb = await kimiSandbox();
  const mock = await startMockOpenAI({
    auto: (body) => {
      const tools: string[] = (body.tools ?? []).map((t: Msg) => t.function?.name);
      if (tools.includes("Agent")) return rootReply(body.messages);
      return { text: LONG_SUMMARY, delayMs: 2500 };
    },
  });
  try {
    const config = await sb.openaiConfig(mock.url);
    const r = await sb.run([
      "--print",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
    ], { stdin: '{"role":"user","content":"start"}\n{"role":"user","content":"check"}\n' });
    assertEquals(r.code, 0, r.stderr);
    const out = jsonLines(r.stdout);
    const tool = (id: string) => textOf(out.find((m) => m.tool_call_id === id)?.content);

    // The Agent call returns at once with the task facts.
    const started = tool("tc-agent");
    const taskId = started.match(/task_id: (agent-[0-9a-f]{8})/)?.[1];
    const agentId = started.match(/agent_id: (a[0-9a-f]{8})/)?.[1];
    assert(taskId && agentId, r.stdout + r.stderr);
    assertStringIncludes(started, "<system>Background task started.</system>");
    assertStringIncludes(
      started,
      `kind: agent\nstatus: running\ndescription: bg coder job\nagent_id: ${agentId}\n` +
        "actual_subagent_type: coder\nautomatic_notification: true\nnext_step: ",
    );
    assertStringIncludes(
      started,
      `resume_hint: Use Agent(resume="${agentId}", prompt="...") to continue this instance later.`,
    );

    // Next turn: TaskList shows it running, TaskOutput(block) waits for the summary.
    const listed = tool("tc-list");
    assertStringIncludes(listed, "active_background_tasks: 1");
    assertStringIncludes(listed, `task_id: ${taskId}\nkind: agent\nstatus: running`);
    assertStringIncludes(listed, `agent_id: ${agentId}\nsubagent_type: coder`);
    const output = tool("tc-out");
    assertStringIncludes(output, `retrieval_status: success\ntask_id: ${taskId}`);
    assertStringIncludes(output, "status: completed");
    assertStringIncludes(output, `[summary]\n${LONG_SUMMARY}`);
    assertEquals(out.at(-1), { role: "assistant", content: "all done" });

    // The model got exactly one notification, after the TaskOutput result.
    const finalReq = mock.requests.at(-1)!.body;
    const notes = finalReq.messages.filter((m: Msg) =>
      m.role === "user" && textOf(m.content).startsWith("<notification ")
    );
    assertEquals(notes.length, 1);
    const note = textOf(notes[0].content);
    assertMatch(
      note,
      new RegExp(
        `^<notification id="n[0-9a-f]{8}" category="task" type="task.completed" ` +
          `source_kind="background_task" source_id="${taskId}">\\nTitle: Background task ` +
          `completed: bg coder job\\nSeverity: success\\nTask ID: ${taskId}\\n`,
      ),
    );
    assertStringIncludes(note, `<task-notification>\nTask kind: agent\nAgent ID: ${agentId}`);
    assert(note.endsWith(`${LONG_SUMMARY}\n</task-notification>\n</notification>`), note);
    const noteAt = finalReq.messages.indexOf(notes[0]);
    assertEquals(finalReq.messages[noteAt - 1].tool_call_id, "tc-out");

    // Files: the task record and the instance.
    const [session] = await sb.sessionDirs();
    const taskFile = async (name: string) =>
      JSON.parse(await Deno.readTextFile(`${session}/tasks/${taskId}/${name}`));
    const spec = await taskFile("spec.json");
    const runtime = await taskFile("runtime.json");
    assertEquals([spec.kind, runtime.status, spec.kind_payload.agent_id], [
      "agent",
      "completed",
      agentId,
    ]);
    assertEquals(spec.session_id, session.split("/").pop());
    const meta = JSON.parse(await Deno.readTextFile(`${session}/subagents/${agentId}/meta.json`));
    assertEquals([meta.status, meta.last_task_id], ["idle", taskId]);
    // The instance's output file is the reference's transcript: stage lines, the streamed
    // text, then the summary.
    assertEquals(
      await Deno.readTextFile(`${session}/subagents/${agentId}/output`),
      [
        "[stage] runner_started",
        "[stage] agent_built",
        "[stage] context_restored",
        "[stage] context_ready",
        "[stage] run_soul_start",
        `${LONG_SUMMARY}[stage] run_soul_finished`,
        "",
        "[summary]",
        LONG_SUMMARY,
        "",
      ].join("\n"),
    );
    // The subagent's own wire log has its turn; the parent saw no SubagentEvent for it.
    const childWire = await Deno.readTextFile(`${session}/subagents/${agentId}/wire.jsonl`);
    assertStringIncludes(childWire, "TurnBegin");
    const parentWire = await Deno.readTextFile(`${session}/wire.jsonl`);
    assert(!parentWire.includes("SubagentEvent"), "background events reached the parent wire");
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});

Deno.test("print: SubagentStart/SubagentStop hooks get their stdin JSON", async () => {
  const sb = await kimiSandbox();
  try {
    const startLog = `${sb.root}/start.json`;
    const stopLog = `${sb.root}/stop.json`;
    const config = await sb.scriptedConfig([
      toolCallLine("tc-agent", "Agent", {
        description: "say hi",
        prompt: "Say hi to the user.",
        subagent_type: "coder",
      }),
      `text: ${LONG_SUMMARY}`,
      "text: parent done",
    ], {
      hooks: [
        { event: "SubagentStart", matcher: "^coder$", command: `cat > "${startLog}"` },
        { event: "SubagentStop", matcher: "coder", command: `cat > "${stopLog}"` },
        { event: "SubagentStart", matcher: "^explore$", command: `touch "${sb.root}/wrong"` },
      ],
    });
    const r = await sb.run(["--print", "--config-file", config, "-p", "go"]);
    assertEquals(r.code, 0, r.stderr);
    const start = JSON.parse(await Deno.readTextFile(startLog));
    assertEquals(start.hook_event_name, "SubagentStart");
    assertEquals([start.agent_name, start.prompt], ["coder", "Say hi to the user."]);
    assertEquals(start.cwd, sb.workDir);
    assertEquals(typeof start.session_id, "string");
    // SubagentStop is fire-and-forget: give it a moment when the process outran it.
    let stopText = "";
    for (let i = 0; i < 50 && !stopText; i++) {
      stopText = await Deno.readTextFile(stopLog).catch(() => "");
      if (!stopText) await new Promise((r) => setTimeout(r, 100));
    }
    const stop = JSON.parse(stopText);
    assertEquals(stop.hook_event_name, "SubagentStop");
    assertEquals([stop.agent_name, stop.response], ["coder", LONG_SUMMARY]);
    assert(!(await Deno.stat(`${sb.root}/wrong`).catch(() => null)), "explore hook ran");
  } finally {
    await sb.cleanup();
  }
});

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

Deno.test("print: a new explore instance gets <git-context> before its first prompt", async () => {
  const sb = await kimiSandbox();
  try {
    const wd = sb.workDir;
    await git(wd, "init", "-q", "-b", "trunk");
    await git(wd, "config", "user.email", "t@example.com");
    await git(wd, "config", "user.name", "Tester");
    await Deno.writeTextFile(`${wd}/a.txt`, "a\n");
    await git(wd, "add", "a.txt");
    await git(wd, "commit", "-q", "-m", "first commit");
    await Deno.writeTextFile(`${wd}/a.txt`, "changed\n");
    await Deno.writeTextFile(`${wd}/new.txt`, "n\n");

    const config = await sb.scriptedConfig([
      toolCallLine("tc-agent", "Agent", {
        description: "look around",
        prompt: "Find the entry point.",
        subagent_type: "explore",
      }),
      `text: ${LONG_SUMMARY}`,
      "text: parent done",
    ]);
    const r = await sb.run(["--print", "--config-file", config, "-p", "go"]);
    assertEquals(r.code, 0, r.stderr);
    const [session] = await sb.sessionDirs();
    const ids: string[] = [];
    for await (const e of Deno.readDir(`${session}/subagents`)) ids.push(e.name);
    assertEquals(ids.length, 1);
    const dir = `${session}/subagents/${ids[0]}`;
    const prompt = await Deno.readTextFile(`${dir}/prompt.txt`);
    assertMatch(
      prompt,
      new RegExp(
        `^<git-context>\\nWorking directory: ${wd}\\nBranch: trunk\\nDirty files \\(2\\):\\n` +
          ` {2} M a\\.txt\\n {2}\\?\\? new\\.txt\\nRecent commits:\\n {2}[0-9a-f]{7,} first commit\\n` +
          `</git-context>\\n\\nFind the entry point\\.$`,
      ),
    );
    const ctx = jsonLines(await Deno.readTextFile(`${dir}/context.jsonl`));
    const firstUser = ctx.find((m) => m.role === "user");
    assertEquals(textOf(firstUser.content), prompt);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("notification text: headline by terminal reason, tail capped by lines and chars", () => {
  const task: TaskRecord = {
    ...newTaskRecord({
      kind: "bash",
      sessionId: "s",
      description: "build",
      status: "running",
      command: "make",
      cwd: "/w",
      timeoutS: 5,
    }),
    id: "bash-0123abcd",
    status: "failed",
    exit_code: 137,
    interrupted: true,
    timed_out: true,
    failure_reason: "Command timed out after 5s",
  };
  assertEquals(tailText("1\n2\n3\n4\n\n", 2, 100), "3\n4");
  assertEquals(tailText("abcdef", 5, 3), "def");
  assertEquals(
    formatTaskNotification(task, { id: "n1", tail: "" }),
    [
      '<notification id="n1" category="task" type="task.timed_out" source_kind="background_task" source_id="bash-0123abcd">',
      "Title: Background task timed out: build",
      "Severity: error",
      "Task ID: bash-0123abcd",
      "Status: failed",
      "Description: build",
      "Terminal reason: timed_out",
      "Exit code: 137",
      "Failure reason: Command timed out after 5s",
      "<task-notification>",
      "Task kind: bash",
      "Output tail:",
      "[no output]",
      "</task-notification>",
      "</notification>",
    ].join("\n"),
  );
});

Deno.test("in-process tasks: stop aborts the body (killed), the timeout fails it (timed_out), listeners hear both", async () => {
  const { BackgroundTaskManager } = await import("../../../lib/background/task_manager.ts");
  const { DEFAULT_BACKGROUND } = await import("../../helpers/tool_env.ts");
  const dir = await Deno.makeTempDir();
  try {
    const m = new BackgroundTaskManager(dir, DEFAULT_BACKGROUND);
    const heard: string[] = [];
    m.onTerminal((t) => heard.push(`${t.id}:${t.status}`));
    const waitForAbort = (signal: AbortSignal) =>
      new Promise<{ ok: false; reason: string }>((res) =>
        signal.addEventListener("abort", () => res({ ok: false, reason: "aborted" }))
      );
    const a = await m.startInProcess({
      kind: "agent",
      description: "long",
      payload: { agent_id: "a00000001" },
      run: (io) => {
        io.write("working\n");
        return waitForAbort(io.signal);
      },
    });
    assertMatch(a.id, /^agent-[0-9a-f]{8}$/);
    assertEquals((await m.list()).map((t) => t.id), [a.id]);
    const stopped = await m.stop(a.id, "Stopped by TaskStop");
    assertEquals([stopped.status, stopped.failure_reason, stopped.interrupted], [
      "killed",
      "Stopped by TaskStop",
      true,
    ]);
    assertEquals((await m.output(a.id)).previewText, "working");

    const b = await m.startInProcess({
      kind: "agent",
      description: "slow",
      timeoutS: 0.05,
      run: (io) => waitForAbort(io.signal),
    });
    const done = await m.output(b.id, { block: true, timeoutS: 5 });
    assertEquals([done.task.status, done.task.timed_out], ["failed", true]);
    assertEquals(done.task.failure_reason, "Agent task timed out after 0.05s");
    assertEquals(heard, [`${a.id}:killed`, `${b.id}:failed`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
