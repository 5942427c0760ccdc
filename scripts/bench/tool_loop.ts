/**
 * Tool-loop benchmark: `kimi --print` runs a 10-step tool loop against the zero-latency mock
 * OpenAI server (tests/helpers/mock_openai.ts). The mock answers every request with one tool
 * call (`Think` with a short thought when the agent has it, else `Shell` running `true`) until
 * 10 tool steps are done, then with a final text.
 *
 * Measured per run: launch → first model request (the mock stamps `performance.now()` when a
 * request arrives; launch is the moment just before `spawn()`), harness time per tool step (the
 * gap between consecutive requests: stream parse, tool execution, context update, next request
 * build), total wall time, peak RSS of the child (GNU `/usr/bin/time -f %M` when installed, else
 * polling `/proc/<pid>/status` VmHWM) and the bytes of the first request body. Each figure is
 * the median of the runs (one warm-up run is discarded). The baseline, measured in the same run
 * and under the same RSS wrapper, is `deno run` of a script that prints one line: spawn → first
 * stdout bytes, and its peak RSS.
 *
 * The default agent (full tool set) is used. If it fails to load (tools still being written),
 * the run falls back to an agent with only Shell and Think, and the result says so: such
 * figures are not final.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/tool_loop.ts [--runs=N] [--steps=N]`
 *
 * @module
 */
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { startMockOpenAI } from "../../tests/helpers/mock_openai.ts";
import { type ChildSandbox, createSandbox, MAIN_TS } from "./child_env.ts";
import {
  formatBytes,
  formatMs,
  formatRatio,
  formatSummary,
  markdownTable,
  median,
  summarize,
  type Summary,
} from "./stats.ts";

/** Options of {@link runToolLoopBench}. */
export interface ToolLoopOptions {
  /** Measured runs. Default 9. */
  runs?: number;
  /** Tool steps per run. Default 10. */
  steps?: number;
  /**
   * What `deno run --no-prompt` starts: flags and entry, without kimi's arguments. Default
   * `[V8 flags, "-A", "<repo>/main.ts"]` (the source, as the README runs it); `[V8 flags, "-A",
   * "--no-config", "<dir>/main.js"]` for a bundle.
   */
  entry?: string[];
}

/** Measurements of one run. */
export interface ToolLoopRun {
  /** ms from spawn to the first model request. */
  firstRequestMs: number;
  /** ms between consecutive model requests (one per tool step). */
  stepGapsMs: number[];
  /** ms from spawn to exit. */
  totalMs: number;
  /** Peak RSS of the child in bytes. */
  peakRssBytes: number;
  /** Bytes of the first request body. */
  firstRequestBytes: number;
  /** Bytes of the system prompt in the first request (UTF-8). */
  systemPromptBytes: number;
  /** Bytes of the JSON of the `tools` array in the first request. */
  toolSchemaBytes: number;
  /** Tool names offered in the first request. */
  toolNames: string[];
  /** Tool called at each step. */
  toolUsed: string;
}

/** Result of {@link runToolLoopBench}. */
export interface ToolLoopResult {
  /** `default`, or `fallback` when the default agent failed to load. */
  agent: "default" | "fallback";
  /** Why the default agent could not be used (fallback only). */
  fallbackReason?: string;
  /** How peak RSS was measured. */
  rssMethod: string;
  /** Tool steps per run. */
  steps: number;
  /** Every measured run. */
  runs: ToolLoopRun[];
  /** Median launch → first request. */
  firstRequest: Summary;
  /**
   * Launch → first request over the baseline run just before it, run by run: a pair shares the
   * machine's load of its moment, so this ratio holds where load drifts during the bench.
   */
  firstRequestRatio: Summary;
  /** Per-run median of the step gaps, summarized over runs. */
  perStep: Summary;
  /** Total wall time. */
  total: Summary;
  /** Peak RSS in bytes. */
  peakRss: Summary;
  /** First request body bytes. */
  firstRequestBytes: Summary;
  /** Baseline: spawn → first line of a one-line deno script. */
  baselineFirstLine: Summary;
  /** Baseline: peak RSS of that script in bytes. */
  baselineRss: Summary;
}

const CONFIG_TEMPLATE = (url: string) => ({
  default_model: "mock",
  models: { mock: { provider: "mock", model: "mock-model", max_context_size: 100000 } },
  providers: { mock: { type: "openai_legacy", base_url: url, api_key: "sk-test" } },
});

const FALLBACK_AGENT = 'version: 1\nagent:\n  extend: default\n  tools: ["Shell", "Think"]\n';

const GNU_TIME = "/usr/bin/time";

async function hasGnuTime(): Promise<boolean> {
  try {
    const out = await new Deno.Command(GNU_TIME, {
      args: ["-f", "%M", "true"],
      stdout: "null",
      stderr: "piped",
    }).output();
    return out.success && /^\d+\s*$/.test(new TextDecoder().decode(out.stderr));
  } catch {
    return false;
  }
}

/** A child spawned (optionally under GNU time) with its peak RSS observed. */
interface RssChild {
  child: Deno.ChildProcess;
  /** Resolves after exit with the peak RSS in bytes (0 if unknown). */
  peakRss: () => Promise<number>;
}

function spawnWithRss(
  args: string[],
  opts: { sb: ChildSandbox; gnuTime: boolean; stdout: "piped" | "null"; tag: string },
): RssChild {
  const rssFile = `${opts.sb.root}/rss-${opts.tag}-${crypto.randomUUID()}.txt`;
  const command = opts.gnuTime ? GNU_TIME : Deno.execPath();
  const fullArgs = opts.gnuTime ? ["-f", "%M", "-o", rssFile, Deno.execPath(), ...args] : args;
  const child = new Deno.Command(command, {
    args: fullArgs,
    cwd: opts.sb.workDir,
    env: opts.sb.env,
    stdin: "null",
    stdout: opts.stdout,
    stderr: "piped",
  }).spawn();
  let polledKb = 0;
  let polling = true;
  const poll = async () => {
    // VmHWM is the high-water mark, so the last successful read is the peak seen so far.
    while (polling) {
      try {
        const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
        const kb = Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0);
        if (kb > polledKb) polledKb = kb;
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  const poller = opts.gnuTime ? Promise.resolve() : poll();
  return {
    child,
    peakRss: async () => {
      await child.status;
      polling = false;
      await poller;
      if (!opts.gnuTime) return polledKb * 1024;
      const text = await Deno.readTextFile(rssFile).catch(() => "");
      const kb = Number(text.trim().split("\n").pop());
      return Number.isFinite(kb) ? kb * 1024 : 0;
    },
  };
}

class DefaultAgentUnavailable extends Error {}

/** The default {@link ToolLoopOptions.entry}: the source. */
export const SOURCE_ENTRY: readonly string[] = [DENO_V8_FLAGS_ARG, "-A", MAIN_TS];

async function oneRun(
  opts: { steps: number; gnuTime: boolean; agentFile?: string; entry: readonly string[] },
): Promise<ToolLoopRun> {
  const sb = await createSandbox();
  const arrivals: number[] = [];
  let toolUsed = "";
  let stepsDone = 0;
  const mock = await startMockOpenAI({
    auto: (body) => {
      arrivals.push(performance.now());
      if (stepsDone >= opts.steps) return { text: "All steps done." };
      stepsDone++;
      const names: string[] = (body?.tools ?? []).map((t: any) => t.function?.name ?? t.name);
      const id = `call_${stepsDone}`;
      if (names.includes("Think")) {
        toolUsed = "Think";
        const thought = JSON.stringify({ thought: `Step ${stepsDone}: keep going.` });
        return { toolCalls: [{ id, name: "Think", arguments: thought }] };
      }
      toolUsed = "Shell";
      return { toolCalls: [{ id, name: "Shell", arguments: JSON.stringify({ command: "true" }) }] };
    },
  });
  try {
    const cfg = `${sb.root}/config.json`;
    await Deno.writeTextFile(cfg, JSON.stringify(CONFIG_TEMPLATE(mock.url)));
    const args = ["run", "--no-prompt", ...opts.entry, "--print", "--output-format"];
    args.push("stream-json", "--config-file", cfg, "-p", "Run the steps.");
    if (opts.agentFile) args.push("--agent-file", opts.agentFile);
    const t0 = performance.now();
    const rc = spawnWithRss(args, { sb, gnuTime: opts.gnuTime, stdout: "piped", tag: "kimi" });
    const [status, stdout, stderr] = await Promise.all([
      rc.child.status,
      new Response(rc.child.stdout).text(),
      new Response(rc.child.stderr).text(),
    ]);
    const totalMs = performance.now() - t0;
    const peakRssBytes = await rc.peakRss();
    const chat = mock.requests.filter((r) => r.method === "POST");
    if (chat.length === 0) {
      const reason = `exit ${status.code}: ${stderr.trim().split("\n")[0]}`;
      throw opts.agentFile
        ? new Error(`Fallback agent failed, ${reason}`)
        : new DefaultAgentUnavailable(reason);
    }
    if (!status.success || arrivals.length !== opts.steps + 1) {
      throw new Error(
        `Expected ${opts.steps + 1} model requests and exit 0, got ${arrivals.length} and exit ` +
          `${status.code}.\nstderr: ${stderr.slice(0, 2000)}\nstdout: ${stdout.slice(-2000)}`,
      );
    }
    checkToolResults(chat.at(-1)!.body, opts.steps);
    const first = chat[0];
    const body = first.body;
    const enc = new TextEncoder();
    const sys = (body.messages ?? []).find((m: any) => m.role === "system");
    const sysText = typeof sys?.content === "string"
      ? sys.content
      : JSON.stringify(sys?.content ?? "");
    const contentLength = Number(first.headers["content-length"]);
    return {
      firstRequestMs: arrivals[0] - t0,
      stepGapsMs: arrivals.slice(1).map((t, i) => t - arrivals[i]),
      totalMs,
      peakRssBytes,
      firstRequestBytes: Number.isFinite(contentLength) && contentLength > 0
        ? contentLength
        : enc.encode(JSON.stringify(body)).length,
      systemPromptBytes: enc.encode(sysText).length,
      toolSchemaBytes: enc.encode(JSON.stringify(body.tools ?? [])).length,
      toolNames: (body.tools ?? []).map((t: any) => t.function?.name ?? t.name),
      toolUsed,
    };
  } finally {
    await mock.close();
    await sb.cleanup();
  }
}

/** Fail when a step's tool result is missing or reports an error: the loop must do real work. */
function checkToolResults(lastBody: any, steps: number): void {
  const results = (lastBody?.messages ?? []).filter((m: any) => m.role === "tool");
  if (results.length !== steps) {
    throw new Error(`Expected ${steps} tool results in the final request, got ${results.length}.`);
  }
  for (const r of results) {
    const text = typeof r.content === "string" ? r.content : JSON.stringify(r.content);
    if (text.includes("<system>ERROR")) {
      throw new Error(`A tool step failed, so the loop measured an error path: ${text}`);
    }
  }
}

async function baselineRun(gnuTime: boolean): Promise<{ firstLineMs: number; rss: number }> {
  const sb = await createSandbox();
  try {
    const script = `${sb.root}/hello.ts`;
    await Deno.writeTextFile(script, 'console.log("ready");\n');
    const args = ["run", "--no-prompt", "-A", "--no-config", script];
    const t0 = performance.now();
    const rc = spawnWithRss(args, { sb, gnuTime, stdout: "piped", tag: "base" });
    const reader = rc.child.stdout.getReader();
    const first = await reader.read();
    const firstLineMs = performance.now() - t0;
    while (!(await reader.read()).done) { /* drain */ }
    await new Response(rc.child.stderr).text();
    const rss = await rc.peakRss();
    if (first.done) throw new Error("Baseline script printed nothing.");
    return { firstLineMs, rss };
  } finally {
    await sb.cleanup();
  }
}

/** Run the tool-loop benchmark. */
export async function runToolLoopBench(opts: ToolLoopOptions = {}): Promise<ToolLoopResult> {
  const runs = opts.runs ?? 9;
  const steps = opts.steps ?? 10;
  const entry = opts.entry ?? SOURCE_ENTRY;
  const gnuTime = await hasGnuTime();

  let agent: ToolLoopResult["agent"] = "default";
  let fallbackReason: string | undefined;
  let agentDir: string | undefined;
  let agentFile: string | undefined;
  // Warm-up run, which also decides whether the default agent loads.
  try {
    await oneRun({ steps, gnuTime, entry });
  } catch (err) {
    if (!(err instanceof DefaultAgentUnavailable)) throw err;
    agent = "fallback";
    fallbackReason = err.message;
    agentDir = await Deno.makeTempDir({ prefix: "kimi-bench-agent-" });
    agentFile = `${agentDir}/agent.yaml`;
    await Deno.writeTextFile(agentFile, FALLBACK_AGENT);
    await oneRun({ steps, gnuTime, agentFile, entry });
  }

  try {
    const measured: ToolLoopRun[] = [];
    const baseFirst: number[] = [];
    const baseRss: number[] = [];
    await baselineRun(gnuTime); // warm-up
    for (let i = 0; i < runs; i++) {
      const b = await baselineRun(gnuTime);
      baseFirst.push(b.firstLineMs);
      baseRss.push(b.rss);
      measured.push(await oneRun({ steps, gnuTime, agentFile, entry }));
    }
    return {
      agent,
      fallbackReason,
      rssMethod: gnuTime ? "GNU time %M (max RSS)" : "/proc/<pid>/status VmHWM, polled every 5 ms",
      steps,
      runs: measured,
      firstRequest: summarize(measured.map((r) => r.firstRequestMs)),
      firstRequestRatio: summarize(measured.map((r, i) => r.firstRequestMs / baseFirst[i])),
      perStep: summarize(measured.map((r) => median(r.stepGapsMs))),
      total: summarize(measured.map((r) => r.totalMs)),
      peakRss: summarize(measured.map((r) => r.peakRssBytes)),
      firstRequestBytes: summarize(measured.map((r) => r.firstRequestBytes)),
      baselineFirstLine: summarize(baseFirst),
      baselineRss: summarize(baseRss),
    };
  } finally {
    if (agentDir) await Deno.remove(agentDir, { recursive: true }).catch(() => {});
  }
}

/** The result as Markdown. */
export function toolLoopMarkdown(r: ToolLoopResult): string {
  const last = r.runs.at(-1)!;
  const rows = [
    [
      "Launch → first model request",
      formatSummary(r.firstRequest),
      `${r.firstRequestRatio.median.toFixed(2)}× of baseline spawn → first line ` +
      `(${formatMs(r.baselineFirstLine.median)}; median of the per-run ratios, each kimi run ` +
      `over the baseline run just before it)`,
    ],
    [
      `Harness time per tool step (${last.toolUsed})`,
      formatSummary(r.perStep),
      "median gap between consecutive requests",
    ],
    [`Total wall time (${r.steps} steps + final answer)`, formatSummary(r.total), ""],
    [
      "Peak RSS",
      formatSummary(r.peakRss, formatBytes),
      `${formatRatio(r.peakRss.median, r.baselineRss.median)} of baseline ` +
      `(${formatBytes(r.baselineRss.median)})`,
    ],
    [
      "First request body",
      formatSummary(r.firstRequestBytes, formatBytes),
      `system prompt ${formatBytes(last.systemPromptBytes)}, tool schemas ` +
      `${formatBytes(last.toolSchemaBytes)} (${last.toolNames.length} tools)`,
    ],
  ];
  const agentNote = r.agent === "default"
    ? `Agent: default (${last.toolNames.length} tools: ${last.toolNames.join(", ")}).`
    : `**Agent: FALLBACK (Shell + Think only) — not final figures.** The default agent failed ` +
      `to load: ${r.fallbackReason}`;
  return `${markdownTable(["Metric", "Median (min–max)", "Notes"], rows)}\n\n` +
    `${r.runs.length} runs after one warm-up; peak RSS via ${r.rssMethod}. ${agentNote}`;
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  const bundleDir = Deno.args.find((a) => a.startsWith("--bundle="))?.slice("--bundle=".length);
  const r = await runToolLoopBench({
    runs: intFlag("runs"),
    steps: intFlag("steps"),
    entry: bundleDir ? [DENO_V8_FLAGS_ARG, "-A", "--no-config", `${bundleDir}/main.js`] : undefined,
  });
  console.log(toolLoopMarkdown(r));
}
