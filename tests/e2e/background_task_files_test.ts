/**
 * Background task files in the reference's layout (`tasks/<id>/spec.json`, `runtime.json`,
 * `control.json`, `consumer.json`, `output.log`) after a task completes, is stopped through
 * its control file, loses its process to a kill -9, and outlives kimi (keep_alive_on_exit).
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire } from "../helpers/wire_process.ts";

const FILES = ["consumer.json", "control.json", "output.log", "runtime.json", "spec.json"];
const SPEC_KEYS = [
  "command",
  "created_at",
  "cwd",
  "description",
  "id",
  "kind",
  "kind_payload",
  "owner_role",
  "session_id",
  "shell_name",
  "shell_path",
  "timeout_s",
  "tool_call_id",
  "version",
];
const RUNTIME_KEYS = [
  "child_pgid",
  "child_pid",
  "exit_code",
  "failure_reason",
  "finished_at",
  "heartbeat_at",
  "interrupted",
  "started_at",
  "status",
  "timed_out",
  "updated_at",
  "worker_pid",
];

async function taskDirs(sessionDir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${sessionDir}/tasks`)) {
    if (e.isDirectory) out.push(`${sessionDir}/tasks/${e.name}`);
  }
  return out;
}

const readJson = async (path: string) => JSON.parse(await Deno.readTextFile(path));

async function waitFor<T>(probe: () => Promise<T | null>, what: string, ms = 30000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await probe().catch(() => null);
    if (v !== null) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The task's runtime once it has `status`. */
function waitForStatus(dir: string, status: string, what: string) {
  return waitFor(async () => {
    const rt = await readJson(`${dir}/runtime.json`);
    return rt.status === status ? rt : null;
  }, what);
}

/**
 * Kill what is left of a task's process group: the processes of group `pgid` that run in the
 * sandbox `root`. Only those: once a group is gone its number can be reused (pid_max is often
 * 32768), and signalling the number blindly could kill another program's group (a concurrent
 * run of the suite lost its `sleep` that way).
 */
function killGroup(pgid: unknown, root: string): void {
  if (typeof pgid !== "number") return;
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      // Fields after the command name: state, ppid, pgrp, ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== pgid || !Deno.readLinkSync(`/proc/${e.name}/cwd`).startsWith(root)) continue;
      Deno.kill(Number(e.name), "SIGKILL");
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
}

const FAST = {
  background: { wait_poll_interval_ms: 50, worker_heartbeat_interval_ms: 100 },
};

Deno.test("a completed background Shell task leaves the reference's five files", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("t1", "Shell", {
        command: "echo one; echo two",
        run_in_background: true,
        description: "quick",
      }),
      "text: started",
      "text: noted",
    ], FAST);
    const r = await sb.run(["--print", "--config-file", config, "-p", "go"]);
    assertEquals(r.code, 0, r.stderr);
    const [session] = await sb.sessionDirs();
    const [dir] = await taskDirs(session);
    assertEquals((await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort(), FILES);
    const spec = await readJson(`${dir}/spec.json`);
    assertEquals(Object.keys(spec).sort(), SPEC_KEYS);
    assertEquals(
      {
        version: spec.version,
        kind: spec.kind,
        session_id: spec.session_id,
        description: spec.description,
        tool_call_id: spec.tool_call_id,
        owner_role: spec.owner_role,
        command: spec.command,
        shell_name: spec.shell_name,
        cwd: spec.cwd,
        timeout_s: spec.timeout_s,
        kind_payload: spec.kind_payload,
      },
      {
        version: 1,
        kind: "bash",
        session_id: session.split("/").pop(),
        description: "quick",
        tool_call_id: "t1",
        owner_role: "root",
        command: "echo one; echo two",
        shell_name: "bash",
        cwd: sb.workDir,
        timeout_s: 60,
        kind_payload: null,
      },
    );
    assertEquals(spec.id, dir.split("/").pop());
    const runtime = await readJson(`${dir}/runtime.json`);
    assertEquals(Object.keys(runtime).sort(), RUNTIME_KEYS);
    assertEquals(
      [runtime.status, runtime.exit_code, runtime.interrupted, runtime.timed_out],
      ["completed", 0, false, false],
    );
    assertEquals(runtime.failure_reason, null);
    assertEquals(runtime.child_pgid, runtime.child_pid);
    assert(runtime.worker_pid !== runtime.child_pid);
    assert(runtime.started_at <= runtime.finished_at);
    assertEquals(runtime.heartbeat_at, runtime.finished_at);
    assertEquals(await readJson(`${dir}/control.json`), {
      kill_requested_at: null,
      kill_reason: null,
      force: false,
    });
    assertEquals(await Deno.readTextFile(`${dir}/output.log`), "one\ntwo\n");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("a stop request written to control.json stops a running task (killed)", async () => {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig([
    toolCallLine("t1", "Shell", {
      command: "echo started; sleep 30",
      run_in_background: true,
      description: "long",
    }),
    "text: started",
  ], FAST);
  const wire = spawnWire(sb, ["--yolo", "--config-file", config]);
  let pgid: unknown = null;
  try {
    await wire.call("init", "initialize", { protocol_version: "1.10" });
    await wire.call("p1", "prompt", { user_input: "start" });
    const [session] = await sb.sessionDirs();
    const [dir] = await taskDirs(session);
    const running = await waitForStatus(dir, "running", "running");
    pgid = running.child_pgid;
    // The heartbeat moves while the task runs.
    await waitFor(async () => {
      const rt = await readJson(`${dir}/runtime.json`);
      return rt.heartbeat_at > running.heartbeat_at ? rt : null;
    }, "a fresh heartbeat");
    const requestedAt = Date.now() / 1000;
    await Deno.writeTextFile(
      `${dir}/control.json`,
      JSON.stringify({ kill_requested_at: requestedAt, kill_reason: "Stopped by a test" }),
    );
    const killed = await waitForStatus(dir, "killed", "killed");
    assertEquals(
      [killed.interrupted, killed.failure_reason, killed.exit_code],
      [true, "Stopped by a test", -15],
    );
    const control = await readJson(`${dir}/control.json`);
    assertEquals(control.kill_reason, "Stopped by a test");
    assertEquals(control.kill_requested_at, requestedAt);
    assertEquals(await Deno.readTextFile(`${dir}/output.log`), "started\n");
    assertEquals((await wire.finish()).code, 0);
  } finally {
    killGroup(pgid, sb.root);
    await sb.cleanup();
  }
});

Deno.test("kill -9 of kimi: the next run marks its task lost, naming the dead worker", async () => {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig([
    toolCallLine("t1", "Shell", {
      command: "sleep 30",
      run_in_background: true,
      description: "orphan",
    }),
    "text: started",
  ], FAST);
  // The next run (a new process) reads its own script.
  const listConfig = await sb.scriptedConfig([
    toolCallLine("t2", "TaskList", { active_only: false }),
    "text: listed",
  ], FAST);
  const wire = spawnWire(sb, ["--yolo", "--config-file", config]);
  let pgid: unknown = null;
  try {
    await wire.call("init", "initialize", { protocol_version: "1.10" });
    await wire.call("p1", "prompt", { user_input: "start" });
    const [session] = await sb.sessionDirs();
    const [dir] = await taskDirs(session);
    const running = await waitForStatus(dir, "running", "running");
    pgid = running.child_pgid;
    assertEquals(running.worker_pid, wire.child.pid);

    wire.child.kill("SIGKILL");
    await wire.child.status;

    const sessionId = session.split("/").pop()!;
    // the reference's transcript format shows the tool result (the default prints the answer)
    const r = await sb.run([
      "--print",
      "--output-format",
      "text",
      "--config-file",
      listConfig,
      "--session",
      sessionId,
      "-p",
      "list",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const reason = `Background worker (pid ${wire.child.pid}) is no longer running`;
    assertStringIncludes(r.stdout, "status: lost");
    const runtime = await readJson(`${dir}/runtime.json`);
    assertEquals([runtime.status, runtime.failure_reason], ["lost", reason]);
    assert(runtime.finished_at !== null);
  } finally {
    killGroup(pgid, sb.root);
    await sb.cleanup();
  }
});

Deno.test("keep_alive_on_exit: a detached worker finishes the task after kimi exits", async () => {
  const sb = await kimiSandbox();
  const config = await sb.scriptedConfig([
    toolCallLine("t1", "Shell", {
      command: "sleep 1; echo survived",
      run_in_background: true,
      description: "outlives kimi",
    }),
    "text: started",
  ], { background: { ...FAST.background, keep_alive_on_exit: true } });
  const againConfig = await sb.scriptedConfig([
    toolCallLine("t2", "Shell", {
      command: "echo second; sleep 30",
      run_in_background: true,
      description: "stopped later",
    }),
    "text: started again",
  ], { background: { ...FAST.background, keep_alive_on_exit: true } });
  const pgids: unknown[] = [];
  try {
    const r = await sb.run(["--print", "--config-file", config, "-p", "go"]);
    assertEquals(r.code, 0, r.stderr);
    const [session] = await sb.sessionDirs();
    const [dir] = await taskDirs(session);
    // kimi has exited; the worker keeps the heartbeat and writes the end.
    const done = await waitFor(async () => {
      const rt = await readJson(`${dir}/runtime.json`);
      if (rt.child_pgid) pgids.push(rt.child_pgid);
      return rt.status === "completed" ? rt : null;
    }, "the detached task to complete");
    assertEquals(done.exit_code, 0);
    assert(done.worker_pid !== done.child_pid);
    assertEquals(await Deno.readTextFile(`${dir}/output.log`), "survived\n");

    // A second run's task, stopped afterwards through its control file.
    const sessionId = session.split("/").pop()!;
    const r2 = await sb.run([
      "--print",
      "--config-file",
      againConfig,
      "--session",
      sessionId,
      "-p",
      "again",
    ]);
    assertEquals(r2.code, 0, r2.stderr);
    const second = (await taskDirs(session)).find((d) => d !== dir)!;
    const running = await waitForStatus(second, "running", "the second task to run");
    pgids.push(running.child_pgid);
    await waitFor(
      async () => (await Deno.readTextFile(`${second}/output.log`)) === "second\n" || null,
      "the second task's output",
    );
    await Deno.writeTextFile(
      `${second}/control.json`,
      JSON.stringify({ kill_requested_at: Date.now() / 1000, kill_reason: "enough", force: false }),
    );
    const killed = await waitForStatus(second, "killed", "the worker to stop its task");
    assertEquals([killed.failure_reason, killed.interrupted], ["enough", true]);
    assertEquals(await Deno.readTextFile(`${second}/output.log`), "second\n");
  } finally {
    for (const p of pgids) killGroup(p, sb.root);
    await sb.cleanup();
  }
});
