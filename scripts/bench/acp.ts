/**
 * ACP benchmark (`kimi acp` driven by the ACP SDK's real client side), beside the wire
 * server's: for each run, spawn `main.ts acp` and time
 *
 * - spawn → `initialize` response,
 * - `initialize` sent → first `session/update` of a prompt (initialize, `session/new`, then a
 *   `_scripted_echo` prompt whose first text chunk is the update waited for),
 * - `session/prompt` sent → first update,
 *
 * interleaved round-robin with `main.ts --wire` spawn → `initialize` (the wire benchmark's
 * measurement) so the ACP figures are reported as ratios against the wire server measured in
 * the same run.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/acp.ts [--runs=N] [--warmup=N]`
 *
 * @module
 */
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import * as acp from "@agentclientprotocol/sdk";
import { type ChildSandbox, createSandbox, MAIN_TS } from "./child_env.ts";
import {
  formatMs,
  formatRatio,
  formatSummary,
  markdownTable,
  summarize,
  type Summary,
} from "./stats.ts";
import { timeInitialize, writeConfig } from "./wire.ts";

/** Options of {@link runAcpBench}. */
export interface AcpBenchOptions {
  /** Measured runs (of each server). Default 15. */
  runs?: number;
  /** Discarded warm-up runs. Default 3. */
  warmup?: number;
}

/** Result of {@link runAcpBench}. */
export interface AcpBenchResult {
  /** `main.ts --wire`, spawn → initialize response (the baseline). */
  wireInitialize: Summary;
  /** `main.ts acp`, spawn → initialize response. */
  initialize: Summary;
  /** `initialize` sent → first prompt update. */
  initializeToFirstUpdate: Summary;
  /** `session/prompt` sent → first update. */
  promptToFirstUpdate: Summary;
}

interface AcpRun {
  initialize: number;
  initializeToFirstUpdate: number;
  promptToFirstUpdate: number;
}

async function timeAcp(sb: ChildSandbox, config: string): Promise<AcpRun> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", DENO_V8_FLAGS_ARG, "-A", MAIN_TS, "--config-file", config, "acp"],
    cwd: sb.workDir,
    env: sb.env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const first = Promise.withResolvers<number>();
  const app = acp.client({ name: "bench" }).onNotification(
    acp.methods.client.session.update,
    ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk") first.resolve(performance.now());
    },
  );
  const stdin = new TransformStream<Uint8Array, Uint8Array>();
  const closeStdin = new AbortController();
  const piping = stdin.readable.pipeTo(child.stdin, { signal: closeStdin.signal }).catch(() => {});
  const conn = app.connect(acp.ndJsonStream(stdin.writable, child.stdout));
  let run: AcpRun;
  try {
    const tInit = performance.now();
    await conn.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
    });
    const initialized = performance.now();
    const { sessionId } = await conn.agent.request(acp.methods.agent.session.new, {
      cwd: sb.workDir,
      mcpServers: [],
    });
    const tPrompt = performance.now();
    const done = conn.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hi" }],
    });
    const firstAt = await first.promise;
    const r = await done;
    if (r.stopReason !== "end_turn") throw new Error(`prompt ended with ${r.stopReason}`);
    run = {
      initialize: initialized - t0,
      initializeToFirstUpdate: firstAt - tInit,
      promptToFirstUpdate: firstAt - tPrompt,
    };
  } finally {
    closeStdin.abort();
    await piping;
    conn.close();
  }
  const status = await child.status;
  if (!status.success) throw new Error(`kimi acp exited with code ${status.code}`);
  return run;
}

/** Run the ACP benchmark. */
export async function runAcpBench(opts: AcpBenchOptions = {}): Promise<AcpBenchResult> {
  const runs = opts.runs ?? 15;
  const warmup = opts.warmup ?? 3;
  const sb = await createSandbox();
  try {
    const wireRuns: number[] = [];
    const acpRuns: AcpRun[] = [];
    for (let i = 0; i < warmup + runs; i++) {
      // a fresh script file per run: each prompt consumes the first script
      const config = await writeConfig(sb, ["text: first chunk\ntext: second chunk"]);
      const wire = await timeInitialize(sb, config);
      const a = await timeAcp(sb, config);
      if (i >= warmup) {
        wireRuns.push(wire);
        acpRuns.push(a);
      }
    }
    return {
      wireInitialize: summarize(wireRuns),
      initialize: summarize(acpRuns.map((r) => r.initialize)),
      initializeToFirstUpdate: summarize(acpRuns.map((r) => r.initializeToFirstUpdate)),
      promptToFirstUpdate: summarize(acpRuns.map((r) => r.promptToFirstUpdate)),
    };
  } finally {
    await sb.cleanup();
  }
}

/** The result as Markdown. */
export function acpMarkdown(r: AcpBenchResult): string {
  const base = r.wireInitialize.median;
  const rows = [
    ["`kimi --wire` spawn → `initialize` response (baseline)", formatSummary(r.wireInitialize), ""],
    [
      "`kimi acp` spawn → `initialize` response",
      formatSummary(r.initialize),
      `${formatRatio(r.initialize.median, base)} of the wire server's`,
    ],
    [
      "`initialize` sent → first `session/update` (via `session/new`, `session/prompt`)",
      formatSummary(r.initializeToFirstUpdate),
      `${formatRatio(r.initializeToFirstUpdate.median, base)} of the wire spawn → initialize`,
    ],
    [
      "`session/prompt` sent → first update",
      formatSummary(r.promptToFirstUpdate),
      `${formatMs(r.promptToFirstUpdate.median)} median`,
    ],
  ];
  return `${markdownTable(["Metric", "Median (min–max)", "Notes"], rows)}\n\n` +
    `${r.initialize.n} runs after warm-up, interleaved with the wire server's.`;
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  console.log(acpMarkdown(await runAcpBench({ runs: intFlag("runs"), warmup: intFlag("warmup") })));
}
