/**
 * Wire benchmark (`kimi --wire` driven by the typed client `KimiWireClient` from mod.ts):
 *
 * - Spawn → initialize: wall time from just before `spawn()` of `main.ts --wire` to the
 *   `initialize` response, interleaved round-robin with `deno run` of an empty script (spawn →
 *   exit), the runtime floor, measured in the same run and reported as a ratio.
 * - Throughput: one `_scripted_echo` turn that streams a script of `lines` `text:` lines of
 *   `lineChars` characters each (default 100,000 × 100 = 10 MB), sent by the server as one
 *   `ContentPart` event per line. Measured from sending `prompt` to its response: wall time,
 *   events per second received by the client (events are counted as the client yields them),
 *   text throughput, and the child's peak RSS (`VmHWM` of `/proc/<pid>/status`, read while the
 *   child is still alive: right after `initialize` and again after the turn).
 *
 * - The same text streamed over HTTP: the mock OpenAI server (`tests/helpers/mock_openai.ts`,
 *   in this process) sends it as one SSE event per line to the `kimi` provider (what a network
 *   provider costs, which the scripted provider does not show); measured after a first turn of
 *   10,000 events.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/wire.ts [--runs=N] [--warmup=N]
 * [--turn-runs=N] [--sse-turn-runs=N] [--lines=N] [--line-chars=N]`
 *
 * @module
 */
import { WIRE_SERVER_PROTOCOL_VERSION } from "../../lib/version.ts";
import { KimiWireClient } from "../../mod.ts";
import { type ChildSandbox, createSandbox, writeMockProviderConfig } from "./child_env.ts";
import { startMockOpenAI } from "../../tests/helpers/mock_openai.ts";
import { timeToExit } from "./spawn_timing.ts";
import {
  formatBytes,
  formatMs,
  formatRatio,
  formatSummary,
  markdownTable,
  summarize,
  type Summary,
} from "./stats.ts";

/** Options of {@link runWireBench}. */
export interface WireBenchOptions {
  /** Measured spawn → initialize runs (and baseline runs). Default 15. */
  runs?: number;
  /** Discarded warm-up runs of each. Default 3. */
  warmup?: number;
  /** Measured throughput turns (each in a fresh server). Default 3. */
  turnRuns?: number;
  /** `text:` lines in the throughput script. Default 100,000. */
  lines?: number;
  /** Characters per line. Default 100. */
  lineChars?: number;
  /** Measured turns streamed by the mock OpenAI server (SSE, `kimi` provider). Default 3. */
  sseTurnRuns?: number;
}

/** One throughput turn. */
export interface WireTurnRun {
  /** Milliseconds from sending `prompt` to its response. */
  wallMs: number;
  /** Events the client yielded for the turn. */
  events: number;
  /** `ContentPart` text characters received (must equal lines × lineChars). */
  textChars: number;
  /** Peak RSS of the child right after `initialize`, in bytes. */
  idleRssBytes: number;
  /** Peak RSS of the child after the turn, in bytes. */
  peakRssBytes: number;
}

/** Result of {@link runWireBench}. */
export interface WireBenchResult {
  /** `deno run` of an empty script, spawn → exit. */
  baseline: Summary;
  /** `main.ts --wire`, spawn → initialize response. */
  initialize: Summary;
  /** Script shape of the throughput turn. */
  lines: number;
  /** Characters per line. */
  lineChars: number;
  /** Each throughput turn. */
  turns: WireTurnRun[];
  /** Turn wall time. */
  turnWall: Summary;
  /** Events per second received by the client. */
  eventsPerSecond: Summary;
  /** Text megabytes (2^20 bytes) per second. */
  megabytesPerSecond: Summary;
  /** Child peak RSS after initialize. */
  idleRss: Summary;
  /** Child peak RSS after the turn. */
  peakRss: Summary;
  /** Peak RSS after the turn minus after initialize, per turn. */
  turnOverIdle: Summary;
  /**
   * The same text streamed over HTTP by the mock OpenAI server (`kimi` provider, one SSE event
   * per part), measured after a first short turn (so the first request's fixed cost, the HTTP
   * client's, is in the idle figure): each turn.
   */
  sseTurns: WireTurnRun[];
  /** Peak RSS of the SSE turn minus before it, per turn. */
  sseTurnOverIdle: Summary;
}

/** Budget: the streamed turn's peak RSS over the idle process ≤ 3× its text. */
export const TURN_BUDGET_RATIO = 3;

/** Median peak RSS over the idle process as a multiple of the turn's text. */
export function turnOverIdleRatio(r: WireBenchResult): number {
  return r.turnOverIdle.median / (r.lines * r.lineChars);
}

const MB = 1024 * 1024;

/** The `text:` lines of the throughput script (ASCII, no quotes, fixed width). */
export function throughputScript(lines: number, lineChars: number): string {
  const out: string[] = new Array(lines);
  const filler = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(lineChars / 36) + 1);
  for (let i = 0; i < lines; i++) {
    const head = `L${String(i).padStart(7, "0")} `;
    out[i] = `text: ${(head + filler).slice(0, lineChars)}`;
  }
  return out.join("\n");
}

/** Write a `_scripted_echo` config for `scripts` into the sandbox; returns its path. */
export async function writeConfig(sb: ChildSandbox, scripts: string[]): Promise<string> {
  const scriptsPath = `${sb.root}/scripts-${crypto.randomUUID().slice(0, 8)}.json`;
  await Deno.writeTextFile(scriptsPath, JSON.stringify(scripts));
  const config = {
    default_model: "scripted",
    models: {
      // room for the 9.5 MB turn: a smaller context would be compacted after it (one more call)
      scripted: { provider: "echo", model: "scripted_echo", max_context_size: 10_000_000 },
    },
    providers: {
      echo: {
        type: "_scripted_echo",
        base_url: "",
        api_key: "",
        env: { KIMI_SCRIPTED_ECHO_SCRIPTS: scriptsPath },
      },
    },
  };
  const path = `${sb.root}/config-${crypto.randomUUID().slice(0, 8)}.json`;
  await Deno.writeTextFile(path, JSON.stringify(config));
  return path;
}

function spawnClient(sb: ChildSandbox, config: string): KimiWireClient {
  return KimiWireClient.spawn({
    args: ["--config-file", config],
    cwd: sb.workDir,
    env: sb.env,
    stderr: "null",
  });
}

/** Peak RSS (VmHWM) of a live process in bytes; 0 when /proc is unavailable. */
async function vmHwm(pid: number): Promise<number> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    return Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function closeClient(client: KimiWireClient): Promise<void> {
  const status = await client.close();
  if (!status.success) throw new Error(`kimi --wire exited with code ${status.code}`);
}

/** Milliseconds from spawning `main.ts --wire` to its `initialize` response. */
export async function timeInitialize(sb: ChildSandbox, config: string): Promise<number> {
  const t0 = performance.now();
  const client = spawnClient(sb, config);
  const init = await client.initialize({ client: { name: "bench", version: "0" } });
  const ms = performance.now() - t0;
  await closeClient(client);
  if (init.protocol_version !== WIRE_SERVER_PROTOCOL_VERSION) {
    throw new Error(`unexpected protocol version ${init.protocol_version}`);
  }
  return ms;
}

/**
 * One prompt ("stream it") of a wire client whose reply streams `chars` characters of text: its
 * wall time, the events and text received, and the child's peak RSS before and after. Throws
 * (naming `what`) when the turn does not finish or the text received is not all of it.
 */
async function measuredTurn(
  client: KimiWireClient,
  chars: number,
  what: string,
): Promise<WireTurnRun> {
  const idleRssBytes = await vmHwm(client.process.pid);
  let events = 0;
  let textChars = 0;
  const t0 = performance.now();
  const turn = client.prompt("stream it");
  for await (const msg of turn) {
    events++;
    if (msg.type === "ContentPart" && msg.payload.type === "text") {
      textChars += msg.payload.text.length;
    }
  }
  const result = await turn.result;
  const wallMs = performance.now() - t0;
  const peakRssBytes = await vmHwm(client.process.pid);
  if (result.status !== "finished") throw new Error(`${what} ended with ${result.status}`);
  if (textChars !== chars) {
    throw new Error(`${what}: received ${textChars} text chars, expected ${chars}`);
  }
  return { wallMs, events, textChars, idleRssBytes, peakRssBytes };
}

async function throughputTurn(
  sb: ChildSandbox,
  opts: { lines: number; lineChars: number },
): Promise<WireTurnRun> {
  const config = await writeConfig(sb, [throughputScript(opts.lines, opts.lineChars)]);
  const client = spawnClient(sb, config);
  try {
    await client.initialize();
    return await measuredTurn(client, opts.lines * opts.lineChars, "turn");
  } finally {
    await closeClient(client);
  }
}

/**
 * One turn streamed over HTTP by the mock OpenAI server: the throughput text as `lines` SSE
 * events of `lineChars` characters, after a first turn streaming 10,000 such events (the idle
 * figure is taken after it, so the one-time cost of a first streamed body is not counted as the
 * big turn's).
 */
async function sseTurn(
  sb: ChildSandbox,
  opts: { lines: number; lineChars: number },
): Promise<WireTurnRun> {
  const text = throughputScript(opts.lines, opts.lineChars).replaceAll("text: ", "")
    .replaceAll("\n", "");
  const server = await startMockOpenAI();
  // The warm-up reply streams 10,000 events: the first streamed body of a process costs about
  // 20 MB once (a bare fetch loop shows it too; later bodies of any size add under 1 MB).
  const warmText = text.slice(0, Math.min(text.length, 10_000 * opts.lineChars));
  server.enqueue({ text: warmText, chunkChars: opts.lineChars }, {
    text,
    chunkChars: opts.lineChars,
  });
  const config = await writeMockProviderConfig(sb.root, server.url, 10_000_000);
  const client = spawnClient(sb, config);
  try {
    await client.initialize();
    const warm = client.prompt("warm up");
    for await (const _ of warm) { /* the warm-up turn's events */ }
    if ((await warm.result).status !== "finished") throw new Error("the warm-up turn failed");
    return await measuredTurn(client, text.length, "SSE turn");
  } finally {
    await closeClient(client);
    await server.close();
  }
}

/** Run the wire benchmark. */
export async function runWireBench(opts: WireBenchOptions = {}): Promise<WireBenchResult> {
  const runs = opts.runs ?? 15;
  const warmup = opts.warmup ?? 3;
  const turnRuns = opts.turnRuns ?? 3;
  const lines = opts.lines ?? 100_000;
  const lineChars = opts.lineChars ?? 100;
  const sb = await createSandbox();
  try {
    const empty = `${sb.root}/empty.ts`;
    await Deno.writeTextFile(empty, "");
    const config = await writeConfig(sb, ["text: unused"]);
    const baseline: number[] = [];
    const initialize: number[] = [];
    for (let i = 0; i < warmup + runs; i++) {
      const base = await timeToExit({
        args: ["run", "--no-prompt", "-A", "--no-config", empty],
        cwd: sb.workDir,
        env: sb.env,
      });
      if (base.code !== 0) throw new Error(`empty script failed: ${base.stderr.trim()}`);
      const init = await timeInitialize(sb, config);
      if (i >= warmup) {
        baseline.push(base.ms);
        initialize.push(init);
      }
    }

    const turns: WireTurnRun[] = [];
    for (let i = 0; i < turnRuns; i++) turns.push(await throughputTurn(sb, { lines, lineChars }));
    const sseTurns: WireTurnRun[] = [];
    for (let i = 0; i < (opts.sseTurnRuns ?? 3); i++) {
      sseTurns.push(await sseTurn(sb, { lines, lineChars }));
    }
    return {
      baseline: summarize(baseline),
      initialize: summarize(initialize),
      lines,
      lineChars,
      turns,
      turnWall: summarize(turns.map((t) => t.wallMs)),
      eventsPerSecond: summarize(turns.map((t) => t.events / (t.wallMs / 1000))),
      megabytesPerSecond: summarize(turns.map((t) => t.textChars / MB / (t.wallMs / 1000))),
      idleRss: summarize(turns.map((t) => t.idleRssBytes)),
      peakRss: summarize(turns.map((t) => t.peakRssBytes)),
      turnOverIdle: summarize(turns.map((t) => Math.max(0, t.peakRssBytes - t.idleRssBytes))),
      sseTurns,
      sseTurnOverIdle: summarize(
        sseTurns.map((t) => Math.max(0, t.peakRssBytes - t.idleRssBytes)),
      ),
    };
  } finally {
    await sb.cleanup();
  }
}

const formatRate = (unit: string, digits: number) => (v: number) =>
  `${v.toLocaleString("en-US", { maximumFractionDigits: digits })} ${unit}`;

/** The result as Markdown. */
export function wireMarkdown(r: WireBenchResult): string {
  const textMb = (r.lines * r.lineChars) / MB;
  const rows = [
    [
      "Spawn → `initialize` response",
      formatSummary(r.initialize),
      `${formatRatio(r.initialize.median, r.baseline.median)} of the empty-script spawn → exit ` +
      `(${formatMs(r.baseline.median)}, same run)`,
    ],
    [
      `Turn streaming ${textMb.toFixed(1)} MB as ${r.lines.toLocaleString("en-US")} parts`,
      formatSummary(r.turnWall),
      `prompt sent → prompt response; ${r.turns[0].events.toLocaleString("en-US")} events`,
    ],
    ["Events received per second", formatSummary(r.eventsPerSecond, formatRate("ev/s", 0)), ""],
    ["Text throughput", formatSummary(r.megabytesPerSecond, formatRate("MB/s", 2)), ""],
    [
      "Child peak RSS after the turn",
      formatSummary(r.peakRss, formatBytes),
      `${formatBytes(r.idleRss.median)} after initialize (VmHWM)`,
    ],
    [
      "Turn peak RSS over the idle process",
      formatSummary(r.turnOverIdle, formatBytes),
      `${turnOverIdleRatio(r).toFixed(2)}× the ${textMb.toFixed(1)} MB of text (budget ≤ ` +
      `${TURN_BUDGET_RATIO}×: ${turnOverIdleRatio(r) <= TURN_BUDGET_RATIO ? "met" : "**missed**"})`,
    ],
  ];
  if (r.sseTurns.length > 0) {
    const ratio = r.sseTurnOverIdle.median / (r.lines * r.lineChars);
    rows.push([
      "The same turn over SSE from the mock OpenAI server: peak RSS over the process before it",
      formatSummary(r.sseTurnOverIdle, formatBytes),
      `${ratio.toFixed(2)}× the text (\`kimi\` provider, ${
        r.sseTurns[0].events.toLocaleString("en-US")
      } events, after a turn of 10,000; ${
        formatSummary(summarize(r.sseTurns.map((t) => t.wallMs)))
      })`,
    ]);
  }
  return `${markdownTable(["Metric", "Median (min–max)", "Notes"], rows)}\n\n` +
    `${r.initialize.n} spawn runs after warm-up, interleaved with the baseline; ` +
    `${r.turns.length} throughput turns, each in a fresh server.`;
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  const r = await runWireBench({
    runs: intFlag("runs"),
    warmup: intFlag("warmup"),
    turnRuns: intFlag("turn-runs"),
    lines: intFlag("lines"),
    lineChars: intFlag("line-chars"),
    sseTurnRuns: intFlag("sse-turn-runs"),
  });
  console.log(wireMarkdown(r));
}
