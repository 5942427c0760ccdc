/**
 * Goals end to end through `main.ts` print mode with `_scripted_echo`: a goal pursued over
 * several turns to completion, one that exhausts its budget, pause/resume and blocked exit
 * codes, survival across compaction, `/undo` and a kill -9 + resume.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import {
  denoDir,
  type KimiSandbox,
  kimiSandbox,
  MAIN_TS,
  toolCallLine,
} from "../helpers/kimi_process.ts";

const SESSION = "goal-e2e-session";

async function state(sb: KimiSandbox): Promise<Record<string, any>> {
  const [dir] = await sb.sessionDirs();
  return JSON.parse(await Deno.readTextFile(`${dir}/state.json`));
}

async function wireEvents(sb: KimiSandbox): Promise<{ type: string; payload: any }[]> {
  const [dir] = await sb.sessionDirs();
  const text = await Deno.readTextFile(`${dir}/wire.jsonl`);
  return text.trim().split("\n").slice(1).map((l) => JSON.parse(l).message);
}

async function runGoal(sb: KimiSandbox, scripts: string[], prompt: string) {
  const config = await sb.scriptedConfig(scripts);
  return await sb.run(["--print", "--config-file", config, "-S", SESSION, "-p", prompt]);
}

const updateGoal = (id: string, args: Record<string, unknown>) =>
  toolCallLine(id, "UpdateGoal", args);

Deno.test("goal: pursued over three turns until the model marks it complete (exit 0)", async () => {
  const sb = await kimiSandbox();
  try {
    const r = await runGoal(sb, [
      updateGoal("n1", { note: "drafted part one" }),
      "text: first slice done",
      "text: second slice done",
      updateGoal("c1", { status: "complete" }),
    ], "/goal Write the three-part report");
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const events = await wireEvents(sb);
    // One outer turn (the command) plus two continuation turns nested in it.
    assertEquals(events.filter((e) => e.type === "TurnBegin").length, 3);
    const goalUpdates = events.filter((e) => e.type === "GoalUpdate").map((e) => e.payload);
    assertEquals(goalUpdates[0].goal.objective, "Write the three-part report");
    assertEquals(goalUpdates[0].goal.status, "active");
    assert(goalUpdates.some((u) => u.goal?.notes.includes("drafted part one")));
    const last = goalUpdates.at(-1);
    assertEquals(last.outcome, "achieved");
    assertEquals(last.goal, null);
    const st = await state(sb);
    assertEquals(st.goal, null);
    // The continuation prompts reached the model's context.
    const [dir] = await sb.sessionDirs();
    const ctx = await Deno.readTextFile(`${dir}/context.jsonl`);
    assertStringIncludes(ctx, "Continue working toward the goal (goal turn 2)");
    assertStringIncludes(ctx, "Continue working toward the goal (goal turn 3)");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("goal: a turn budget runs out (exit 4, status budget_exhausted), resume refuses until raised", async () => {
  const sb = await kimiSandbox();
  try {
    let r = await runGoal(
      sb,
      ["text: polished once", "text: polished twice"],
      "/goal --max-turns 2 Polish the docs",
    );
    assertEquals(r.code, 4, r.stdout + r.stderr);
    let st = await state(sb);
    assertEquals(st.goal.status, "budget_exhausted");
    assertEquals(st.goal.usage.turns, 2);
    assertEquals(st.goal.reason, "budget: turns 2/2");

    r = await runGoal(sb, [], "/goal resume");
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertStringIncludes(r.stdout, "budget is used up (turns 2/2); raise it before resuming");

    r = await runGoal(sb, [], "/goal budget 3 turns");
    assertStringIncludes(r.stdout, "Goal budget set: 3 turns.");
    r = await runGoal(sb, [updateGoal("c", { status: "complete" })], "/goal resume");
    assertEquals(r.code, 0, r.stdout + r.stderr);
    st = await state(sb);
    assertEquals(st.goal, null);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("goal: paused by the model (exit 6), status shown, resumed to completion; blocked exits 3", async () => {
  const sb = await kimiSandbox();
  try {
    let r = await runGoal(
      sb,
      [updateGoal("p", { status: "paused", reason: "waiting for the API key" })],
      "/goal Ship the integration",
    );
    assertEquals(r.code, 6, r.stdout + r.stderr);
    let st = await state(sb);
    assertEquals(st.goal.status, "paused");

    r = await runGoal(sb, [], "/goal");
    assertEquals(r.code, 0);
    assertStringIncludes(r.stdout, "Goal: Ship the integration");
    assertStringIncludes(r.stdout, "Status: paused (waiting for the API key)");

    r = await runGoal(
      sb,
      ["text: picked it up again", updateGoal("c", { status: "complete" })],
      "/goal resume",
    );
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals((await state(sb)).goal, null);

    r = await runGoal(
      sb,
      [updateGoal("b", { status: "blocked", reason: "the objective contradicts itself" })],
      "/goal Prove 1 + 1 = 3",
    );
    assertEquals(r.code, 3, r.stdout + r.stderr);
    st = await state(sb);
    assertEquals(st.goal.status, "blocked");
    assertEquals(st.goal.reason, "the objective contradicts itself");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("goal: survives /compact (re-inserted into the summary context) and /undo rewinds it", async () => {
  const sb = await kimiSandbox();
  try {
    let r = await runGoal(
      sb,
      [updateGoal("n", { note: "module A migrated" }), "text: slice done"],
      "/goal --max-turns 1 Migrate every module",
    );
    assertEquals(r.code, 4, r.stdout + r.stderr);

    r = await runGoal(sb, ["text: Summary of the work so far."], "/compact");
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const [dir] = await sb.sessionDirs();
    const ctx = await Deno.readTextFile(`${dir}/context.jsonl`);
    assertStringIncludes(ctx, "The session goal before compaction (still current)");
    assertStringIncludes(ctx, "Goal: Migrate every module");
    assertStringIncludes(ctx, "module A migrated");
    let st = await state(sb);
    assertEquals(st.goal.objective, "Migrate every module");
    assertEquals(st.goal.notes, ["module A migrated"]);

    // After compaction the goal is the base of the undo log: a later goal turn is undone
    // back to it, not past it.
    await runGoal(sb, [], "/goal budget 5 turns");
    r = await runGoal(
      sb,
      ["text: more work", updateGoal("p", { status: "paused" })],
      "/goal resume",
    );
    assertEquals(r.code, 6, r.stdout + r.stderr);
    st = await state(sb);
    assertEquals(st.goal.usage.turns, 3);
    // Undoing the last goal turn puts back the goal as it stood before it (two turns used),
    // paused rather than running.
    r = await runGoal(sb, [], "/undo");
    assertEquals(r.code, 0, r.stdout + r.stderr);
    st = await state(sb);
    assertEquals(st.goal.objective, "Migrate every module");
    assertEquals(st.goal.usage.turns, 2);
    assertEquals(st.goal.status, "paused");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("goal: /undo of the turn that set the goal removes it", async () => {
  const sb = await kimiSandbox();
  try {
    let r = await runGoal(sb, ["text: did a slice"], "/goal --max-turns 1 Rename the package");
    assertEquals(r.code, 4, r.stdout + r.stderr);
    assertEquals((await state(sb)).goal.objective, "Rename the package");
    r = await runGoal(sb, [], "/undo");
    assertStringIncludes(r.stdout, "The goal set in the undone turns was removed.");
    assertEquals((await state(sb)).goal, null);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("goal: kill -9 mid-goal, then resume: the goal is kept, paused, and completes", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      "text: first slice done",
      toolCallLine("sh", "Shell", { command: "sleep 60" }),
    ]);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "-A",
        MAIN_TS,
        "--print",
        "--config-file",
        config,
        "-S",
        SESSION,
        "-p",
        "/goal Keep the build green",
      ],
      cwd: sb.workDir,
      clearEnv: true,
      env: {
        HOME: sb.home,
        KIMI_SHARE_DIR: sb.shareDir,
        DENO_DIR: denoDir(),
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        NO_COLOR: "1",
      },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    // Wait until the second goal turn is running its command (the first turn is recorded).
    for (let i = 0;; i++) {
      assert(i < 600, "the goal never reached its second turn");
      const [dir] = await sb.sessionDirs();
      const wire = dir ? await Deno.readTextFile(`${dir}/wire.jsonl`).catch(() => "") : "";
      if (wire.includes("sleep 60")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGKILL");
    await child.status;

    let st = await state(sb);
    assertEquals(st.goal.objective, "Keep the build green");
    assertEquals(st.goal.status, "active");
    assertEquals(st.goal.usage.turns, 1);

    let r = await runGoal(sb, [], "/goal");
    assertStringIncludes(r.stdout, "Status: paused (the session was resumed)");
    r = await runGoal(sb, [updateGoal("c", { status: "complete" })], "/goal resume");
    assertEquals(r.code, 0, r.stdout + r.stderr);
    st = await state(sb);
    assertEquals(st.goal, null);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("goal: the model starts a goal with CreateGoal mid-turn and the run keeps going until it is achieved", async () => {
  const sb = await kimiSandbox();
  try {
    const r = await runGoal(sb, [
      toolCallLine("cg", "CreateGoal", { objective: "Make the suite green" }),
      "text: goal started, first fixes in",
      updateGoal("c", { status: "complete" }),
    ], "keep fixing until the suite is green");
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const updates = (await wireEvents(sb)).filter((e) => e.type === "GoalUpdate");
    assertEquals(updates[0].payload.goal.objective, "Make the suite green");
    assertEquals(updates.at(-1)!.payload.outcome, "achieved");
    assertEquals((await state(sb)).goal, null);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("goal: the goal-loop tools reach the model only while a goal exists (OpenAI path)", async () => {
  const sb = await kimiSandbox();
  const mock = await startMockOpenAI();
  try {
    const config = await sb.openaiConfig(mock.url);
    const toolNames = (i: number): string[] =>
      (mock.requests.filter((r) => r.method === "POST")[i].body.tools ?? []).map((
        t: { function: { name: string } },
      ) => t.function.name);
    mock.enqueue({ text: "hi" });
    let r = await sb.run(["--print", "--config-file", config, "-S", SESSION, "-p", "hello"]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    let names = toolNames(0);
    assert(names.includes("CreateGoal") && names.includes("AgentSwarm"), names.join());
    for (const hidden of ["GetGoal", "UpdateGoal", "SetGoalBudget"]) {
      assert(!names.includes(hidden), hidden);
    }

    mock.enqueue({
      toolCalls: [{
        id: "u1",
        name: "UpdateGoal",
        arguments: JSON.stringify({ status: "complete" }),
      }],
    });
    r = await sb.run(["--print", "--config-file", config, "-S", SESSION, "-p", "/goal Say hi"]);
    assertEquals(r.code, 0, r.stdout + r.stderr);
    names = toolNames(1);
    for (const shown of ["GetGoal", "UpdateGoal", "SetGoalBudget"]) {
      assert(names.includes(shown), shown);
    }
    assertEquals((await state(sb)).goal, null);
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});
