/**
 * File-undo benchmark (issue "Scale", item 3): one `kimi --print` session (stream-json input,
 * the scripted provider) whose turns change 10,000 existing files with WriteFile, one call per
 * step, then `/undo` of the last turn, all through `main.ts`: the real tool pipeline, approval
 * (`--yolo`), snapshots (`lib/session/file_snapshots.ts`) and context.
 *
 * Reported:
 * - snapshot storage (`<session>/snapshots/`: blobs plus `index.jsonl`) against the total size
 *   of the changed files' prior contents, in bytes and in disk blocks;
 * - the time of a step making one change (the gap between two model calls, which the scripted
 *   provider stamps), median of the first 100 changes against the last 100;
 * - the time of `/undo` of the last turn (from writing the command, once the last turn's reply
 *   is out and the storage measured, to the undo's answer), and that it restored exactly that
 *   turn's files.
 *
 * Usage: `deno run -A scripts/bench/undo.ts [--files N] [--per-turn N]`.
 *
 * @module
 */
import { join } from "node:path";
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { createSandbox, MAIN_TS, onlySessionDir, writeScriptedConfig } from "./child_env.ts";
import { formatBytes, formatMs, formatRatio, markdownTable, median } from "./stats.ts";

const args = Deno.args;
const arg = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};

const WORDS = (
  "const let function return if else for while import export from type interface class new " +
  "await async this value result error path file data length index count string number true " +
  "false null undefined push map filter join split slice options config session context"
).split(" ");

/** Prior content of file `i`: 1 to 4 KB of code-like lines, distinct per file. */
function priorContent(i: number): string {
  let seed = i * 2654435761 >>> 0;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const target = 1024 + (i % 48) * 64;
  let text = "";
  while (text.length < target) {
    const n = 3 + Math.floor(next() * 8);
    const words = Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]);
    text += `${"  ".repeat(Math.floor(next() * 4))}${words.join(" ")} ${
      Math.floor(next() * 1e6)
    };\n`;
  }
  return text;
}

/** Apparent size and allocated bytes of every file below `dir`. */
async function usage(dir: string): Promise<{ bytes: number; disk: number; files: number }> {
  let bytes = 0;
  let disk = 0;
  let files = 0;
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) {
      const u = await usage(p);
      bytes += u.bytes;
      disk += u.disk;
      files += u.files;
    } else if (e.isFile) {
      const info = await Deno.stat(p);
      bytes += info.size;
      disk += (info.blocks ?? 0) * 512;
      files++;
    }
  }
  return { bytes, disk, files };
}

/** Measured figures of one run. */
export interface UndoBenchResult {
  /** Files changed (one WriteFile each). */
  files: number;
  /** Changes per turn. */
  perTurn: number;
  /** Total bytes of the changed files before the changes. */
  priorBytes: number;
  /** Disk blocks (bytes) the prior contents occupied. */
  priorDisk: number;
  /** Snapshot storage after the run. */
  snapshots: { bytes: number; disk: number; files: number };
  /** Median step time of the first 100 changes (ms). */
  firstSteps: number;
  /** Median step time of the last 100 changes (ms). */
  lastSteps: number;
  /** Time of `/undo` of the last turn (ms). */
  undoMs: number;
  /** Whether `/undo` restored exactly the last turn's files, and only them. */
  undoExact: boolean;
  /** The undo's answer. */
  undoText: string;
}

/** Run the benchmark once. */
export async function runUndoBench(
  opts: { files?: number; perTurn?: number } = {},
): Promise<UndoBenchResult> {
  const files = opts.files ?? 10_000;
  const perTurn = opts.perTurn ?? 10;
  const turns = Math.ceil(files / perTurn);
  const sb = await createSandbox();
  try {
    const work = sb.workDir;
    let priorBytes = 0;
    let priorDisk = 0;
    for (let i = 0; i < files; i++) {
      const dir = join(work, `d${Math.floor(i / 100)}`);
      if (i % 100 === 0) await Deno.mkdir(dir);
      const text = priorContent(i);
      await Deno.writeTextFile(join(dir, `f${i}.txt`), text);
      priorBytes += text.length;
    }
    priorDisk = (await usage(work)).disk;

    // Turn t: one WriteFile step per file, then a closing text.
    const scripts: string[] = [];
    const input: string[] = [];
    for (let t = 0; t < turns; t++) {
      for (let i = t * perTurn; i < Math.min(files, (t + 1) * perTurn); i++) {
        const path = `d${Math.floor(i / 100)}/f${i}.txt`;
        scripts.push(
          `tool_call: ${
            JSON.stringify({
              id: `w${i}`,
              name: "WriteFile",
              arguments: JSON.stringify({ path, content: `new content of file ${i}\n` }),
            })
          }`,
        );
      }
      scripts.push(`text: turn ${t} done`);
      input.push(JSON.stringify({ role: "user", content: `turn ${t}` }));
    }
    const scriptFile = join(sb.root, "scripts.json");
    await Deno.writeTextFile(scriptFile, JSON.stringify(scripts));
    const config = await writeScriptedConfig(sb.root, scriptFile);
    // KIMI_BENCH_CPU_PROF=<dir>: write the kimi process's CPU profile there.
    const prof = Deno.env.get("KIMI_BENCH_CPU_PROF");
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        DENO_V8_FLAGS_ARG,
        ...(prof ? ["--cpu-prof", `--cpu-prof-dir=${prof}`] : []),
        "-A",
        MAIN_TS,
        "--print",
        "--yolo",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--config-file",
        config,
      ],
      cwd: work,
      env: { ...sb.env, KIMI_SCRIPTED_ECHO_TRACE: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    const enc = new TextEncoder();
    await writer.write(enc.encode(input.join("\n") + "\n"));
    let snapshots = { bytes: 0, disk: 0, files: 0 };
    const stderr = new Response(child.stderr).text();
    const calls: number[] = [];
    let undoSent = 0;
    let undoAt = 0;
    let undoText = "";
    const decoder = new TextDecoder();
    let pending = "";
    const lastTurn = `turn ${turns - 1} done`;
    for await (const chunk of child.stdout) {
      pending += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        const now = performance.now();
        if (line.startsWith("SCRIPTED_ECHO")) calls.push(now);
        else if (line.includes(lastTurn) && undoSent === 0) {
          // Every change is made: measure the storage, then undo the last turn.
          snapshots = await usage(join(await onlySessionDir(sb.env.KIMI_SHARE_DIR), "snapshots"));
          await writer.write(enc.encode(JSON.stringify({ role: "user", content: "/undo" }) + "\n"));
          await writer.close();
          undoSent = performance.now();
        } else if (line.includes("Undid the last turn")) {
          undoAt = now;
          undoText = JSON.parse(line).content;
        }
      }
    }
    const status = await child.status;
    if (!status.success || undoAt === 0) {
      throw new Error(`kimi failed (exit ${status.code}): ${(await stderr).slice(-2000)}`);
    }
    // Gaps between consecutive model calls within a turn: each is one WriteFile step.
    const steps: number[] = [];
    for (let t = 0; t < turns; t++) {
      const base = t * (perTurn + 1);
      for (let k = 0; k < perTurn && base + k + 1 < calls.length; k++) {
        steps.push(calls[base + k + 1] - calls[base + k]);
      }
    }
    // The last turn's files are back as they were; the turn before keeps its changes.
    let undoExact = true;
    for (let i = 0; i < files; i++) {
      const text = await Deno.readTextFile(join(work, `d${Math.floor(i / 100)}`, `f${i}.txt`));
      const undone = i >= (turns - 1) * perTurn;
      if (text !== (undone ? priorContent(i) : `new content of file ${i}\n`)) undoExact = false;
    }
    return {
      files,
      perTurn,
      priorBytes,
      priorDisk,
      snapshots,
      firstSteps: median(steps.slice(0, 100)),
      lastSteps: median(steps.slice(-100)),
      undoMs: undoAt - undoSent,
      undoExact,
      undoText,
    };
  } finally {
    await sb.cleanup();
  }
}

/** The Markdown report of one run. */
export function undoMarkdown(r: UndoBenchResult): string {
  const n = r.files.toLocaleString("en-US");
  return [
    `### File undo (${n} files changed by WriteFile, ${r.perTurn} per turn, one \`kimi --print\`)`,
    "",
    markdownTable(["figure", "measured", "baseline (same run)", "ratio", "budget"], [
      [
        "snapshot storage (blobs + index.jsonl)",
        formatBytes(r.snapshots.bytes),
        `prior contents of the changed files: ${formatBytes(r.priorBytes)}`,
        formatRatio(r.snapshots.bytes, r.priorBytes),
        "≤ 1×",
      ],
      [
        "snapshot storage on disk (allocated blocks)",
        formatBytes(r.snapshots.disk),
        `the changed files' blocks before: ${formatBytes(r.priorDisk)}`,
        formatRatio(r.snapshots.disk, r.priorDisk),
        // Each blob is a file of at least one block, as each changed file was: the budget is the
        // bytes kept (the row above), this row says what the file system makes of them.
        "— (one block per blob, as per file)",
      ],
      [
        `step with one WriteFile, changes ${r.files - 99}–${r.files}`,
        formatMs(r.lastSteps),
        `changes 1–100: ${formatMs(r.firstSteps)}`,
        formatRatio(r.lastSteps, r.firstSteps),
        "not linear",
      ],
      [
        `\`/undo\` of the last turn (${r.perTurn} files)`,
        formatMs(r.undoMs),
        "—",
        "—",
        r.undoExact ? "restored exactly that turn's files" : "**wrong files restored**",
      ],
    ]),
  ].join("\n");
}

if (import.meta.main) {
  const r = await runUndoBench({ files: arg("--files", 10_000), perTurn: arg("--per-turn", 10) });
  console.log(undoMarkdown(r));
  if (!r.undoExact) Deno.exit(1);
}
