/**
 * Memory of big turns over the wire (`kimi --wire`, driven by raw JSON-RPC lines so the client
 * never holds more than one line):
 *
 * - Big prompt line: one `prompt` request whose user input is `promptMb` MiB (default 95, a
 *   pasted log of short lines), through the line reader, JSON parse, the soul, the
 *   `context.jsonl` / `wire.jsonl` records and the `TurnBegin` event sent back. Figure: the
 *   child's peak RSS (VmHWM) over its peak after `initialize`, as a multiple of the input size.
 * - Replay: a session whose `wire.jsonl` is grown to `replayMb` MiB (default 100; `--replay-mb=1024`
 *   for the 1 GB case) with a mix of recorded turns, then `replay` from a fresh `kimi --wire -C`.
 *   Figure: peak RSS over the idle process, which must not grow with the file (the file is
 *   streamed from disk and sent with backpressure), and the replay's throughput.
 *
 * The files are generated in a temp dir and deleted.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/wire_memory.ts [--prompt-mb=N] [--replay-mb=N]`
 *
 * @module
 */
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";
import { readLines } from "../../lib/wire/line_reader.ts";
import { pyJsonDumps } from "../../lib/wire/py_json.ts";
import { WIRE_SERVER_PROTOCOL_VERSION } from "../../lib/version.ts";
import { type ChildSandbox, createSandbox, MAIN_TS, writeScriptedConfig } from "./child_env.ts";
import { formatBytes, formatMs, markdownTable } from "./stats.ts";

/** Options of {@link runWireMemoryBench}. */
export interface WireMemoryBenchOptions {
  /** Size of the prompt's user input, MiB. Default 95. */
  promptMb?: number;
  /** Size the replayed `wire.jsonl` is grown to, MiB. Default 100. */
  replayMb?: number;
}

/** One measured child. */
export interface MemoryRun {
  /** Child peak RSS after `initialize`, bytes. */
  idleRssBytes: number;
  /** Child peak RSS after the request, bytes. */
  peakRssBytes: number;
  /** ms from sending the request to its response. */
  wallMs: number;
}

/** Result of {@link runWireMemoryBench}. */
export interface WireMemoryBenchResult {
  /** Prompt input size, bytes. */
  promptBytes: number;
  /** The big prompt. */
  prompt: MemoryRun;
  /** Size of the replayed file, bytes. */
  replayBytes: number;
  /** Records replayed (events + requests the server reported). */
  replayRecords: number;
  /** The replay. */
  replay: MemoryRun;
}

const MIB = 1024 * 1024;
const encoder = new TextEncoder();

/** Peak RSS (VmHWM) of a live process in bytes; 0 when /proc is unavailable. */
async function vmHwm(pid: number): Promise<number> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    return Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function writeConfig(sb: ChildSandbox, scripts: string[]): Promise<string> {
  const scriptsPath = `${sb.root}/scripts-${crypto.randomUUID().slice(0, 8)}.json`;
  await Deno.writeTextFile(scriptsPath, JSON.stringify(scripts));
  // room for the big prompt: a smaller context would be compacted first
  return await writeScriptedConfig(sb.root, scriptsPath, {
    maxContextSize: 1_000_000_000,
    path: `${sb.root}/config-${crypto.randomUUID().slice(0, 8)}.json`,
  });
}

/** A `kimi --wire` child spoken to with raw lines; events are counted, never kept. */
class RawWire {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #waiting = new Map<string, (msg: Record<string, unknown>) => void>();
  readonly #reading: Promise<void>;
  events = 0;
  /** Length of the longest line received. */
  longestLine = 0;

  constructor(sb: ChildSandbox, args: string[]) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", DENO_V8_FLAGS_ARG, "-A", MAIN_TS, "--wire", ...args],
      cwd: sb.workDir,
      env: sb.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    for await (const line of readLines(this.child.stdout, Infinity)) {
      if (!line) continue;
      this.longestLine = Math.max(this.longestLine, line.length);
      if (line.startsWith('{"jsonrpc":"2.0","method":"event"')) {
        this.events++;
        continue;
      }
      const msg = JSON.parse(line);
      const wake = typeof msg.id === "string" ? this.#waiting.get(msg.id) : undefined;
      if (wake) {
        this.#waiting.delete(msg.id);
        wake(msg);
      }
    }
  }

  /** Send a request given as the bytes of its line (without the newline); await the response. */
  async call(id: string, line: Uint8Array | string): Promise<Record<string, unknown>> {
    const response = new Promise<Record<string, unknown>>((r) => this.#waiting.set(id, r));
    const bytes = typeof line === "string" ? encoder.encode(line) : line;
    for (let off = 0; off < bytes.length; off += MIB) {
      await this.#writer.write(bytes.subarray(off, off + MIB));
    }
    await this.#writer.write(encoder.encode("\n"));
    const msg = await response;
    if (msg.error) throw new Error(`${id} failed: ${JSON.stringify(msg.error)}`);
    return msg.result as Record<string, unknown>;
  }

  initialize(): Promise<Record<string, unknown>> {
    return this.call(
      "init",
      JSON.stringify({
        jsonrpc: "2.0",
        id: "init",
        method: "initialize",
        params: { protocol_version: WIRE_SERVER_PROTOCOL_VERSION },
      }),
    );
  }

  async close(): Promise<void> {
    await this.#writer.close();
    const status = await this.child.status;
    await this.#reading;
    if (!status.success) throw new Error(`kimi --wire exited with code ${status.code}`);
  }
}

/**
 * The bytes of a `prompt` request line whose user input is `bytes` bytes of a pasted log
 * (short ASCII lines; each newline is two bytes, `\n`, in the JSON and one in the input).
 */
export function bigPromptLine(id: string, bytes: number): Uint8Array {
  const head = encoder.encode(
    `{"jsonrpc":"2.0","id":"${id}","method":"prompt","params":{"user_input":"`,
  );
  const tail = encoder.encode(`"}}`);
  const row = encoder.encode(
    "2026-01-01T00:00:00Z INFO request served in 12 ms path=/api/v1/items\\n",
  );
  const rowInput = row.length - 1; // "\\n" is one character of input
  const rows = Math.ceil(bytes / rowInput);
  const out = new Uint8Array(head.length + rows * row.length + tail.length);
  out.set(head, 0);
  let off = head.length;
  for (let i = 0; i < rows; i++, off += row.length) out.set(row, off);
  out.set(tail, off);
  return out;
}

async function bigPrompt(mb: number): Promise<{ run: MemoryRun; bytes: number }> {
  const sb = await createSandbox();
  try {
    const config = await writeConfig(sb, ["text: ok"]);
    const wire = new RawWire(sb, ["--config-file", config]);
    await wire.initialize();
    const idleRssBytes = await vmHwm(wire.child.pid);
    const line = bigPromptLine("p", mb * MIB);
    const t0 = performance.now();
    const result = await wire.call("p", line);
    const wallMs = performance.now() - t0;
    const peakRssBytes = await vmHwm(wire.child.pid);
    if (result.status !== "finished") throw new Error(`prompt ended with ${result.status}`);
    // the TurnBegin event carried the whole input back
    if (wire.longestLine < mb * MIB) throw new Error("the prompt was not echoed back whole");
    await wire.close();
    return { run: { idleRssBytes, peakRssBytes, wallMs }, bytes: mb * MIB };
  } finally {
    await sb.cleanup();
  }
}

async function findFile(dir: string, name: string): Promise<string | null> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isFile && e.name === name) return path;
    if (e.isDirectory) {
      const found = await findFile(path, name);
      if (found) return found;
    }
  }
  return null;
}

/** Append recorded turns (a prompt, steps with a tool call and a streamed reply) until `bytes`. */
async function growWireFile(path: string, bytes: number): Promise<number> {
  const file = await Deno.open(path, { append: true });
  let records = 0;
  try {
    let size = (await file.stat()).size;
    const reply = "The change is in place and the tests pass. ".repeat(40);
    const output = "src/module_0001.ts:12: export function item() {}\n".repeat(40);
    for (let turn = 0; size < bytes; turn++) {
      const t = 1_700_000_000 + turn;
      const recs = [
        { type: "TurnBegin", payload: { user_input: `Fix item ${turn} and run the tests.` } },
        { type: "StepBegin", payload: { n: 1 } },
        {
          type: "ToolCall",
          payload: {
            type: "function",
            id: `call_${turn}`,
            function: { name: "Grep", arguments: `{"pattern": "item${turn}"}` },
          },
        },
        {
          type: "ToolResult",
          payload: {
            tool_call_id: `call_${turn}`,
            return_value: { is_error: false, output, message: "", display: [] },
          },
        },
        { type: "StepBegin", payload: { n: 2 } },
        { type: "ContentPart", payload: { type: "text", text: `${reply} (${turn})` } },
        { type: "StatusUpdate", payload: { context_usage: 0.1, context_tokens: 1000 } },
        { type: "TurnEnd", payload: {} },
      ];
      const text = recs.map((message) => pyJsonDumps({ timestamp: t, message }) + "\n").join("");
      const data = encoder.encode(text);
      let off = 0;
      while (off < data.length) off += await file.write(data.subarray(off));
      size += data.length;
      records += recs.length;
    }
    return records;
  } finally {
    file.close();
  }
}

async function replay(mb: number): Promise<{ run: MemoryRun; bytes: number; records: number }> {
  const sb = await createSandbox();
  try {
    const config = await writeConfig(sb, ["text: ok"]);
    const first = new RawWire(sb, ["--config-file", config]);
    await first.initialize();
    await first.call(
      "p",
      JSON.stringify({ jsonrpc: "2.0", id: "p", method: "prompt", params: { user_input: "hi" } }),
    );
    await first.close();
    const path = await findFile(`${sb.root}/share`, "wire.jsonl");
    if (!path) throw new Error("no wire.jsonl was recorded");
    await growWireFile(path, mb * MIB);
    const bytes = (await Deno.stat(path)).size;

    const wire = new RawWire(sb, ["--config-file", config, "--continue"]);
    await wire.initialize();
    const idleRssBytes = await vmHwm(wire.child.pid);
    const t0 = performance.now();
    const result = await wire.call(
      "r",
      JSON.stringify({ jsonrpc: "2.0", id: "r", method: "replay" }),
    );
    const wallMs = performance.now() - t0;
    const peakRssBytes = await vmHwm(wire.child.pid);
    const records = Number(result.events) + Number(result.requests);
    if (result.status !== "finished" || wire.events !== Number(result.events)) {
      throw new Error(`replay: ${JSON.stringify(result)}, ${wire.events} events received`);
    }
    await wire.close();
    return { run: { idleRssBytes, peakRssBytes, wallMs }, bytes, records };
  } finally {
    await sb.cleanup();
  }
}

/** Run the wire memory benchmark. */
export async function runWireMemoryBench(
  opts: WireMemoryBenchOptions = {},
): Promise<WireMemoryBenchResult> {
  const prompt = await bigPrompt(opts.promptMb ?? 95);
  const rep = await replay(opts.replayMb ?? 100);
  return {
    promptBytes: prompt.bytes,
    prompt: prompt.run,
    replayBytes: rep.bytes,
    replayRecords: rep.records,
    replay: rep.run,
  };
}

/** Budget: peak RSS over the idle process ≤ 4× the prompt line's input. */
export const PROMPT_BUDGET_RATIO = 4;
/** Budget: a replay's peak RSS over the idle process, whatever the file's size. */
export const REPLAY_BUDGET_BYTES = 16 * MIB;

/** Peak over idle of a run, bytes. */
export function overIdle(r: MemoryRun): number {
  return Math.max(0, r.peakRssBytes - r.idleRssBytes);
}

/** The result as Markdown. */
export function wireMemoryMarkdown(r: WireMemoryBenchResult): string {
  const promptRatio = overIdle(r.prompt) / r.promptBytes;
  const rows = [
    [
      `\`prompt\` of ${formatBytes(r.promptBytes)} (one line)`,
      `${formatBytes(overIdle(r.prompt))} over idle (${formatBytes(r.prompt.idleRssBytes)})`,
      `${promptRatio.toFixed(2)}× the input (budget ≤ ${PROMPT_BUDGET_RATIO}×: ` +
      `${promptRatio <= PROMPT_BUDGET_RATIO ? "met" : "**missed**"}); ${formatMs(r.prompt.wallMs)}`,
    ],
    [
      `\`replay\` of a ${formatBytes(r.replayBytes)} wire.jsonl`,
      `${formatBytes(overIdle(r.replay))} over idle (${formatBytes(r.replay.idleRssBytes)})`,
      `${(overIdle(r.replay) / r.replayBytes).toFixed(3)}× the file (budget ≤ ` +
      `${formatBytes(REPLAY_BUDGET_BYTES)} whatever the size: ` +
      `${overIdle(r.replay) <= REPLAY_BUDGET_BYTES ? "met" : "**missed**"}); ` +
      `${r.replayRecords.toLocaleString("en-US")} records in ${formatMs(r.replay.wallMs)} ` +
      `(${(r.replayBytes / MIB / (r.replay.wallMs / 1000)).toFixed(1)} MiB/s)`,
    ],
  ];
  return markdownTable(["Figure", "Child peak RSS", "Ratio and budget"], rows);
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  const r = await runWireMemoryBench({
    promptMb: intFlag("prompt-mb"),
    replayMb: intFlag("replay-mb"),
  });
  console.log(wireMemoryMarkdown(r));
}
