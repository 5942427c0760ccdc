/**
 * Benchmark of the search and read tools on big inputs, through the tool API:
 *
 * - a generated tree of 100,000 files: Grep (ripgrep engine and pure-TS engine) and Glob,
 *   beside plain `rg` with the same arguments on the same tree in the same run;
 * - ReadFile of a 200 MB file (head and tail), with its peak RSS, measured in a fresh
 *   subprocess so the tree benchmarks do not skew it.
 *
 * Times are medians of 5 runs (and, per row, the median of its round-by-round ratios to plain
 * rg), each call after a full GC when run with `--expose-gc` (as
 * `deno task bench` runs it). Usage:
 * `deno run --v8-flags=--expose-gc -A scripts/bench/tools.ts [--files N] [--only=glob] [--runs=N]`
 * (`--only=glob`: only the Glob rows and their `rg --files` baseline, on both trees;
 * `--runs=N`: rounds timed, 5 by default).
 *
 * @module
 */
import { join } from "node:path";
import { makeCallContext, makeToolEnv, runTool } from "../../tests/helpers/tool_env.ts";
import { globTool, globToolWith } from "../../tools/glob.ts";
import { grepParamsSchema, grepQuery, grepToolWith } from "../../tools/grep.ts";
import { readFileTool } from "../../tools/read_file.ts";
import { buildRgArgs, findRipgrep } from "../../lib/search/ripgrep.ts";
import type { Tool } from "../../lib/tooling/tool.ts";

const RUNS = 5;
const READ_FILE_MB = 200;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** One line of the result table. */
interface Row {
  name: string;
  median: number;
  min: number;
  ratio: string;
}

/** One timed benchmark. */
interface Bench {
  name: string;
  /** Set on the plain-rg rows: the kind of query they are the baseline for. */
  base?: string;
  /** The baseline this row is compared with. */
  vs?: string;
  fn: () => Promise<unknown>;
}

/** V8's `gc()`, when this process runs with `--v8-flags=--expose-gc` (as `deno task bench` runs it). */
const fullGc = (globalThis as { gc?: () => void }).gc;

/**
 * Run every benchmark once per round (after a warm-up round), so load affects all alike.
 * Returns the median and the minimum of each. Each timed call starts after a full garbage
 * collection (outside the timing), so that no row pays for the garbage of the row before it
 * (the pure-TS Grep rows leave much; the Glob rows after them paid for it).
 */
async function runInterleaved(
  benches: Bench[],
  runs: number,
): Promise<{ median: number; min: number; times: number[] }[]> {
  const times = benches.map(() => [] as number[]);
  for (let round = -1; round < runs; round++) {
    for (let i = 0; i < benches.length; i++) {
      fullGc?.();
      const t0 = performance.now();
      await benches[i].fn();
      if (round >= 0) times[i].push(performance.now() - t0);
    }
  }
  return times.map((t) => ({ median: median(t), min: Math.min(...t), times: t }));
}

async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** Write `count` small source files in 100-file directories, 1% containing the needle. */
export function generateTree(root: string, count: number): void {
  const exts = [".ts", ".py", ".md", ".js"];
  const body = "export function item(x: number): number {\n  return x * 2 + 1;\n}\n" +
    "// filler line to give the file some realistic bulk for the search to chew through\n";
  Deno.writeTextFileSync(join(root, ".gitignore"), "node_modules/\n*.log\n");
  Deno.mkdirSync(join(root, ".git"));
  for (let i = 0; i < count; i++) {
    const dir = join(
      root,
      "src",
      `pkg${Math.floor(i / 10_000)}`,
      `mod${Math.floor(i / 100) % 100}`,
    );
    if (i % 100 === 0) Deno.mkdirSync(dir, { recursive: true });
    const needle = i % 100 === 37 ? `const needle_token = ${i};\n` : "";
    Deno.writeTextFileSync(join(dir, `f${i}${exts[i % exts.length]}`), body + needle + body);
  }
}

/** Write a text file of about `mb` megabytes with numbered lines. */
async function generateBigFile(path: string, mb: number): Promise<void> {
  using file = await Deno.open(path, { write: true, create: true, truncate: true });
  const enc = new TextEncoder();
  let line = 0;
  const target = mb * 1024 * 1024;
  let written = 0;
  while (written < target) {
    let chunk = "";
    for (let i = 0; i < 10_000; i++) {
      chunk +=
        `${line++}: the quick brown fox jumps over the lazy dog, again and again and again\n`;
    }
    const bytes = enc.encode(chunk);
    await file.write(bytes);
    written += bytes.length;
  }
}

/** The ReadFile part, run in its own process: prints one JSON line. */
async function readFileBench(dir: string): Promise<void> {
  const path = join(dir, "big.txt");
  const tool = (await readFileTool(makeToolEnv({ workDir: dir })))!;
  const baseline = Deno.memoryUsage().rss;
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, Deno.memoryUsage().rss);
  }, 2);
  const head = await timeIt(() => runTool(tool, { path }));
  const tail = await timeIt(() => runTool(tool, { path, line_offset: -1000 }));
  const rv = await runTool(tool, { path, line_offset: -10 });
  clearInterval(timer);
  peak = Math.max(peak, Deno.memoryUsage().rss);
  console.log(JSON.stringify({ head, tail, baseline, peak, message: rv.message }));
}

/** Time Grep (both engines) and Glob against plain rg on the tree as it is now. */
async function treeRows(
  root: string,
  count: number,
  rgPath: string | null,
  treeLabel: string,
  opts: { only?: "glob"; runs: number },
): Promise<Row[]> {
  const { only } = opts;
  const env = makeToolEnv({ workDir: root });
  const ctx = makeCallContext();
  const grepArgs = { pattern: "needle_token", path: join(root, "src"), head_limit: 0 };
  const contentArgs = { ...grepArgs, output_mode: "content" };
  const expected = Math.floor((count - 37 + 99) / 100);
  // Content output may be cut at the 50,000-character result cap, so it is checked loosely.
  const check = (rv: { output: unknown; is_error: boolean }, exact: boolean) => {
    const lines = String(rv.output).split("\n").length;
    if (rv.is_error || (exact ? lines !== expected : lines < expected / 2)) {
      throw new Error(`unexpected Grep result (${lines} lines)`);
    }
  };

  const benches: Bench[] = [];
  if (rgPath && only !== "glob") {
    const plain = (a: Record<string, unknown>) => async () => {
      const q = grepQuery(grepParamsSchema().parse(a), root);
      const out = await new Deno.Command(rgPath, {
        args: buildRgArgs(q),
        cwd: root,
        stdout: "piped",
        stderr: "null",
      }).output();
      if (out.stdout.length === 0) throw new Error("plain rg found nothing");
    };
    benches.push({ name: "plain rg (files)", base: "files", fn: plain(grepArgs) });
    benches.push({ name: "plain rg (content)", base: "content", fn: plain(contentArgs) });
  }
  if (rgPath) {
    benches.push({
      name: "plain rg --files (*.py)",
      base: "list",
      fn: async () => {
        const out = await new Deno.Command(rgPath, {
          args: ["--files", "--hidden", "--no-ignore", "--glob", "*.py", "src"],
          cwd: root,
          stdout: "piped",
          stderr: "null",
        }).output();
        if (out.stdout.length === 0) throw new Error("plain rg --files found nothing");
      },
    });
  }
  for (
    const [engine, label] of [["ripgrep", "rg engine"], ["typescript", "TS engine"]] as const
  ) {
    if (only === "glob" || (engine === "ripgrep" && !rgPath)) continue;
    const tool: Tool = (await grepToolWith({ engine, timeoutMs: 600_000 })(env))!;
    benches.push({
      name: `Grep ${label} (files)`,
      vs: "files",
      fn: async () => check(await runTool(tool, grepArgs, ctx), true),
    });
    benches.push({
      name: `Grep ${label} (content)`,
      vs: "content",
      fn: async () => check(await runTool(tool, contentArgs, ctx), false),
    });
  }
  // Glob as a run gets it (GNU find, one per core), with one find, and without --allow-run
  // (the readDir walk).
  for (
    const [label, factory] of [
      ["", globTool],
      [" (one find)", globToolWith({ findProcesses: 1 })],
      [" (readDir walk)", globToolWith({ walk: "readDir" })],
    ] as const
  ) {
    const glob = (await factory(env))!;
    benches.push({
      name: `Glob src/**/*.py${label}`,
      vs: "list",
      fn: async () => {
        const rv = await runTool(glob, { pattern: "src/**/*.py", include_dirs: false }, ctx);
        if (rv.is_error || !rv.message.startsWith(`Found ${count / 4} matches`)) {
          throw new Error(`unexpected Glob result: ${rv.message}`);
        }
      },
    });
  }
  const stats = await runInterleaved(benches, opts.runs);
  const baseOf = (kind: string | undefined) => {
    const i = benches.findIndex((b) => b.base === kind);
    return i >= 0 ? stats[i] : null;
  };
  const ratio = (a: number, b: number | undefined) => b ? `${(a / b).toFixed(2)}x` : "n/a";
  const rows: Row[] = benches.map((b, i) => {
    const base = b.base ? stats[i] : baseOf(b.vs);
    return {
      name: b.name + treeLabel,
      median: stats[i].median,
      min: stats[i].min,
      ratio: `${ratio(stats[i].median, base?.median)} (min ${ratio(stats[i].min, base?.min)})` +
        (base && !b.base ? `; paired ${pairedRatios(stats[i].times, base.times)}` : ""),
    };
  });

  return rows;
}

/**
 * The ratios of one row to its baseline round by round (each pair timed back to back, so a
 * change of the machine's load between rounds cancels out): median and range.
 */
function pairedRatios(times: number[], base: number[]): string {
  const r = times.map((t, i) => t / base[i]);
  return `${median(r).toFixed(2)}x (${Math.min(...r).toFixed(2)}-${Math.max(...r).toFixed(2)})`;
}

/** Symlinks added for the second round. */
const LINKS = 10_000;

/**
 * Add `n` symlinks under `root/src/links*`: most to files of the tree (skipped by the searches,
 * as rg and pathlib do not follow them), some to its directories.
 */
export function addSymlinks(root: string, n: number): void {
  for (let i = 0; i < n; i++) {
    const dir = join(root, "src", `links${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) Deno.mkdirSync(dir, { recursive: true });
    const j = (i * 7) % 100_000;
    const target = i % 10 === 0
      ? join(root, "src", `pkg${Math.floor(j / 10_000)}`)
      : join(root, "src", `pkg${Math.floor(j / 10_000)}`, `mod${Math.floor(j / 100) % 100}`);
    Deno.symlinkSync(target, join(dir, `l${i}`));
  }
}

function fmtMs(ms: number): string {
  return `${ms.toFixed(1)} ms`;
}

async function main(): Promise<void> {
  const args = Deno.args;
  if (args[0] === "--readfile-only") return await readFileBench(args[1]);
  const filesAt = args.indexOf("--files");
  const count = filesAt >= 0 ? Number(args[filesAt + 1]) : 100_000;
  // `--only=glob`: the Glob rows and their `rg --files` baseline, no Grep, no ReadFile.
  const only = args.includes("--only=glob") ? "glob" : undefined;
  const runsArg = args.find((a) => a.startsWith("--runs="));
  const runs = runsArg ? Number(runsArg.slice("--runs=".length)) : RUNS;
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`--runs takes a whole number of rounds, at least 1 (got ${runsArg})`);
  }

  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi_bench_" }));
  try {
    let t0 = performance.now();
    generateTree(root, count);
    console.error(`generated ${count} files in ${fmtMs(performance.now() - t0)}`);
    if (only === undefined) {
      t0 = performance.now();
      await generateBigFile(join(root, "big.txt"), READ_FILE_MB);
      console.error(`generated ${READ_FILE_MB} MB file in ${fmtMs(performance.now() - t0)}`);
    }

    const rgPath = await findRipgrep();
    const rows = await treeRows(root, count, rgPath, "", { only, runs });
    // The same tree with 10,000 symlinks added (to files and directories inside it): the floor
    // must still judge every result, at the same speed.
    addSymlinks(root, LINKS);
    rows.push(
      ...await treeRows(root, count, rgPath, ` +${LINKS / 1000}k links`, { only, runs }),
    );

    const rf = only === undefined ? await readFileRows(root, rows) : null;
    const width = Math.max(...rows.map((r) => r.name.length));
    console.log(
      `\n${count} files, ${runs} interleaved runs after a warm-up, ` +
        (fullGc
          ? "a full GC before each timed call\n"
          : "no GC between calls (run with --v8-flags=--expose-gc for one)\n"),
    );
    console.log(
      `${"benchmark".padEnd(width)}  ${"median".padStart(11)}  ${"min".padStart(11)}  vs plain rg`,
    );
    console.log(`${"-".repeat(width)}  ${"-".repeat(11)}  ${"-".repeat(11)}  -----------`);
    for (const r of rows) {
      const min = Number.isNaN(r.min) ? "" : fmtMs(r.min);
      console.log(
        `${r.name.padEnd(width)}  ${fmtMs(r.median).padStart(11)}  ${min.padStart(11)}  ${r.ratio}`,
      );
    }
    if (rf) {
      const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
      console.log(
        `\nReadFile peak RSS ${mb(rf.peak)} (process baseline ${mb(rf.baseline)}, ` +
          `growth ${mb(rf.peak - rf.baseline)})`,
      );
      console.log(`ReadFile tail message: ${rf.message}`);
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

/** What the ReadFile subprocess measured. */
interface ReadFileFigures {
  head: number;
  tail: number;
  baseline: number;
  peak: number;
  message: string;
}

/** Run the ReadFile part in its own process and add its rows to `rows`. */
async function readFileRows(root: string, rows: Row[]): Promise<ReadFileFigures> {
  const sub = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-prompt",
      new URL(import.meta.url).pathname,
      "--readfile-only",
      root,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const rf: ReadFileFigures = JSON.parse(
    new TextDecoder().decode(sub.stdout).trim().split("\n").pop()!,
  );
  rows.push({ name: `ReadFile ${READ_FILE_MB} MB, head`, median: rf.head, min: NaN, ratio: "" });
  rows.push({
    name: `ReadFile ${READ_FILE_MB} MB, tail 1000`,
    median: rf.tail,
    min: NaN,
    ratio: "",
  });
  return rf;
}

if (import.meta.main) await main();
