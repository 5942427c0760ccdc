/**
 * Interactive shell benchmark, in a real PTY under tmux:
 *
 * - start-up: time from spawning `kimi` to a ready prompt (the status line is drawn), target
 *   under 300 ms;
 * - input latency: time from a key sent to the PTY (`tmux send-keys` of one `Z`) to the typed
 *   character on screen (polling `tmux capture-pane`), first at an idle prompt (the baseline),
 *   then while a turn streams `--mb` megabytes of text from the mock OpenAI server slowly
 *   enough (chunks with a delay) that it is still streaming when every key is sent.
 *
 * Screen polling runs every 2 ms, so figures include a few ms of polling granularity plus the
 * cost of `tmux capture-pane`: compare the streaming figures with the idle baseline.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/shell.ts [--runs=N] [--mb=5] [--keys=N]`
 *
 * @module
 */
import { type KimiSandbox, kimiSandbox } from "../../tests/helpers/kimi_process.ts";
import { startMockOpenAI } from "../../tests/helpers/mock_openai.ts";
import { TmuxKimi } from "../../tests/helpers/tmux.ts";

const arg = (name: string, dflt: number) =>
  Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt);
const runs = arg("runs", 5);
const megabytes = arg("mb", 5);
const keyCount = arg("keys", 20);

/** Idle prompt: an empty input line above the status line. */
function ready(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

/** A turn is running (the status line shows the type-ahead keys). */
function streaming(screen: string): boolean {
  return screen.split("\n").at(-1)!.includes("enter: steer");
}

async function poll(t: TmuxKimi, pred: (s: string) => boolean, timeoutMs = 60000): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (pred(await t.screen())) return performance.now();
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out; screen:\n${await t.screen()}`);
}

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const med = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
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

/**
 * Type `count` keys one at a time; each is timed until the input line shows it. `during`
 * checks the screen is still in the wanted state when the key lands.
 */
async function keyLatency(
  t: TmuxKimi,
  count: number,
  during: (s: string) => boolean,
): Promise<{ samples: number[]; valid: number }> {
  const samples: number[] = [];
  let valid = 0;
  for (let n = 1; n <= count; n++) {
    const want = new RegExp(`^✨ Z{${n}}$`, "m");
    const t0 = performance.now();
    await t.keys("Z");
    let ok = false;
    const t1 = await poll(t, (s) => {
      if (!want.test(s)) return false;
      ok = during(s);
      return true;
    });
    samples.push(t1 - t0);
    if (ok) valid++;
    await new Promise((r) => setTimeout(r, 150));
  }
  return { samples, valid };
}

async function latency(sb: KimiSandbox): Promise<void> {
  const mock = await startMockOpenAI();
  try {
    // --mb megabytes of markdown in 2.5 KB chunks, 4 ms apart: ~10 s of streaming for 5 MB
    const line = "Lorem ipsum dolor sit amet, **consectetur** adipiscing elit, sed do eiusmod " +
      "tempor `incididunt` ut labore.\n";
    const chunk = line.repeat(25) + "\n";
    const chunks = Array.from(
      { length: Math.ceil(megabytes * 1_000_000 / chunk.length) },
      () => chunk,
    );
    mock.enqueue({ text: chunks, chunkDelayMs: 4 });
    const config = await sb.openaiConfig(mock.url);
    const t = await TmuxKimi.start(sb, ["--config-file", config]);
    try {
      await poll(t, ready);
      const idle = await keyLatency(t, keyCount, ready);
      await t.keys("C-u");
      await poll(t, ready);
      await t.type("stream");
      const start = performance.now();
      await t.keys("Enter");
      await poll(t, (s) => s.includes("Lorem") && streaming(s));
      const busy = await keyLatency(t, keyCount, streaming);
      const afterKeys = performance.now() - start;
      const end = await poll(t, (s) =>
        /^✨ Z+$/m.test(s.split("\n").at(-2)!) &&
        s.split("\n").at(-1)!.includes("ctrl-x: shell mode"), 600000);
      console.log(`key to screen at an idle prompt: ${stats(idle.samples)}`);
      console.log(
        `key to screen while streaming ${megabytes} MB: ${
          stats(busy.samples)
        }; ${busy.valid}/${busy.samples.length} keys landed mid-stream (keys done ${
          (afterKeys / 1000).toFixed(1)
        } s after Enter; the stream ended after ${((end - start) / 1000).toFixed(1)} s)`,
      );
    } finally {
      await t.close();
    }
  } finally {
    await mock.close();
  }
}

if (import.meta.main) {
  const sb = await kimiSandbox();
  try {
    const up = await startup(sb);
    console.log(`shell start-up to ready prompt: ${stats(up)} (target < 300 ms)`);
    await latency(sb);
  } finally {
    await sb.cleanup();
  }
}
