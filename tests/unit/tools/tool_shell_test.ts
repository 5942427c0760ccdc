/**
 * Shell (foreground and background) and the background task tools.
 *
 * @module
 */
import type { z } from "zod";
import { REJECTED_MESSAGE } from "../../../lib/tooling/result.ts";
import { FULL_SCOPE, type PermissionScope } from "../../../lib/tooling/scope.ts";
import type {
  ApprovalAsk,
  ApprovalOutcome,
  SessionRun,
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolReturnValue,
} from "../../../lib/tooling/tool.ts";
import type { TodoItem } from "../../../lib/wire/display.ts";
import { shellTool } from "../../../tools/shell.ts";
import { taskListTool } from "../../../tools/task_list.ts";
import { taskOutputTool } from "../../../tools/task_output.ts";
import { taskStopTool } from "../../../tools/task_stop.ts";
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../helpers/assert.ts";
import { makeSessionRun, runTool } from "../../helpers/tool_env.ts";

// ---- private fakes (tests/helpers/tool_env.ts is owned by another engineer) ----

/** The test's dirs and its session's run state (one task manager per test, like a session). */
interface Dirs {
  workDir: string;
  sessionDir: string;
  run: SessionRun;
}

function fakeEnv(dirs: Dirs, over: Partial<ToolEnv> = {}): ToolEnv {
  let todos: TodoItem[] = [];
  const env: ToolEnv = {
    workDir: dirs.workDir,
    additionalDirs: () => [],
    shareDir: dirs.sessionDir,
    sessionDir: dirs.sessionDir,
    run: dirs.run,
    sessionId: "test-session",
    modelCapabilities: new Set(),
    isRoot: true,
    scope: FULL_SCOPE,
    services: { moonshotSearch: null, moonshotFetch: null },
    background: {
      maxRunningTasks: 4,
      readMaxBytes: 30_000,
      notificationTailLines: 20,
      notificationTailChars: 3000,
      killGracePeriodMs: 300,
    },
    childEnv: () => ({ PATH: "/usr/local/bin:/usr/bin:/bin", HOME: dirs.workDir, LANG: "C.UTF-8" }),
    planMode: () => ({ active: false, planFile: null }),
    todos: { get: () => todos, set: (items) => Promise.resolve(void (todos = items)) },
    emit: () => {},
    askQuestions: () => Promise.resolve(null),
    isAfk: () => false,
    ...over,
  };
  // The session applies its config to its task manager, as the app does.
  dirs.run.tasks.updateSettings(env.background);
  return env;
}

interface FakeCtx extends ToolCallContext {
  asks: ApprovalAsk[];
}

function fakeCtx(
  opts: { signal?: AbortSignal; outcome?: ApprovalOutcome; id?: string } = {},
): FakeCtx {
  const asks: ApprovalAsk[] = [];
  return {
    toolCallId: opts.id ?? "call-1",
    signal: opts.signal ?? new AbortController().signal,
    asks,
    requestApproval(ask) {
      asks.push(ask);
      return Promise.resolve(opts.outcome ?? { approved: true });
    },
  };
}

async function build(factory: (env: ToolEnv) => unknown, env: ToolEnv): Promise<Tool> {
  const tool = await factory(env);
  assert(tool, "tool should be offered");
  return tool as Tool;
}

function call(tool: Tool, raw: unknown, ctx: ToolCallContext): Promise<ToolReturnValue> {
  return runTool(tool, raw, ctx);
}

function briefOf(rv: ToolReturnValue): string {
  const b = rv.display.find((d) => d.type === "brief") as { text: string } | undefined;
  return b?.text ?? "";
}

async function withDirs(fn: (d: Dirs) => Promise<void>) {
  const root = await Deno.makeTempDir({ prefix: "kimi-shell-test-" });
  const sessionDir = `${root}/session`;
  const dirs = {
    workDir: `${root}/work`,
    sessionDir,
    run: makeSessionRun({ shareDir: sessionDir, sessionDir }),
  };
  await Deno.mkdir(dirs.workDir);
  await Deno.mkdir(dirs.sessionDir);
  try {
    await fn(dirs);
  } finally {
    await dirs.run.tasks.stopAll();
    await Deno.remove(root, { recursive: true });
  }
}

/** Live (non-zombie) processes whose process group is `pgid`, read from /proc. */
function liveGroupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    const pgrp = Number(fields[2]);
    if (pgrp === pgid && state !== "Z" && state !== "X") out.push(Number(e.name));
  }
  return out;
}

/**
 * Poll until `probe` returns true or 30 s pass (a generous deadline for a loaded machine): a SIGKILLed process closes its pipes a moment
 * before the kernel marks it a zombie, so the check may need a few milliseconds.
 */
async function eventually(probe: () => boolean): Promise<boolean> {
  const end = Date.now() + 30_000;
  while (!probe()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function isAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

function pidsIn(output: string, key: string): number[] {
  return [...output.matchAll(new RegExp(`${key}=(\\d+)`, "g"))].map((m) => Number(m[1]));
}

// ---- foreground ----

Deno.test("Shell streams stdout and stderr interleaved in arrival order", async () => {
  await withDirs(async (dirs) => {
    const tool = await build(shellTool, fakeEnv(dirs));
    const ctx = fakeCtx();
    const cmd = "echo out1; sleep 0.2; echo err1 >&2; sleep 0.2; echo out2; sleep 0.2; " +
      "printf 'err2-no-newline' >&2";
    const rv = await call(tool, { command: cmd }, ctx);
    assertEquals(rv.is_error, false);
    assertEquals(rv.output, "out1\nerr1\nout2\nerr2-no-newline");
    assertEquals(rv.message, "Command executed successfully.");
    assertEquals(ctx.asks, [{
      action: "run command",
      description: `Run command \`${cmd}\``,
      display: [{ type: "shell", language: "bash", command: cmd }],
      subject: { kind: "shell", command: cmd },
    }]);
  });
});

Deno.test("Shell runs in the work dir with the child env and SHELL set", async () => {
  await withDirs(async (dirs) => {
    const tool = await build(shellTool, fakeEnv(dirs));
    const rv = await call(
      tool,
      { command: 'pwd; echo "shell=$SHELL"; echo "home=$HOME"; read x; echo "read=$?"' },
      fakeCtx(),
    );
    const lines = (rv.output as string).split("\n");
    assertEquals(lines[0], await Deno.realPath(dirs.workDir));
    assertMatch(lines[1], /^shell=\/.*(bash|sh)$/);
    assertEquals(lines[2], `home=${dirs.workDir}`);
    assertEquals(lines[3], "read=1"); // stdin is closed
  });
});

Deno.test("Shell reports a non-zero exit with the last non-blank lines in the brief", async () => {
  await withDirs(async (dirs) => {
    const tool = await build(shellTool, fakeEnv(dirs));
    const long = "x".repeat(250);
    const cmd =
      `for i in 1 2 3 4 5 6; do echo line$i; done; echo; echo ${long} >&2; echo '  '; exit 3`;
    const rv = await call(tool, { command: cmd }, fakeCtx());
    assertEquals(rv.is_error, true);
    assertEquals(rv.message, "Command failed with exit code: 3.");
    assertEquals(
      briefOf(rv),
      `Failed with exit code: 3\nline3\nline4\nline5\nline6\n${"x".repeat(199)}…`,
    );
    assertStringIncludes(rv.output as string, "line1\nline2\n");
  });
});

Deno.test("Shell timeout kills the command and every grandchild", async () => {
  await withDirs(async (dirs) => {
    const tool = await build(shellTool, fakeEnv(dirs));
    // One grandchild ignores SIGTERM (needs the SIGKILL escalation), one is a plain sleep.
    const cmd = "echo leader=$$; bash -c 'trap \"\" TERM; sleep 30' & echo gc=$!; " +
      "sleep 30 & echo gc=$!; wait";
    const started = Date.now();
    const rv = await call(tool, { command: cmd, timeout: 1 }, fakeCtx());
    assert(Date.now() - started < 5000, "timeout must not wait for the sleeps");
    assertEquals(rv.is_error, true);
    assertEquals(rv.message, "Command killed by timeout (1s)");
    assertEquals(briefOf(rv), "Killed by timeout (1s)");
    const [leader] = pidsIn(rv.output as string, "leader");
    const grandchildren = pidsIn(rv.output as string, "gc");
    assertEquals(grandchildren.length, 2);
    assert(await eventually(() => liveGroupMembers(leader).length === 0), "group survived");
    for (const pid of grandchildren) {
      assert(await eventually(() => !isAlive(pid)), `pid ${pid} survived`);
    }
  });
});

Deno.test("Shell cancellation through the AbortSignal kills the process group", async () => {
  await withDirs(async (dirs) => {
    const tool = await build(shellTool, fakeEnv(dirs));
    const ac = new AbortController();
    const marker = `${dirs.workDir}/pids`;
    const cmd = `echo leader=$$ > ${marker}; sleep 30 & echo gc=$! >> ${marker}; wait`;
    const pending = call(tool, { command: cmd }, fakeCtx({ signal: ac.signal }));
    // Wait for the state (both pids written), not for a time: a loaded machine starts late.
    assert(
      await eventually(() => {
        try {
          return Deno.readTextFileSync(marker).includes("gc=");
        } catch {
          return false;
        }
      }),
    );
    const text = await Deno.readTextFile(marker);
    const [leader] = pidsIn(text, "leader");
    const [gc] = pidsIn(text, "gc");
    assertEquals(isAlive(gc), true);
    ac.abort(new DOMException("turn cancelled", "AbortError"));
    let rejected: unknown = null;
    try {
      await pending;
    } catch (e) {
      rejected = e;
    }
    assert(rejected instanceof DOMException && rejected.message === "turn cancelled");
    assert(await eventually(() => liveGroupMembers(leader).length === 0), "group survived");
    assert(await eventually(() => !isAlive(gc)), "grandchild survived");
  });
});

Deno.test("Shell rejects an empty command without asking for approval", async () => {
  await withDirs(async (dirs) => {
    const tool = await build(shellTool, fakeEnv(dirs));
    for (const command of ["", "   "]) {
      const ctx = fakeCtx();
      const rv = await call(tool, { command }, ctx);
      assertEquals(rv.is_error, true);
      assertEquals(rv.message, "Command cannot be empty.");
      assertEquals(briefOf(rv), "Empty command");
      assertEquals(ctx.asks.length, 0);
    }
  });
});

Deno.test("Shell parameter refinements carry the reference messages", async () => {
  await withDirs(async (dirs) => {
    const tool = await build(shellTool, fakeEnv(dirs));
    const fg = tool.parameters.safeParse({ command: "ls", timeout: 301 });
    assertEquals(fg.success, false);
    assertEquals(
      (fg.error as z.ZodError).issues.map((i) => i.message),
      [
        "timeout must be <= 300s for foreground commands; use run_in_background=true for " +
        "longer timeouts (up to 86400s)",
      ],
    );
    const bg = tool.parameters.safeParse({
      command: "ls",
      run_in_background: true,
      description: " ",
    });
    assertEquals(
      (bg.error as z.ZodError).issues.map((i) => i.message),
      ["description is required when run_in_background is true"],
    );
    assertEquals(
      tool.parameters.safeParse({
        command: "ls",
        timeout: 3600,
        run_in_background: true,
        description: "d",
      })
        .success,
      true,
    );
    assertEquals(tool.parameters.safeParse({ command: "ls", timeout: 0 }).success, false);
  });
});

Deno.test("Shell honours the sandbox scope and user rejection", async () => {
  await withDirs(async (dirs) => {
    const denyRun: PermissionScope = {
      check: (kind, target) =>
        kind === "run"
          ? { allowed: false, message: `Denied by the sandbox: run ${target}` }
          : { allowed: true },
    };
    const denied = await build(shellTool, fakeEnv(dirs, { scope: denyRun }));
    const ctx = fakeCtx();
    const rv = await call(denied, { command: "echo hi" }, ctx);
    assertEquals(rv.is_error, true);
    assertEquals(rv.message, "Denied by the sandbox: run bash");
    assertEquals(briefOf(rv), "Sandbox denied");
    assertEquals(ctx.asks.length, 0);

    const tool = await build(shellTool, fakeEnv(dirs));
    const marker = `${dirs.workDir}/should-not-exist`;
    const rejected = await call(
      tool,
      { command: `touch ${marker}` },
      fakeCtx({ outcome: { approved: false, feedback: "" } }),
    );
    assertEquals(rejected.message, REJECTED_MESSAGE);
    assertEquals(await Deno.stat(marker).then(() => true, () => false), false);
  });
});

// ---- background ----

Deno.test("background Shell task, read with TaskOutput and listed with TaskList", async () => {
  await withDirs(async (dirs) => {
    const env = fakeEnv(dirs);
    const shell = await build(shellTool, env);
    const ctx = fakeCtx({ id: "call-bg" });
    const cmd = "echo hello; sleep 0.3; echo bye >&2";
    const rv = await call(
      shell,
      { command: cmd, run_in_background: true, description: "  greet  ", timeout: 30 },
      ctx,
    );
    assertEquals(rv.is_error, false);
    assertEquals(ctx.asks[0].action, "run background command");
    assertEquals(ctx.asks[0].description, `Run background command \`${cmd}\``);
    const out = rv.output as string;
    const id = /^task_id: (bash-[0-9a-f]{8})\n/.exec(out)?.[1];
    assert(id, out);
    assert(
      out.startsWith(
        `task_id: ${id}\nkind: bash\nstatus: running\ndescription: greet\ncommand: ${cmd}\n` +
          "automatic_notification: true\nnext_step: ",
      ),
      out,
    );
    assertStringIncludes(out, "/task");
    assertEquals(rv.message, "Background task started.");
    assertEquals(briefOf(rv), `Started ${id}`);
    assertEquals(rv.display[1], {
      type: "background_task",
      task_id: id,
      kind: "bash",
      status: "running",
      description: "greet",
    });

    const list = await build(taskListTool, env);
    const active = await call(list, {}, fakeCtx());
    assertStringIncludes(
      active.output as string,
      `active_background_tasks: 1\n\n[1]\ntask_id: ${id}`,
    );
    assertEquals(active.message, "Task list retrieved.");

    const output = await build(taskOutputTool, env);
    const snap = await call(output, { task_id: id, block: true, timeout: 10 }, fakeCtx());
    assertEquals(snap.is_error, false);
    assertEquals(snap.message, "Task output retrieved.");
    const outputPath = `${await Deno.realPath(dirs.sessionDir)}/tasks/${id}/output.log`;
    const text = snap.output as string;
    assert(
      text.startsWith(
        `retrieval_status: success\ntask_id: ${id}\nkind: bash\nstatus: completed\n` +
          `description: greet\ncommand: ${cmd}\ninterrupted: false\ntimed_out: false\n` +
          "terminal_reason: completed\nexit_code: 0\n\n" +
          `output_path: ${outputPath}\noutput_size_bytes: 10\noutput_preview_bytes: 10\n` +
          "output_truncated: false\n\nfull_output_available: true\nfull_output_tool: ReadFile\n" +
          "full_output_hint: ",
      ),
      text,
    );
    assert(text.endsWith("\n\n[output]\nhello\nbye"), text);

    const taskDir = `${dirs.sessionDir}/tasks/${id}`;
    const readJson = async (name: string) =>
      JSON.parse(await Deno.readTextFile(`${taskDir}/${name}`));
    assertEquals(
      (await Array.fromAsync(Deno.readDir(taskDir))).map((e) => e.name).sort(),
      ["consumer.json", "control.json", "output.log", "runtime.json", "spec.json"],
    );
    const spec = await readJson("spec.json");
    assertEquals(spec.kind, "bash");
    assertEquals(spec.tool_call_id, "call-bg");
    assertEquals(spec.command, cmd);
    const runtime = await readJson("runtime.json");
    assertEquals(runtime.status, "completed");
    assertEquals(runtime.exit_code, 0);
    assertEquals(runtime.worker_pid, Deno.pid);
    assertEquals(typeof runtime.child_pid, "number");
    assertEquals(runtime.child_pgid, runtime.child_pid);
    assertEquals(runtime.heartbeat_at, runtime.finished_at);
    assertEquals(await readJson("control.json"), {
      kill_requested_at: null,
      kill_reason: null,
      force: false,
    });
    const consumer = await readJson("consumer.json");
    assertEquals(consumer.last_seen_output_size, 10);
    assertEquals(await Deno.readTextFile(outputPath), "hello\nbye\n");

    assertEquals(
      (await call(list, {}, fakeCtx())).output,
      "active_background_tasks: 0\n[no tasks]",
    );
    const all = await call(list, { active_only: false }, fakeCtx());
    assertEquals(
      all.output,
      `background_tasks: 1\n\n[1]\ntask_id: ${id}\nkind: bash\nstatus: completed\n` +
        `description: greet\ncommand: ${cmd}\nexit_code: 0`,
    );
    assertEquals(all.display, [{
      type: "background_task",
      task_id: id,
      kind: "bash",
      status: "completed",
      description: "greet",
    }]);
  });
});

Deno.test("TaskOutput without blocking is not_ready; TaskStop kills the task's group", async () => {
  await withDirs(async (dirs) => {
    const env = fakeEnv(dirs);
    const shell = await build(shellTool, env);
    const started = await call(
      shell,
      {
        command: "echo leader=$$; sleep 30 & echo gc=$!; wait",
        run_in_background: true,
        description: "sleeper",
        timeout: 600,
      },
      fakeCtx(),
    );
    const id = /task_id: (\S+)/.exec(started.output as string)![1];

    const output = await build(taskOutputTool, env);
    // Poll until both pids are in the task's output (the state), however slow the start.
    let text = "";
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const snap = await call(output, { task_id: id }, fakeCtx());
      text = snap.output as string;
      if (text.includes("gc=")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert(text.startsWith("retrieval_status: not_ready\n"), text);
    assertStringIncludes(text, "status: running\n");
    const [leader] = pidsIn(text, "leader");
    const [gc] = pidsIn(text, "gc");
    assertEquals(isAlive(gc), true);

    const waited = await call(output, { task_id: id, block: true, timeout: 0 }, fakeCtx());
    assert((waited.output as string).startsWith("retrieval_status: timeout\n"));

    const stop = await build(taskStopTool, env);
    const ctx = fakeCtx();
    const stopped = await call(stop, { task_id: id }, ctx);
    assertEquals(ctx.asks[0].action, "stop background task");
    assertEquals(ctx.asks[0].description, `Stop background task \`${id}\``);
    assertEquals(stopped.is_error, false);
    assertEquals(stopped.message, "Task stop requested.");
    assertEquals(
      stopped.output,
      `task_id: ${id}\nkind: bash\nstatus: killed\ndescription: sleeper\n` +
        "command: echo leader=$$; sleep 30 & echo gc=$!; wait\nexit_code: -15\n" +
        "reason: Stopped by TaskStop",
    );
    assert(await eventually(() => liveGroupMembers(leader).length === 0), "group survived");
    assert(await eventually(() => !isAlive(gc)), "grandchild survived");

    const missing = await call(stop, { task_id: "bash-00000000" }, fakeCtx());
    assertEquals(missing.message, "Task not found: bash-00000000");
    assertEquals(briefOf(missing), "Task not found");
    const bogus = await call(output, { task_id: "../../etc" }, fakeCtx());
    assertEquals(bogus.message, "Task not found: ../../etc");
  });
});

Deno.test("background tasks: limit, timeout, root-only and plan mode", async () => {
  await withDirs(async (dirs) => {
    const env = fakeEnv(dirs, {
      background: { ...fakeEnv(dirs).background, maxRunningTasks: 1 },
    });
    const shell = await build(shellTool, env);
    const first = await call(
      shell,
      { command: "sleep 30", run_in_background: true, description: "one", timeout: 1 },
      fakeCtx(),
    );
    assertEquals(first.is_error, false);
    const second = await call(
      shell,
      { command: "true", run_in_background: true, description: "two" },
      fakeCtx(),
    );
    assertEquals(second.is_error, true);
    assertMatch(second.message, /^Failed to start background task: Too many background tasks/);
    assertStringIncludes(second.message, "limit: 1");
    assertEquals(briefOf(second), "Start failed");

    const id = /task_id: (\S+)/.exec(first.output as string)![1];
    const output = await build(taskOutputTool, env);
    const snap = (await call(output, { task_id: id, block: true, timeout: 10 }, fakeCtx()))
      .output as string;
    assertStringIncludes(snap, "status: failed\n");
    assertStringIncludes(snap, "timed_out: true\nterminal_reason: timed_out\n");
    assertStringIncludes(snap, "reason: Command timed out after 1s\n");
    assertStringIncludes(snap, "[output]\n[no output available]");

    const sub = fakeEnv(dirs, { isRoot: false });
    for (const f of [taskListTool, taskOutputTool, taskStopTool]) {
      const t = await build(f, sub);
      const rv = await call(t, { task_id: id }, fakeCtx());
      assertEquals(rv.message, "Background tasks can only be managed by the root agent.");
      assertEquals(briefOf(rv), "Background task unavailable");
    }
    const plan = fakeEnv(dirs, { planMode: () => ({ active: true, planFile: "/tmp/p.md" }) });
    const blocked = await call(await build(taskStopTool, plan), { task_id: id }, fakeCtx());
    assertEquals(blocked.message, "TaskStop is not available in plan mode.");
    assertEquals(briefOf(blocked), "Blocked in plan mode");
  });
});

Deno.test("tasks left running by an earlier run are reported as lost", async () => {
  await withDirs(async (dirs) => {
    const id = "bash-abcdef12";
    const dir = `${dirs.sessionDir}/tasks/${id}`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/spec.json`,
      JSON.stringify({ id, kind: "bash", description: "old", created_at: 1 }),
    );
    // No heartbeat since it started long ago: its worker is gone.
    await Deno.writeTextFile(
      `${dir}/runtime.json`,
      JSON.stringify({ status: "running", started_at: 1, updated_at: 1 }),
    );
    const manager = dirs.run.tasks;
    const [rec] = await manager.list({ activeOnly: false });
    assertEquals(rec.status, "lost");
    assertEquals(rec.failure_reason, "Background worker never heartbeat after startup");
    assertEquals(await manager.list(), []);
    const onDisk = JSON.parse(await Deno.readTextFile(`${dir}/runtime.json`));
    assertEquals(onDisk.status, "lost");
    assertEquals(onDisk.failure_reason, "Background worker never heartbeat after startup");
  });
});
