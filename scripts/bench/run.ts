/**
 * `deno task bench`: bundles kimi (`scripts/bundle.ts`, into a temp dir), runs the startup and
 * tool-loop benchmarks from the source and from the bundle, the wire, ACP and web benchmarks (and
 * `scripts/bench/tools.ts` when present), then prints one Markdown report with the issue's
 * budgets marked met or missed, followed by an import-cost breakdown that explains the startup
 * figures. Every figure has its empty-script baseline measured in the same run.
 *
 * The start-up budgets are ratios against an empty script measured in the same run (the bundled
 * build: launch → first model request ≤ 8.5×, `--help` ≤ 2.2×); a run from a checkout is
 * reported the same way but not judged (it costs what Deno's caches give).
 *
 * Usage: `deno run --no-prompt -A scripts/bench/run.ts [--quick] [--startup] [--replay-mb=N]`
 * (`--quick`: fewer runs; `--startup`: only the start-up figures, from the source and from the
 * bundle; `--replay-mb=1024`: replay a 1 GB wire.jsonl instead of the 100 MB default).
 *
 * @module
 */
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { bundle } from "../bundle.ts";
import { REPO_ROOT } from "./child_env.ts";
import { importCostMarkdown, runImportCost } from "./import_cost.ts";
import { formatBytes, formatMs, markdownTable } from "./stats.ts";
import { runStartupBench, startupMarkdown } from "./startup.ts";
import { runToolLoopBench, toolLoopMarkdown } from "./tool_loop.ts";
import { runWireBench, TURN_BUDGET_RATIO, turnOverIdleRatio, wireMarkdown } from "./wire.ts";
import {
  overIdle,
  PROMPT_BUDGET_RATIO,
  REPLAY_BUDGET_BYTES,
  runWireMemoryBench,
  wireMemoryMarkdown,
} from "./wire_memory.ts";
import {
  PER_SUBAGENT_BUDGET_BYTES,
  rssPerSubagent,
  runSwarmBench,
  swarmMarkdown,
} from "./swarm.ts";
import { acpMarkdown, runAcpBench } from "./acp.ts";
import { runWebBench, webMarkdown } from "./web.ts";

/** One budget from the issue and the measured median. */
export interface BudgetCheck {
  /** What is measured. */
  name: string;
  /** The budget (upper bound). */
  budget: number;
  /** The measured median. */
  value: number;
  /** Formats a value in this budget's unit. */
  format: (v: number) => string;
  /** Why the figure cannot be judged against the budget, if it cannot. */
  notComparable?: string;
}

/** `met (x under)` / `missed by x (+y%)` for one budget. */
export function verdict(b: BudgetCheck): string {
  if (b.notComparable) return `not judged: ${b.notComparable}`;
  const diff = b.value - b.budget;
  if (diff <= 0) return `met, ${b.format(-diff)} under`;
  return `**missed** by ${b.format(diff)} (+${((diff / b.budget) * 100).toFixed(0)}%)`;
}

/** The budgets table. */
export function budgetTable(checks: readonly BudgetCheck[]): string {
  return markdownTable(
    ["Budget", "Target", "Measured (median)", "Verdict"],
    checks.map((b) => [b.name, `≤ ${b.format(b.budget)}`, b.format(b.value), verdict(b)]),
  );
}

const MB = 1024 * 1024;
const formatTimes = (r: number) => `${r.toFixed(2)}×`;
const CHECKOUT = "a run from a checkout costs what Deno's caches give";
const formatMb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

async function runOptionalTools(script = "tools.ts"): Promise<string | undefined> {
  const path = `${REPO_ROOT}/scripts/bench/${script}`;
  try {
    await Deno.stat(path);
  } catch {
    return undefined;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    // tools.ts collects garbage between its timed calls (see its runInterleaved).
    args: [
      "run",
      "--no-prompt",
      ...(script === "tools.ts" ? ["--v8-flags=--expose-gc"] : []),
      "-A",
      path,
    ],
    cwd: REPO_ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  const text = dec.decode(out.stdout).trim();
  return out.success
    ? text
    : `${script} failed (exit ${out.code}):\n\n\`\`\`\n${dec.decode(out.stderr).trim()}\n\`\`\``;
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const startupOnly = Deno.args.includes("--startup");
  const bundleDir = await Deno.makeTempDir({ prefix: "kimi-bench-bundle-" });
  await bundle({ outDir: bundleDir });
  const startup = await runStartupBench({ ...(quick ? { runs: 5, warmup: 2 } : {}), bundleDir });
  const loop = await runToolLoopBench(quick ? { runs: 2 } : {});
  const bundleLoop = await runToolLoopBench({
    ...(quick ? { runs: 2 } : {}),
    entry: [DENO_V8_FLAGS_ARG, "-A", "--no-config", `${bundleDir}/main.js`],
  });
  await Deno.remove(bundleDir, { recursive: true });
  const wire = startupOnly
    ? null
    : await runWireBench(quick ? { runs: 5, warmup: 2, turnRuns: 1 } : {});
  const acp = startupOnly ? null : await runAcpBench(quick ? { runs: 5, warmup: 2 } : {});
  const web = startupOnly
    ? null
    : await runWebBench(quick ? { runs: 3, sessions: 20, lines: 5000 } : {});
  const tools = startupOnly ? undefined : await runOptionalTools();
  const session = startupOnly ? undefined : await runOptionalTools("session.ts");
  const longSession = startupOnly ? undefined : await runOptionalTools("long_session.ts");
  const undo = startupOnly ? undefined : await runOptionalTools("undo.ts");
  const compaction = startupOnly ? undefined : await runOptionalTools("compaction.ts");
  const page = startupOnly ? undefined : await runOptionalTools("page.ts");
  const replayArg = Deno.args.find((a) => a.startsWith("--replay-mb="));
  const wireMemory = startupOnly ? null : await runWireMemoryBench({
    replayMb: replayArg ? Number(replayArg.split("=")[1]) : undefined,
  });
  const swarm = startupOnly ? null : await runSwarmBench(quick ? { runs: 1 } : {});
  const imports = startupOnly ? null : await runImportCost(quick ? { runs: 3 } : {});

  const fallback = loop.agent === "fallback"
    ? "measured with the Shell + Think fallback agent, not the default tool set"
    : undefined;
  const vsEmpty = (ms: number) => ms / startup.baseline.median;
  const vsFirstLine = (r: typeof loop) => r.firstRequestRatio.median;
  const ratio = (v: number) => `${v.toFixed(2)}×`;
  const memoryChecks: BudgetCheck[] = wire === null || wireMemory === null || swarm === null
    ? []
    : [
      {
        name: `Streamed turn (${(wire.lines * wire.lineChars / MB).toFixed(1)} MB): peak RSS ` +
          "over the idle process, × its text",
        budget: TURN_BUDGET_RATIO,
        value: turnOverIdleRatio(wire),
        format: ratio,
      },
      {
        name: `\`prompt\` line of ${formatMb(wireMemory.promptBytes)}: peak RSS over the idle ` +
          "process, × its input",
        budget: PROMPT_BUDGET_RATIO,
        value: overIdle(wireMemory.prompt) / wireMemory.promptBytes,
        format: ratio,
      },
      {
        name: `\`replay\` of a ${formatMb(wireMemory.replayBytes)} wire.jsonl: peak RSS over ` +
          "the idle process",
        budget: REPLAY_BUDGET_BYTES,
        value: overIdle(wireMemory.replay),
        format: formatMb,
      },
      ...swarm.map((r) => ({
        name: `AgentSwarm of ${r.items}, concurrency ${r.concurrency}: RSS per subagent over ` +
          "the process without them",
        budget: PER_SUBAGENT_BUDGET_BYTES,
        value: rssPerSubagent(r),
        format: (v: number) => `${(v / MB).toFixed(2)} MB`,
      })),
    ];
  const checks: BudgetCheck[] = [
    ...(startup.bundleHelp
      ? [{
        name: "`kimi --help` (bundle) / empty script",
        budget: 2.2,
        value: startup.pairedRatios.bundleHelp?.median ?? vsEmpty(startup.bundleHelp.median),
        format: formatTimes,
      }]
      : []),
    ...(startup.bundleHelp
      ? [{
        name: "`kimi --help` (bundle) / empty script, issue 34's budget",
        budget: 2,
        value: startup.pairedRatios.bundleHelp?.median ?? vsEmpty(startup.bundleHelp.median),
        format: formatTimes,
      }]
      : []),
    {
      name: "Launch → first model request (bundle) / empty script",
      budget: 8.5,
      value: vsFirstLine(bundleLoop),
      format: formatTimes,
      notComparable: fallback,
    },
    {
      name: "Launch → first model request (bundle) / empty script, issue 34's budget",
      budget: 8,
      value: vsFirstLine(bundleLoop),
      format: formatTimes,
      notComparable: fallback,
    },
    {
      name: "Peak RSS of the 10-step run (bundle) / the bare runtime's",
      budget: 2.6,
      value: bundleLoop.peakRss.median / bundleLoop.baselineRss.median,
      format: formatTimes,
      notComparable: fallback,
    },
    {
      name: "`kimi --help` (source) / empty script",
      budget: 2.2,
      value: startup.pairedRatios.help?.median ?? vsEmpty(startup.help.median),
      format: formatTimes,
      notComparable: CHECKOUT,
    },
    {
      name: "Launch → first model request (source) / empty script",
      budget: 8.5,
      value: vsFirstLine(loop),
      format: formatTimes,
      notComparable: fallback ?? CHECKOUT,
    },
    {
      name: "Harness time per tool step",
      budget: 10,
      value: loop.perStep.median,
      format: formatMs,
      notComparable: fallback,
    },
    {
      name: "Peak RSS (10-step print run, source)",
      budget: 90 * MB,
      value: loop.peakRss.median,
      format: formatMb,
      notComparable: fallback,
    },
    {
      name: "Peak RSS (10-step print run, bundle)",
      budget: 90 * MB,
      value: bundleLoop.peakRss.median,
      format: formatMb,
      notComparable: fallback,
    },
    ...(web
      ? [{
        name: "`kimi web`: RSS per idle session beyond the first",
        budget: 2 * MB,
        value: web.perSession,
        format: formatMb,
      }]
      : []),
    {
      name: "First request body (system prompt + tool schemas)",
      budget: 30 * 1024,
      value: loop.firstRequestBytes.median,
      format: formatBytes,
      notComparable: fallback,
    },
    ...memoryChecks,
  ];

  const sections = [
    `# kimi for Deno: benchmarks`,
    `Deno ${Deno.version.deno} (V8 ${Deno.version.v8}), ${Deno.build.target}, ` +
    `${navigator.hardwareConcurrency} CPUs, ${new Date().toISOString()}.`,
    `## Budgets\n\n${budgetTable(checks)}`,
    `## Startup\n\n${startupMarkdown(startup)}`,
    `## Tool loop from the source (print mode, zero-latency mock server)\n\n${
      toolLoopMarkdown(loop)
    }`,
    `## Tool loop from the bundle (\`deno task bundle\`)\n\n${toolLoopMarkdown(bundleLoop)}`,
    ...(wire
      ? [`## Wire (\`kimi --wire\` driven by \`KimiWireClient\`)\n\n${wireMarkdown(wire)}`]
      : []),
    ...(acp ? [`## ACP (\`kimi acp\` driven by the ACP SDK client)\n\n${acpMarkdown(acp)}`] : []),
    ...(web
      ? [`## Web (\`kimi web\` driven over HTTP and WebSockets)\n\n${webMarkdown(web)}`]
      : []),
    ...(tools ? [`## Tools\n\n${tools}`] : []),
    ...(session ? [`## Sessions\n\n${session}`] : []),
    ...(longSession ? [longSession] : []),
    ...(undo ? [undo] : []),
    ...(compaction ? [compaction] : []),
    ...(page ? [`## Web page (\`kimi web\` in headless chromium)\n\n${page}`] : []),
    ...(wireMemory
      ? [`## Big turns in little memory (\`kimi --wire\`)\n\n${wireMemoryMarkdown(wireMemory)}`]
      : []),
    ...(swarm ? [`## Agent swarm (zero-latency mock server)\n\n${swarmMarkdown(swarm)}`] : []),
    ...(imports ? [`## Import costs\n\n${importCostMarkdown(imports)}`] : []),
  ];
  console.log(sections.join("\n\n"));
}
