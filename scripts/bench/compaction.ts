/**
 * Compaction benchmark (issue "Scale", item 3): `/compact` of a resumed session whose context
 * holds about 1 M tokens (4 MB of text: tool outputs, user and assistant messages), in a
 * `kimi --print` process (stream-json input), with
 *
 * - the scripted provider (it ignores the request: kimi's own work, the summary request built
 *   from the history, the context rotated and rewritten);
 * - a mock OpenAI-compatible server on 127.0.0.1 behind a `kimi` provider (the request is
 *   serialized and sent as a real provider does: streamed, chunked, from 1 MiB on);
 * - the same against a mock that refuses chunked bodies (`411 Length Required`), so the
 *   request goes buffered (one JSON string, then its bytes), as before it was streamed;
 * - a plain step over the same history with the streaming provider (the baseline).
 *
 * Reported, as medians over `--runs` runs (default 3) with their range: the time from sending
 * `/compact` to its answer, and the process's peak RSS over its peak before the command (the
 * session restored, idle), as a multiple of the context's size.
 *
 * Usage: `deno run -A scripts/bench/compaction.ts [--mb N] [--runs N]`.
 *
 * @module
 */
import { join } from "node:path";
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { startMockOpenAI } from "../../tests/helpers/mock_openai.ts";
import {
  type ChildSandbox,
  createSandbox,
  MAIN_TS,
  onlySessionDir,
  TURN_TEXT_BYTES,
  turnRecords,
  writeMockProviderConfig,
  writeScriptedConfig,
} from "./child_env.ts";
import { formatBytes, formatMs, markdownTable, max, median, min } from "./stats.ts";

const MB = 1024 * 1024;
const COMPACTED = "The context has been compacted.";

/** Write a context of about `bytes` bytes of message text (a turn is ~21 KB). */
async function writeContext(file: string, bytes: number): Promise<void> {
  const lines = [JSON.stringify({ role: "_system_prompt", content: "SYSTEM" })];
  const turns = Math.ceil(bytes / TURN_TEXT_BYTES);
  for (let i = 0; i < turns; i++) lines.push(...turnRecords(i));
  await Deno.writeTextFile(file, lines.join("\n") + "\n");
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

/** One measured `/compact`. */
export interface CompactionRun {
  /** Wall time from sending `/compact` to its answer (ms). */
  ms: number;
  /** Peak RSS before the command (session restored), bytes. */
  idleRss: number;
  /** Peak RSS after it, bytes. */
  peakRss: number;
}

function printArgs(config: string, extra: string[] = []): string[] {
  return [
    "run",
    "--no-prompt",
    DENO_V8_FLAGS_ARG,
    "-A",
    MAIN_TS,
    "--print",
    "--yolo",
    "--config-file",
    config,
    ...extra,
  ];
}

/**
 * Create a session, give it the big context, then resume it and time `input` until a line of
 * output holds `done`.
 */
async function measure(
  sb: ChildSandbox,
  config: string,
  bytes: number,
  input: string,
  done: string,
): Promise<CompactionRun> {
  const first = await new Deno.Command(Deno.execPath(), {
    args: printArgs(config, ["--session", "big", "-p", "hi"]),
    cwd: sb.workDir,
    env: sb.env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!first.success) throw new Error(new TextDecoder().decode(first.stderr));
  await writeContext(join(await onlySessionDir(sb.env.KIMI_SHARE_DIR), "context.jsonl"), bytes);
  const child = new Deno.Command(Deno.execPath(), {
    args: printArgs(config, [
      "--session",
      "big",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
    ]),
    cwd: sb.workDir,
    env: sb.env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const send = (content: string) =>
    writer.write(enc.encode(JSON.stringify({ role: "user", content }) + "\n"));
  // An unknown command answers at once: the session is restored and idle.
  await send("/bench-ready");
  let idleRss = 0;
  let peakRss = 0;
  let sent = 0;
  let ms = 0;
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of child.stdout) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (line.includes("Unknown slash command") && sent === 0) {
        idleRss = await vmHwm(child.pid);
        sent = performance.now();
        await send(input);
      } else if (sent > 0 && ms === 0 && line.includes(done)) {
        ms = performance.now() - sent;
        peakRss = await vmHwm(child.pid);
        await writer.close();
      }
    }
  }
  const status = await child.status;
  if (!status.success || ms === 0) {
    throw new Error(`kimi failed (exit ${status.code}): ${(await stderr).slice(-2000)}`);
  }
  return { ms, idleRss, peakRss };
}

/** Results of the benchmark: each row's runs. */
export interface CompactionBenchResult {
  /** Size of the context's file. */
  contextBytes: number;
  /** Estimated tokens of the context (characters / 4). */
  tokens: number;
  /** With the scripted provider. */
  scripted: CompactionRun[];
  /** With a `kimi` provider against the mock server (the request streamed). */
  mock: CompactionRun[];
  /** The same against a mock refusing chunked bodies (the request buffered after a 411). */
  mockBuffered: CompactionRun[];
  /** A plain step over the same history, streaming provider and server (the baseline). */
  mockStep: CompactionRun[];
}

/** Run the benchmark: `runs` measures of each row, interleaved. */
export async function runCompactionBench(opts: { mb?: number; runs?: number } = {}): Promise<
  CompactionBenchResult
> {
  const bytes = (opts.mb ?? 4) * MB;
  const runs = Math.max(1, opts.runs ?? 3);
  const probe = await Deno.makeTempFile();
  await writeContext(probe, bytes);
  const contextBytes = (await Deno.stat(probe)).size;
  await Deno.remove(probe);
  const summary = "<current_focus>the benchmark</current_focus>";

  const scriptedRun = async () => {
    const sb = await createSandbox();
    try {
      const scriptFile = join(sb.root, "scripts.json");
      await Deno.writeTextFile(scriptFile, JSON.stringify(["text: hello", `text: ${summary}`]));
      const config = await writeScriptedConfig(sb.root, scriptFile);
      return await measure(sb, config, bytes, "/compact", COMPACTED);
    } finally {
      await sb.cleanup();
    }
  };
  const server = await startMockOpenAI({ defaultReply: { text: summary } });
  const refusing = await startMockOpenAI({ defaultReply: { text: summary }, refuseChunked: true });
  const withMock = async (url: string, input: string, done: string) => {
    const sb2 = await createSandbox();
    try {
      const config = await writeMockProviderConfig(sb2.root, url, 2_000_000);
      return await measure(sb2, config, bytes, input, done);
    } finally {
      await sb2.cleanup();
    }
  };
  const result: CompactionBenchResult = {
    contextBytes,
    tokens: Math.round(contextBytes / 4),
    scripted: [],
    mock: [],
    mockBuffered: [],
    mockStep: [],
  };
  try {
    for (let i = 0; i < runs; i++) {
      result.scripted.push(await scriptedRun());
      result.mock.push(await withMock(server.url, "/compact", COMPACTED));
      result.mockBuffered.push(await withMock(refusing.url, "/compact", COMPACTED));
      result.mockStep.push(await withMock(server.url, "continue", summary));
    }
    return result;
  } finally {
    await server.close();
    await refusing.close();
  }
}

/** The Markdown report: medians, with the range of the peak RSS's multiple. */
export function compactionMarkdown(r: CompactionBenchResult): string {
  const over = (run: CompactionRun) => Math.max(0, run.peakRss - run.idleRss);
  const times = (c: number) => `${(c / r.contextBytes).toFixed(2)}×`;
  const row = (name: string, runs: CompactionRun[]) => {
    const overs = runs.map(over);
    return [
      name,
      formatMs(median(runs.map((x) => x.ms))),
      formatBytes(median(runs.map((x) => x.idleRss))),
      formatBytes(median(overs)),
      runs.length > 1
        ? `${times(median(overs))} (${times(min(overs))}–${times(max(overs))})`
        : times(overs[0]),
    ];
  };
  return [
    `### Compaction of a ${(r.contextBytes / MB).toFixed(1)} MB context ` +
    `(~${Math.round(r.tokens / 1000).toLocaleString("en-US")}k tokens), \`/compact\` in ` +
    `\`kimi --print\` (medians of ${r.mock.length})`,
    "",
    markdownTable(
      ["run", "time", "peak RSS before (restored)", "peak RSS over it", "× the context"],
      [
        row("scripted (request ignored)", r.scripted),
        row("`kimi` provider, mock server on 127.0.0.1 (request streamed)", r.mock),
        row("same, server refusing chunked bodies (411: request buffered)", r.mockBuffered),
        row("baseline: one step over the same history, same provider", r.mockStep),
      ],
    ),
  ].join("\n");
}

if (import.meta.main) {
  const arg = (name: string) => {
    const i = Deno.args.indexOf(name);
    return i >= 0 ? Number(Deno.args[i + 1]) : undefined;
  };
  const r = await runCompactionBench({ mb: arg("--mb"), runs: arg("--runs") });
  console.log(compactionMarkdown(r));
}
