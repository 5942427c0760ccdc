/**
 * Session benchmark: restore time and peak memory for a context of 100,000 messages (about
 * 200 MB), and the cost of appending one message. Restore runs in a child process so its peak
 * RSS (VmHWM) is its own; the baseline is a child that only reads the file as bytes.
 *
 * Usage: `deno run -A scripts/bench/session.ts [--messages N] [--runs N]`.
 *
 * @module
 */
import { Context } from "../../lib/soul/context.ts";

const args = Deno.args;
const arg = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};

if (args[0] === "--child") {
  const [, mode, file] = args;
  const t0 = performance.now();
  let n = 0;
  if (mode === "restore") n = (await Context.restore(file)).history.length;
  else n = (await Deno.readFile(file)).length;
  const ms = performance.now() - t0;
  const status = await Deno.readTextFile("/proc/self/status");
  const hwm = Number(status.match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) * 1024;
  console.log(JSON.stringify({ ms, hwm, n }));
  Deno.exit(0);
}

const N = arg("--messages", 100_000);
const RUNS = arg("--runs", 3);
const dir = await Deno.makeTempDir({ prefix: "kimi-bench-session-" });
const file = `${dir}/context.jsonl`;

// Build the context file: realistic turns of user, assistant with a tool call, tool result.
const filler = "The quick brown fox jumps over the lazy dog. ".repeat(44); // ~2 KB
const f = await Deno.open(file, { create: true, write: true, truncate: true });
const enc = new TextEncoder();
await f.write(enc.encode(JSON.stringify({ role: "_system_prompt", content: "SYSTEM" }) + "\n"));
let batch = "";
for (let i = 0; i < N; i++) {
  if (i % 3 === 0) batch += JSON.stringify({ role: "_checkpoint", id: i }) + "\n";
  const m = i % 3 === 0 ? { role: "user", content: `${i} ${filler}` } : i % 3 === 1
    ? {
      role: "assistant",
      content: `${i} ${filler}`,
      tool_calls: [{
        type: "function",
        id: `c${i}`,
        function: { name: "Shell", arguments: '{"command":"ls"}' },
      }],
    }
    : {
      role: "tool",
      content: [{ type: "text", text: `${i} ${filler}` }],
      tool_call_id: `c${i - 1}`,
    };
  batch += JSON.stringify(m) + "\n";
  if (batch.length > 1 << 20) {
    await f.write(enc.encode(batch));
    batch = "";
  }
}
await f.write(enc.encode(batch));
f.close();
const size = (await Deno.stat(file)).size;

async function child(mode: string): Promise<{ ms: number; hwm: number; n: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--child", mode, file],
    stdout: "piped",
  }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const restore: { ms: number; hwm: number; n: number }[] = [];
const baseline: { ms: number; hwm: number; n: number }[] = [];
for (let r = 0; r < RUNS; r++) {
  baseline.push(await child("read"));
  restore.push(await child("restore"));
}

// Append cost: 2,000 appends of a typical message to a fresh context.
const ctx = await Context.restore(`${dir}/append.jsonl`);
const msg = { role: "user" as const, content: [{ type: "text" as const, text: filler }] };
const t0 = performance.now();
for (let i = 0; i < 2000; i++) await ctx.append(msg);
const appendMs = (performance.now() - t0) / 2000;

const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
const rMs = median(restore.map((x) => x.ms));
const rHwm = median(restore.map((x) => x.hwm));
console.log(`| Session figure | Median | Notes |
| --- | --- | --- |
| context file | ${mb(size)} MB, ${restore[0].n} messages | generated |
| restore time | ${rMs.toFixed(0)} ms | target < 2000 ms; raw read of the same file ${
  median(baseline.map((x) => x.ms)).toFixed(0)
} ms |
| restore peak RSS | ${mb(rHwm)} MB (${
  (rHwm / size).toFixed(2)
}× the file) | target < 3×; raw read peaks at ${mb(median(baseline.map((x) => x.hwm)))} MB |
| append one message | ${appendMs.toFixed(3)} ms | one O_APPEND write per record |`);
await Deno.remove(dir, { recursive: true });
