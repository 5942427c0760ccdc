/**
 * Import-cost breakdown, to explain startup figures: wall time of `deno run --config
 * <repo>/deno.json` of one-line scripts that each statically import a single module, minus an
 * empty script under the same config, all measured in the same run.
 *
 * It also measures the shape of `main.ts`'s `--version` fast path: Deno's graph builder
 * resolves and loads every module reachable through *string-literal* dynamic `import()`s
 * before the program starts, so a fast path that never executes `import("./lib/cli/entry.ts")`
 * still pays for building the whole CLI graph; an `import()` of a variable does not.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/import_cost.ts [--runs=N]`
 *
 * @module
 */
import { createSandbox, REPO_ROOT } from "./child_env.ts";
import { timeToExit } from "./spawn_timing.ts";
import { formatMs, markdownTable, median } from "./stats.ts";

/** One measured script. */
export interface ImportCost {
  /** What the script does. */
  label: string;
  /** Median wall time. */
  medianMs: number;
  /** Median minus the empty-script median. */
  overBaselineMs: number;
}

/** Result of {@link runImportCost}. */
export interface ImportCostResult {
  /** Empty script, same config. */
  baselineMs: number;
  /** One row per script. */
  rows: ImportCost[];
  /** Runs per script. */
  runs: number;
}

const local = (path: string) => `file://${REPO_ROOT}/${path}`;

/** Modules whose import cost is measured: npm packages, then layers of the program. */
export const MODULES: readonly string[] = [
  "ignore",
  "commander",
  "zod",
  "yaml",
  "openai",
  local("lib/cli/options.ts"),
  local("lib/config/load.ts"),
  local("lib/session/session.ts"),
  local("lib/assets/embedded.gen.ts"),
  local("lib/llm/providers/openai_chat.ts"),
  local("lib/app/kimi_app.ts"),
  local("lib/ui/print/print_ui.ts"),
  local("lib/cli/run_agent.ts"),
];

const VERSION_LITERAL = `import { VERSION } from "${local("lib/version.ts")}";
if (Deno.args.length === 0) { console.log(VERSION); Deno.exit(0); }
await import("${local("lib/cli/entry.ts")}");
`;
const VERSION_VARIABLE = `import { VERSION } from "${local("lib/version.ts")}";
if (Deno.args.length === 0) { console.log(VERSION); Deno.exit(0); }
const entry = "${local("lib/cli/entry.ts")}";
await import(entry);
`;

/** Run the breakdown. */
export async function runImportCost(opts: { runs?: number } = {}): Promise<ImportCostResult> {
  const runs = opts.runs ?? 7;
  const sb = await createSandbox();
  try {
    const scripts: { label: string; file: string }[] = [];
    const add = async (label: string, text: string) => {
      const file = `${sb.root}/s${scripts.length}.ts`;
      await Deno.writeTextFile(file, text);
      scripts.push({ label, file });
    };
    await add("(empty script)", "");
    for (const spec of MODULES) {
      const short = spec.startsWith("file://") ? spec.slice(`file://${REPO_ROOT}/`.length) : spec;
      await add(`import ${short}`, `import * as m from "${spec}";\nvoid m;\n`);
    }
    await add("--version path with literal `import()` (as main.ts)", VERSION_LITERAL);
    await add("--version path with `import()` of a variable", VERSION_VARIABLE);

    const samples = scripts.map(() => [] as number[]);
    for (let i = 0; i < runs + 1; i++) {
      for (const [k, s] of scripts.entries()) {
        const t = await timeToExit({
          args: ["run", "--no-prompt", "-A", "--config", `${REPO_ROOT}/deno.json`, s.file],
          cwd: sb.workDir,
          env: sb.env,
        });
        if (t.code !== 0) throw new Error(`${s.label} failed: ${t.stderr.trim()}`);
        if (i > 0) samples[k].push(t.ms);
      }
    }
    const baselineMs = median(samples[0]);
    return {
      baselineMs,
      runs,
      rows: scripts.slice(1).map((s, k) => {
        const m = median(samples[k + 1]);
        return { label: s.label, medianMs: m, overBaselineMs: m - baselineMs };
      }),
    };
  } finally {
    await sb.cleanup();
  }
}

/** The result as Markdown. */
export function importCostMarkdown(r: ImportCostResult): string {
  const rows = r.rows.map((x) => [x.label, formatMs(x.medianMs), `+${formatMs(x.overBaselineMs)}`]);
  return `${
    markdownTable(["Script (`deno run --config deno.json`)", "Median", "Over empty script"], [
      ["(empty script)", formatMs(r.baselineMs), "+0.0 ms"],
      ...rows,
    ])
  }\n\n(${r.runs} runs each after one warm-up, interleaved. Costs overlap: each row includes ` +
    `everything its module imports.)`;
}

if (import.meta.main) {
  const runs = Deno.args.find((a) => a.startsWith("--runs="))?.split("=")[1];
  console.log(importCostMarkdown(await runImportCost({ runs: runs ? Number(runs) : undefined })));
}
