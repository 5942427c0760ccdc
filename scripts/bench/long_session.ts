/**
 * Long-session benchmark (issue "Scale", item 3):
 *
 * - **Resume**: `Context.restore` of a 2,000-turn `context.jsonl` (about 50 MB) and of a file
 *   whose one message is a single 50 MB line (a pasted log), each in a fresh child process,
 *   against reading the same file once in the same run (the bytes, split into lines, each line
 *   parsed as JSON), and against reading, parsing and keeping the parsed values (what any resume
 *   must do at least: it holds the history afterwards). Every child runs with kimi's own V8
 *   flags: with its 2 MB young generation, whatever is kept is copied out of it by the scavenger,
 *   which the read that drops each value never pays.
 * - **Per-step harness time**: `kimi --print` runs 30 Think steps with the scripted provider
 *   (which ignores the request, so no request body is built or sent) on a fresh session and on
 *   the resumed 2,000-turn session; the gap between consecutive model calls (the provider's
 *   trace lines, stamped as they arrive) is what kimi itself spends per step.
 *
 * Each resume figure is the median of interleaved runs (restore, read, keep, each in a fresh
 * process), with the range of the pairs' ratios, and the CPU time the process's threads ran
 * (which leaves out waiting for a core: on a loaded machine most of the spread).
 *
 * Usage: `deno run -A scripts/bench/long_session.ts [--runs N] [--resume-runs N] [--turns N]
 * [--steps N] [--resume-only]`.
 *
 * @module
 */
import { join } from "node:path";
import { Context } from "../../lib/soul/context.ts";
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { createSandbox, MAIN_TS, turnRecords, writeScriptedConfig } from "./child_env.ts";
import { formatMs, formatRatio, markdownTable, median } from "./stats.ts";

const args = Deno.args;
const arg = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};

/**
 * CPU time (ms) the process's threads have run, from `/proc/self/task/<tid>/schedstat`
 * (nanoseconds, not ticks; the main thread, the I/O threads that read a file for
 * `Deno.readTextFile`, V8's GC helpers); NaN where it is unavailable. Unlike the wall time it
 * leaves out the time spent waiting for a core, which on a loaded machine is most of the spread
 * between runs.
 */
function processCpuMs(): number {
  try {
    let ns = 0;
    for (const task of Deno.readDirSync("/proc/self/task")) {
      try {
        ns += Number(Deno.readTextFileSync(`/proc/self/task/${task.name}/schedstat`).split(" ")[0]);
      } catch {
        // the thread ended meanwhile
      }
    }
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

if (args[0] === "--child") {
  const [, mode, file] = args;
  const cpu0 = processCpuMs();
  const t0 = performance.now();
  let n = 0;
  const kept: unknown[] = [];
  if (mode === "restore") {
    n = (await Context.restore(file)).history.length;
  } else {
    for (const line of (await Deno.readTextFile(file)).split("\n")) {
      if (line) {
        const value = JSON.parse(line);
        if (mode === "keep") kept.push(value);
        n++;
      }
    }
  }
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ ms, cpuMs: processCpuMs() - cpu0, n }));
  Deno.exit(0);
}

/** Write a context of `turns` turns (user, assistant with a Shell call, its result, answer). */
async function writeTurns(file: string, turns: number): Promise<void> {
  const f = await Deno.open(file, { create: true, write: true, truncate: true });
  const enc = new TextEncoder();
  let batch = JSON.stringify({ role: "_system_prompt", content: "SYSTEM" }) + "\n";
  for (let i = 0; i < turns; i++) {
    batch += turnRecords(i).join("\n") + "\n";
    batch += JSON.stringify({ role: "_usage", token_count: 1000 + i }) + "\n";
    if (batch.length > 1 << 20) {
      await f.write(enc.encode(batch));
      batch = "";
    }
  }
  await f.write(enc.encode(batch));
  f.close();
}

/** Write a context whose one user message is a single line of about `mb` MB. */
async function writeOneLine(file: string, mb: number): Promise<void> {
  const log = "2026-11-26 08:00:00 INFO request served in 3 ms\\n".repeat(
    Math.ceil(mb * 1024 * 1024 / 48),
  );
  await Deno.writeTextFile(
    file,
    JSON.stringify({ role: "_system_prompt", content: "SYSTEM" }) + "\n" +
      `{"role":"user","content":"${log}"}\n`,
  );
}

interface ChildTime {
  /** Wall time of the restore or the read, ms. */
  ms: number;
  /** CPU time of the process's threads meanwhile, ms. */
  cpuMs: number;
}

async function childTime(mode: "restore" | "read" | "keep", file: string): Promise<ChildTime> {
  const out = await new Deno.Command(Deno.execPath(), {
    // kimi's own V8 flags (its 2 MB young generation), as `kimi` runs a resume
    args: [
      "run",
      "-A",
      "--no-prompt",
      DENO_V8_FLAGS_ARG,
      new URL(import.meta.url).pathname,
      "--child",
      mode,
      file,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const { ms, cpuMs } = JSON.parse(new TextDecoder().decode(out.stdout).trim());
  return { ms, cpuMs };
}

/** Medians of interleaved restore/read/keep runs, and the ratio of each pair. */
interface ResumeFigures {
  restore: number;
  read: number;
  /** restore / read of each pair, sorted. */
  pairRatios: number[];
  restoreCpu: number;
  readCpu: number;
  /** Reading, parsing and keeping the parsed lines (the history held, as a resume must). */
  keep: number;
  keepCpu: number;
}

/** Median restore and read times over `runs` interleaved pairs (after one discarded pair). */
async function resumeFigures(file: string, runs: number): Promise<ResumeFigures> {
  const restore: ChildTime[] = [];
  const read: ChildTime[] = [];
  const keep: ChildTime[] = [];
  for (let i = -1; i < runs; i++) {
    const r = await childTime("restore", file);
    const b = await childTime("read", file);
    const k = await childTime("keep", file);
    if (i >= 0) {
      restore.push(r);
      read.push(b);
      keep.push(k);
    }
  }
  return {
    restore: median(restore.map((t) => t.ms)),
    read: median(read.map((t) => t.ms)),
    pairRatios: restore.map((t, i) => t.ms / read[i].ms).sort((a, b) => a - b),
    restoreCpu: median(restore.map((t) => t.cpuMs)),
    readCpu: median(read.map((t) => t.cpuMs)),
    keep: median(keep.map((t) => t.ms)),
    keepCpu: median(keep.map((t) => t.cpuMs)),
  };
}

/** The resume rows of the table. */
function resumeRows(label: string, f: ResumeFigures): string[][] {
  const spread = `pairs ${f.pairRatios[0].toFixed(2)}–${f.pairRatios.at(-1)!.toFixed(2)}`;
  const rows = [[
    label,
    formatMs(f.restore),
    `read + parse once: ${formatMs(f.read)}`,
    `${formatRatio(f.restore, f.read)} (${spread})`,
    "≤ 1.2×",
  ]];
  rows.push([
    `${label}, against holding what was parsed`,
    formatMs(f.restore),
    `read + parse + keep the values: ${formatMs(f.keep)}`,
    formatRatio(f.restore, f.keep),
    "—",
  ]);
  if (Number.isFinite(f.restoreCpu)) {
    rows.push([
      `${label}: CPU time of the process`,
      formatMs(f.restoreCpu),
      `read + parse once: ${formatMs(f.readCpu)}; + keep: ${formatMs(f.keepCpu)}`,
      `${formatRatio(f.restoreCpu, f.readCpu)}; ${formatRatio(f.restoreCpu, f.keepCpu)}`,
      "—",
    ]);
  }
  return rows;
}

/** Gaps (ms) between the scripted provider's calls in one `kimi --print` run of Think steps. */
async function stepGaps(
  sb: Awaited<ReturnType<typeof createSandbox>>,
  config: string,
  session: string,
): Promise<number[]> {
  const prof = Deno.env.get("KIMI_BENCH_CPU_PROF");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      DENO_V8_FLAGS_ARG,
      ...(prof && session.startsWith("long") ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
      "-A",
      MAIN_TS,
      "--print",
      "--yolo",
      "--session",
      session,
      "--config-file",
      config,
      "-p",
      "go",
    ],
    cwd: sb.workDir,
    env: { ...sb.env, KIMI_SCRIPTED_ECHO_TRACE: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stamps: number[] = [];
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of child.stdout) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      if (pending.slice(0, nl).includes("SCRIPTED_ECHO")) stamps.push(performance.now());
      pending = pending.slice(nl + 1);
    }
  }
  await child.status;
  return stamps.slice(1).map((t, i) => t - stamps[i]);
}

if (import.meta.main) {
  const runs = arg("--runs", 3);
  const turns = arg("--turns", 2000);
  const sb = await createSandbox();
  try {
    const big = join(sb.root, "turns.jsonl");
    const line = join(sb.root, "line.jsonl");
    await writeTurns(big, turns);
    await writeOneLine(line, 50);
    const mb = (p: string) => `${(Deno.statSync(p).size / 1024 / 1024).toFixed(1)} MB`;
    // Resume pairs are cheap (a fraction of a second each): more of them than step runs, so a
    // median is not one scheduler hiccup.
    const resumeRuns = arg("--resume-runs", 7);
    const turnsResume = await resumeFigures(big, resumeRuns);
    const lineResume = await resumeFigures(line, resumeRuns);
    if (args.includes("--resume-only")) {
      console.log(`\n### Resume (medians of ${resumeRuns} pairs)\n`);
      console.log(markdownTable(["figure", "measured", "baseline (same run)", "ratio", "budget"], [
        ...resumeRows(`resume ${turns} turns (${mb(big)})`, turnsResume),
        ...resumeRows(`resume one ${mb(line)} line`, lineResume),
      ]));
      Deno.exit(0);
    }

    // Enough steps that the median gap of a run is not one scheduler hiccup on a loaded machine.
    const steps = arg("--steps", 30);
    // Each thought differs: the same call repeated is stopped as a loop (tool_call_repeat).
    const think = (i: number) => JSON.stringify({ thought: `step ${i}` });
    const scripts = [
      ...Array.from(
        { length: steps },
        (_, i) =>
          `tool_call: ${JSON.stringify({ id: `t${i}`, name: "Think", arguments: think(i) })}`,
      ),
      "text: done",
    ];
    const scriptFile = join(sb.root, "scripts.json");
    const config = await writeScriptedConfig(sb.root, scriptFile);
    const fresh: number[] = [];
    const long: number[] = [];
    for (let i = -1; i < runs; i++) {
      await Deno.writeTextFile(scriptFile, JSON.stringify(scripts));
      const f = await stepGaps(sb, config, `fresh-${i}`);
      // The long session: created by a first run, then its context replaced by the big one.
      const id = `long-${i}`;
      await Deno.writeTextFile(scriptFile, JSON.stringify(["text: hi"]));
      await stepGaps(sb, config, id);
      const ctxFile = await findContext(join(sb.env.KIMI_SHARE_DIR, "sessions"), id);
      await Deno.copyFile(big, ctxFile);
      await Deno.writeTextFile(scriptFile, JSON.stringify(scripts));
      const l = await stepGaps(sb, config, id);
      if (i >= 0) {
        fresh.push(median(f));
        long.push(median(l));
      }
    }
    const [stepFresh, stepLong] = [median(fresh), median(long)];
    console.log(
      `\n### Long sessions (resume: medians of ${resumeRuns} pairs; steps: medians of ${runs})\n`,
    );
    console.log(markdownTable(["figure", "measured", "baseline (same run)", "ratio", "budget"], [
      ...resumeRows(`resume ${turns} turns (${mb(big)})`, turnsResume),
      ...resumeRows(`resume one ${mb(line)} line`, lineResume),
      [
        `harness time per step at turn ${turns}`,
        formatMs(stepLong),
        `turn 1: ${formatMs(stepFresh)}`,
        formatRatio(stepLong, stepFresh),
        "≤ 1.2×",
      ],
    ]));
  } finally {
    await sb.cleanup();
  }
}

/** The context.jsonl of the session named `id` below the sessions root. */
async function findContext(root: string, id: string): Promise<string> {
  for await (const dir of Deno.readDir(root)) {
    const candidate = join(root, dir.name, id, "context.jsonl");
    try {
      await Deno.stat(candidate);
      return candidate;
    } catch {
      // not in this work dir's folder
    }
  }
  throw new Error(`no session ${id} under ${root}`);
}
