/**
 * Swarm benchmark: `kimi --print` runs one AgentSwarm of 128 items against the zero-latency
 * mock OpenAI server (tests/helpers/mock_openai.ts). The parent's first request gets the
 * AgentSwarm call; every subagent request gets a final summary (long enough to need no summary
 * continuation); the parent's second request gets a final text.
 *
 * Measured per run: wall time (spawn → exit), peak RSS (`/proc/<pid>/status` VmHWM) and the
 * most file descriptors open at once (`/proc/<pid>/fd`), both polled every 5 ms. The baseline,
 * measured in the same run the same way, is the same command with a one-item swarm: the
 * ratios show what 127 more subagents cost. Each figure is the median of the runs after one
 * warm-up. The swarm is measured at concurrency 8 (the default) and 128 (every subagent at
 * once); the memory figure is the RSS per subagent over the process without them: (peak RSS of
 * the swarm − peak RSS of the one-item swarm) / (items − 1), budget ≤ 1.5 MB.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/swarm.ts [--runs=N] [--items=N] [--concurrency=N]`
 * (`--concurrency` measures that one instead of 8 and 128)
 *
 * @module
 */
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { startMockOpenAI } from "../../tests/helpers/mock_openai.ts";
import { createSandbox, MAIN_TS } from "./child_env.ts";
import {
  formatBytes,
  formatRatio,
  formatSummary,
  markdownTable,
  summarize,
  type Summary,
} from "./stats.ts";

/** Options of {@link runSwarmBench}. */
export interface SwarmBenchOptions {
  /** Measured runs. Default 3. */
  runs?: number;
  /** Items of the measured swarm. Default 128. */
  items?: number;
  /** Concurrencies measured. Default 8 (the configured default) and 128. */
  concurrencies?: number[];
}

/** One run. */
export interface SwarmRun {
  /** ms from spawn to exit. */
  totalMs: number;
  /** Peak RSS in bytes. */
  peakRssBytes: number;
  /** Most file descriptors open at once. */
  peakFds: number;
}

/** Budget: RSS per subagent over the process without them. */
export const PER_SUBAGENT_BUDGET_BYTES = 1.5 * 1024 * 1024;

/** Result of {@link runSwarmBench}: one per measured concurrency. */
export interface SwarmBenchResult {
  /** Items of the measured swarm. */
  items: number;
  /** Subagents at once. */
  concurrency: number;
  /** The measured swarm. */
  total: Summary;
  /** Its peak RSS. */
  peakRss: Summary;
  /** Its peak open file descriptors. */
  peakFds: Summary;
  /** Baseline (one-item swarm) wall time. */
  baseTotal: Summary;
  /** Baseline peak RSS. */
  baseRss: Summary;
  /** Baseline peak open file descriptors. */
  baseFds: Summary;
}

const SUMMARY_TEXT = "I reviewed the item assigned to me, read the relevant sources and tests, " +
  "found nothing that needs to change, verified the result, and left every file as it was, so " +
  "nothing is open for the parent agent to follow up on after this report.";

function watch(pid: number): { stop: () => Promise<{ rss: number; fds: number }> } {
  let rssKb = 0;
  let fds = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      try {
        const status = await Deno.readTextFile(`/proc/${pid}/status`);
        rssKb = Math.max(rssKb, Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0));
        let n = 0;
        for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) n++;
        fds = Math.max(fds, n);
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    stop: async () => {
      polling = false;
      await poller;
      return { rss: rssKb * 1024, fds };
    },
  };
}

async function oneRun(items: number, concurrency: number): Promise<SwarmRun> {
  const sb = await createSandbox();
  const values = Array.from({ length: items }, (_, i) => `item-${i + 1}`);
  let subagentReplies = 0;
  const mock = await startMockOpenAI({
    auto: (body) => {
      const names: string[] = (body?.tools ?? []).map((t: any) => t.function?.name ?? t.name);
      if (!names.includes("AgentSwarm")) {
        subagentReplies++;
        return { text: SUMMARY_TEXT };
      }
      const answered = (body?.messages ?? []).some((m: any) => m.role === "tool");
      if (answered) return { text: "Swarm finished." };
      const args = {
        description: "bench swarm",
        prompt_template: "Review {{item}} and report.",
        items: values,
        concurrency,
      };
      return {
        toolCalls: [{ id: "call_swarm", name: "AgentSwarm", arguments: JSON.stringify(args) }],
      };
    },
  });
  try {
    const cfg = `${sb.root}/config.json`;
    await Deno.writeTextFile(
      cfg,
      JSON.stringify({
        default_model: "mock",
        models: { mock: { provider: "mock", model: "mock-model", max_context_size: 100000 } },
        providers: { mock: { type: "openai_legacy", base_url: mock.url, api_key: "sk-test" } },
      }),
    );
    const t0 = performance.now();
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        DENO_V8_FLAGS_ARG,
        "-A",
        MAIN_TS,
        "--print",
        "--output-format",
        "stream-json",
        "--config-file",
        cfg,
        "-p",
        "Run the swarm.",
      ],
      cwd: sb.workDir,
      env: sb.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const watcher = watch(child.pid);
    const [status, stdout, stderr] = await Promise.all([
      child.status,
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
    ]);
    const totalMs = performance.now() - t0;
    const { rss, fds } = await watcher.stop();
    if (!status.success || subagentReplies !== items) {
      throw new Error(
        `Expected ${items} subagent replies and exit 0, got ${subagentReplies} and exit ` +
          `${status.code}.\nstderr: ${stderr.slice(0, 2000)}\nstdout: ${stdout.slice(-2000)}`,
      );
    }
    if (!stdout.includes(`ok: ${items}, error: 0`)) {
      throw new Error(`The swarm did not finish every item:\n${stdout.slice(-3000)}`);
    }
    return { totalMs, peakRssBytes: rss, peakFds: fds };
  } finally {
    await mock.close();
    await sb.cleanup();
  }
}

/** Run the swarm benchmark (the one-item baseline interleaved with each measured run). */
export async function runSwarmBench(opts: SwarmBenchOptions = {}): Promise<SwarmBenchResult[]> {
  const runs = opts.runs ?? 3;
  const items = opts.items ?? 128;
  const concurrencies = opts.concurrencies ?? [8, 128];
  await oneRun(1, 1); // warm-up
  const measured = concurrencies.map(() => [] as SwarmRun[]);
  const base: SwarmRun[] = [];
  for (let i = 0; i < runs; i++) {
    base.push(await oneRun(1, 1));
    for (const [k, c] of concurrencies.entries()) measured[k].push(await oneRun(items, c));
  }
  return concurrencies.map((concurrency, k) => ({
    items,
    concurrency,
    total: summarize(measured[k].map((r) => r.totalMs)),
    peakRss: summarize(measured[k].map((r) => r.peakRssBytes)),
    peakFds: summarize(measured[k].map((r) => r.peakFds)),
    baseTotal: summarize(base.map((r) => r.totalMs)),
    baseRss: summarize(base.map((r) => r.peakRssBytes)),
    baseFds: summarize(base.map((r) => r.peakFds)),
  }));
}

/** Median RSS per subagent over the process without them, bytes. */
export function rssPerSubagent(r: SwarmBenchResult): number {
  return Math.max(0, r.peakRss.median - r.baseRss.median) / Math.max(1, r.items - 1);
}

/** The results as Markdown, one table per concurrency. */
export function swarmMarkdown(results: readonly SwarmBenchResult[]): string {
  return results.map(swarmTable).join("\n\n");
}

function swarmTable(r: SwarmBenchResult): string {
  const perSubagent = rssPerSubagent(r);
  const perItem = (r.total.median - r.baseTotal.median) / Math.max(1, r.items - 1);
  const rows = [
    [
      `Wall time, ${r.items} items`,
      formatSummary(r.total),
      `${formatRatio(r.total.median, r.baseTotal.median)} of a one-item swarm ` +
      `(${formatSummary(r.baseTotal)}); ≈ ${perItem.toFixed(1)} ms per extra item`,
    ],
    [
      "Peak RSS",
      formatSummary(r.peakRss, formatBytes),
      `${formatRatio(r.peakRss.median, r.baseRss.median)} of a one-item swarm ` +
      `(${formatBytes(r.baseRss.median)})`,
    ],
    [
      "RSS per subagent over the process without them",
      formatBytes(perSubagent),
      `(peak − one-item peak) / ${r.items - 1}; budget ≤ ` +
      `${formatBytes(PER_SUBAGENT_BUDGET_BYTES)}: ` +
      `${perSubagent <= PER_SUBAGENT_BUDGET_BYTES ? "met" : "**missed**"}`,
    ],
    [
      "Peak open file descriptors",
      formatSummary(r.peakFds, (v) => String(v)),
      `one-item swarm: ${formatSummary(r.baseFds, (v) => String(v))}`,
    ],
  ];
  return `${markdownTable(["Metric", "Median (min–max)", "Notes"], rows)}\n\n` +
    `AgentSwarm of ${r.items} items, concurrency ${r.concurrency}, zero-latency mock model.`;
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  const r = await runSwarmBench({
    runs: intFlag("runs"),
    items: intFlag("items"),
    concurrencies: intFlag("concurrency") ? [intFlag("concurrency")!] : undefined,
  });
  console.log(swarmMarkdown(r));
}
