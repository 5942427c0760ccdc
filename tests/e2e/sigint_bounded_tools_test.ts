/**
 * SIGINT during a wide step, a swarm or a goal: kimi stops every child and exits with the
 * documented code (1 for an interrupted run, 6 for a stopped goal), never with
 * "Uncaught (in promise) RunCancelled"; one reply with 400 tool calls runs them with a bounded
 * concurrency.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, MAIN_TS, sandboxEnv } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { MAX_PARALLEL_TOOL_CALLS } from "../../lib/soul/soul.ts";

// A duration no other process uses (another copy of the suite included): its processes can be
// counted.
const SLEEP = `30.${crypto.getRandomValues(new Uint32Array(1))[0]}`;

function sleepers(): number {
  const out = new Deno.Command("pgrep", { args: ["-f", `sleep ${SLEEP}`], stdout: "piped" })
    .outputSync();
  return new TextDecoder().decode(out.stdout).trim().split("\n").filter(Boolean).length;
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000; // generous: a loaded machine
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

Deno.test("SIGINT: 400 tool calls in one reply run 16 at a time; an interrupt stops them all and exits 1", async () => {
  const mock = await startMockOpenAI();
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url);
    const log = `${sb.root}/started.txt`;
    const calls = Array.from({ length: 400 }, (_, i) => ({
      id: `c${i}`,
      name: "Shell",
      arguments: JSON.stringify({ command: `echo ${i} >> ${log}; sleep ${SLEEP}` }),
    }));
    mock.enqueue({ toolCalls: calls });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN_TS, "--print", "--config-file", config, "-p", "go"],
      env: sandboxEnv(sb),
      cwd: sb.workDir,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const started = () => {
      try {
        return Deno.readTextFileSync(log).trim().split("\n").length;
      } catch {
        return 0;
      }
    };
    // Every running call blocks in `sleep`: the count stops at the limit.
    await waitFor(() => started() >= MAX_PARALLEL_TOOL_CALLS, "the first calls to start");
    child.kill("SIGINT");
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 1, stdout + stderr);
    assertStringIncludes(stdout, "Interrupted by user");
    assert(!stderr.includes("Uncaught"), stderr);
    assertEquals(started(), MAX_PARALLEL_TOOL_CALLS, "no call starts after the interrupt");
    await waitFor(() => sleepers() === 0, "every child to be stopped");
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});

Deno.test("SIGINT: a goal running a swarm stops with exit 6, every item stopped", async () => {
  const mock = await startMockOpenAI({ auto: () => ({ stall: true, text: "working" }) });
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url);
    mock.enqueue({
      toolCalls: [{
        id: "tc-swarm",
        name: "AgentSwarm",
        arguments: JSON.stringify({
          description: "review",
          prompt_template: "Review {{item}}.",
          items: Array.from({ length: 12 }, (_, i) => `pkg-${i}`),
          subagent_type: "coder",
          concurrency: 3,
        }),
      }],
    });
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        MAIN_TS,
        "--print",
        "--config-file",
        config,
        "-p",
        "/goal review every package",
      ],
      env: sandboxEnv(sb),
      cwd: sb.workDir,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // The parent's request and three items' requests are in flight (they stall).
    await waitFor(() => mock.requests.length >= 4, "three swarm items to be running");
    child.kill("SIGINT");
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 6, stdout + stderr);
    assertStringIncludes(stdout, "Interrupted by user");
    assert(!stderr.includes("Uncaught"), stderr);
    assertEquals(mock.requests.length, 4, "no item starts after the interrupt");
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});
