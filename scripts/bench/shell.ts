/**
 * Interactive shell benchmark, in a real PTY under tmux:
 *
 * - start-up: time from spawning `kimi` to a ready prompt (the status line is drawn), target
 *   under 300 ms;
 * - input latency while a turn streams 5 MB of text: time from a key press (Ctrl-C) to its
 *   effect on screen (`Interrupted by user` and the prompt back).
 *
 * Screen polling runs every 5 ms, so figures include up to ~5 ms of polling granularity plus
 * the cost of `tmux capture-pane`.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/shell.ts [--runs=N] [--mb=5]`
 *
 * @module
 */
import { type KimiSandbox, kimiSandbox } from "../../tests/helpers/kimi_process.ts";
import { TmuxKimi } from "../../tests/helpers/tmux.ts";

const runs = Number(Deno.args.find((a) => a.startsWith("--runs="))?.slice(7) ?? 5);
const megabytes = Number(Deno.args.find((a) => a.startsWith("--mb="))?.slice(5) ?? 5);

function ready(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

async function poll(t: TmuxKimi, pred: (s: string) => boolean, timeoutMs = 60000): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (pred(await t.screen())) return performance.now();
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out; screen:\n${await t.screen()}`);
}

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const med = s[Math.floor(s.length / 2)];
  return `median ${med.toFixed(0)} ms, min ${s[0].toFixed(0)} ms, max ${
    s.at(-1)!.toFixed(0)
  } ms (n=${s.length})`;
}

async function startup(sb: KimiSandbox): Promise<number[]> {
  const config = await sb.scriptedConfig([]);
  const times: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const t0 = performance.now();
    const t = await TmuxKimi.start(sb, ["--config-file", config]);
    try {
      const t1 = await poll(t, ready);
      if (i > 0) times.push(t1 - t0); // the first run warms caches
    } finally {
      await t.close();
    }
  }
  return times;
}

async function streamingLatency(
  sb: KimiSandbox,
): Promise<{ latency: number[]; streamMs: number; interrupted: number }> {
  // 5 MB of markdown text in 100-byte parts (paragraph breaks every 20 lines)
  const line =
    "Lorem ipsum dolor sit amet, **consectetur** adipiscing elit, sed do eiusmod tempor `incididunt`. ";
  const parts: string[] = [];
  for (let n = 0; n < (megabytes * 1_000_000) / line.length; n++) parts.push(`text: ${line}`);
  const script = parts.join("\n");
  const latency: number[] = [];
  let interrupted = 0;
  // full-stream time: one turn left to finish
  const full = await sb.scriptedConfig([script]);
  let streamMs = 0;
  {
    const t = await TmuxKimi.start(sb, ["--config-file", full]);
    try {
      await poll(t, ready);
      await t.type("stream");
      const t0 = performance.now();
      await t.keys("Enter");
      await poll(t, (s) => s.includes("Lorem"));
      const t1 = await poll(t, (s) => ready(s) && s.includes("Lorem"), 300000);
      streamMs = t1 - t0;
    } finally {
      await t.close();
    }
  }
  for (let i = 0; i < runs; i++) {
    const config = await sb.scriptedConfig([script]);
    const t = await TmuxKimi.start(sb, ["--config-file", config]);
    try {
      await poll(t, ready);
      await t.type("stream");
      await t.keys("Enter");
      await poll(t, (s) => s.includes("Lorem"));
      const t0 = performance.now();
      await t.keys("C-c");
      // the stream may finish first on a fast machine; then the key lands at an idle prompt
      const t1 = await poll(t, (s) => ready(s) || s.includes("Press Ctrl-C again"));
      if ((await t.screen()).includes("Interrupted by user")) interrupted++;
      latency.push(t1 - t0);
    } finally {
      await t.close();
    }
  }
  return { latency, streamMs, interrupted };
}

if (import.meta.main) {
  const sb = await kimiSandbox();
  try {
    const up = await startup(sb);
    console.log(`shell start-up to ready prompt: ${stats(up)} (target < 300 ms)`);
    const { latency, streamMs, interrupted } = await streamingLatency(sb);
    console.log(`${megabytes} MB streamed turn, Enter to prompt back: ${streamMs.toFixed(0)} ms`);
    console.log(
      `Ctrl-C to prompt back while streaming ${megabytes} MB: ${
        stats(latency)
      }; ${interrupted}/${latency.length} keys landed mid-stream`,
    );
  } finally {
    await sb.cleanup();
  }
}
