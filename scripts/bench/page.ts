/**
 * Benchmark of `kimi web`'s page in headless chromium (`/usr/bin/chromium`):
 *
 * - Page load: navigation start → the session's stream is live ("ready"), in the page's clock.
 * - First rendered token: Enter in the composer → the first assistant text in the DOM (a
 *   MutationObserver in the page), against the same prompt sent over a raw WebSocket in this
 *   process → its first `ContentPart` frame (baseline, same server, same run).
 * - A 2,000-message session (1,000 turns of markdown with code): navigation → opened (the
 *   latest turns rendered, the stream live), against receiving the same replay over a raw
 *   WebSocket up to `history_complete`; then the time to render every earlier message.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/page.ts [--runs=N] [--turns=N]`
 *
 * @module
 */
import { findBrowser, launchBrowser, startKimiServer } from "../../tests/helpers/browser.ts";
import { kimiSandbox } from "../../tests/helpers/kimi_process.ts";
import { formatMs, formatRatio, formatSummary, markdownTable, summarize } from "./stats.ts";

/** Options of {@link runPageBench}. */
export interface PageBenchOptions {
  /** Runs of each timed figure. Default 5. */
  runs?: number;
  /** Turns of the big session (two messages each). Default 1,000. */
  turns?: number;
}

/** Samples in ms. */
export interface PageBenchResult {
  /** Navigation → live stream. */
  load: number[];
  /** Enter → first assistant text rendered. */
  firstToken: number[];
  /** Raw socket prompt → first ContentPart frame. */
  firstTokenSocket: number[];
  /** Navigation → the big session open (latest turns rendered, stream live). */
  bigOpen: number[];
  /** Then: every earlier turn rendered ("show earlier" until none is hidden). */
  bigRender: number[];
  /** Raw socket connect → `history_complete` of the big session. */
  bigSocket: number[];
  /** Messages in the big session. */
  messages: number;
}

async function rawSocket(
  base: string,
  token: string,
  id: string,
): Promise<
  {
    ws: WebSocket;
    frames: Record<string, unknown>[];
    wait: (p: (f: Record<string, unknown>) => boolean) => Promise<void>;
  }
> {
  const ws = new WebSocket(
    `${base.replace("http", "ws")}/api/sessions/${id}/stream?token=${token}`,
  );
  const frames: Record<string, unknown>[] = [];
  const waiters: { p: (f: Record<string, unknown>) => boolean; r: () => void }[] = [];
  ws.onmessage = (e) => {
    const f = JSON.parse(String(e.data));
    frames.push(f);
    for (const w of [...waiters]) {
      if (w.p(f)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.r();
      }
    }
  };
  await new Promise((r, j) => {
    ws.onopen = r;
    ws.onerror = j;
  });
  return {
    ws,
    frames,
    wait: (p) => new Promise<void>((r) => waiters.push({ p, r })),
  };
}

function bigWire(turns: number): string {
  const lines = [JSON.stringify({ type: "metadata", protocol_version: "1.10" })];
  let t = 1_700_000_000;
  const rec = (type: string, payload: unknown) =>
    lines.push(JSON.stringify({ timestamp: t++, message: { type, payload } }));
  for (let i = 0; i < turns; i++) {
    rec("TurnBegin", { user_input: `Question ${i}: how does part ${i} work?` });
    rec("StepBegin", { n: 1 });
    rec("ContentPart", {
      type: "text",
      text: `## Part ${i}\n\nIt works like this:\n\n- step one\n- step two\n\n` +
        "```ts\nexport function part" + i + "(x: number): number {\n  return x * 2;\n}\n```\n",
    });
    rec("TurnEnd", {});
  }
  return lines.join("\n") + "\n";
}

/** Run the benchmark. */
export async function runPageBench(opts: PageBenchOptions = {}): Promise<PageBenchResult> {
  const runs = opts.runs ?? 5;
  const turns = opts.turns ?? 1000;
  const exe = findBrowser();
  if (!exe) throw new Error("No chromium found: install it (apt-get install chromium).");
  const sb = await kimiSandbox({ sessionFiles: false });
  const config = await sb.scriptedConfig(
    Array.from({ length: runs * 2 + 2 }, () => "text: hello there"),
  );
  const server = await startKimiServer(sb, [
    "--config-file",
    config,
    "web",
    "--no-open",
    "--port",
    "0",
  ]);
  const browser = await launchBrowser(exe, sb.root);
  const api = async (path: string, body?: unknown) => {
    const res = await fetch(`${server.base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return await res.json();
  };
  const result: PageBenchResult = {
    load: [],
    firstToken: [],
    firstTokenSocket: [],
    bigOpen: [],
    bigRender: [],
    bigSocket: [],
    messages: turns * 2,
  };
  try {
    // One warm-up round (the first session start loads the agent's modules), then the runs.
    for (let i = -1; i < runs; i++) {
      const keep = i >= 0;
      // Baseline: raw socket on a fresh session.
      {
        const s = await api("/api/sessions/", { work_dir: sb.workDir });
        const sock = await rawSocket(server.base, server.token, s.session_id);
        sock.ws.send(JSON.stringify({
          jsonrpc: "2.0",
          id: "init",
          method: "initialize",
          params: { protocol_version: "1.10" },
        }));
        await sock.wait((f) => f.id === "init");
        const t0 = performance.now();
        const first = sock.wait((f) =>
          f.method === "event" && (f.params as { type?: string })?.type === "ContentPart"
        );
        sock.ws.send(JSON.stringify({
          jsonrpc: "2.0",
          id: "p",
          method: "prompt",
          params: { user_input: "hi" },
        }));
        await first;
        if (keep) result.firstTokenSocket.push(performance.now() - t0);
        await sock.wait((f) => f.id === "p");
        sock.ws.close();
      }
      // The page on another fresh session.
      const s = await api("/api/sessions/", { work_dir: sb.workDir });
      const page = await browser.newPage();
      await page.goto(`${server.base}/?session=${s.session_id}#token=${server.token}`);
      await page.waitForFunction(() =>
        document.querySelector(".link-state")?.textContent === "ready"
      );
      const loaded = await page.evaluate(() => performance.now());
      if (keep) result.load.push(loaded);
      await page.type(".composer textarea", "hi");
      await page.evaluate(() => {
        const w = globalThis as unknown as { __first: Promise<number>; __t0: number };
        w.__first = new Promise((resolve) => {
          const obs = new MutationObserver(() => {
            if (document.querySelector(".msg.assistant .md")?.textContent) {
              obs.disconnect();
              resolve(performance.now() - w.__t0);
            }
          });
          obs.observe(document.body, { subtree: true, childList: true, characterData: true });
        });
        document.querySelector(".composer textarea")!.addEventListener(
          "keydown",
          () => (w.__t0 = performance.now()),
          { capture: true, once: true },
        );
      });
      await page.keyboard.press("Enter");
      const first = await page.evaluate(() =>
        (globalThis as unknown as { __first: Promise<number> }).__first
      );
      if (keep) result.firstToken.push(first);
      await page.waitForFunction(() =>
        document.querySelector(".link-state")?.textContent === "ready"
      );
      await page.close();
    }

    // The big session: its records written before anything opens it.
    const big = await api("/api/sessions/", { work_dir: sb.workDir });
    await Deno.writeTextFile(`${big.session_dir}/wire.jsonl`, bigWire(turns));
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const sock = await rawSocket(server.base, server.token, big.session_id);
      await sock.wait((f) => f.method === "history_complete");
      result.bigSocket.push(performance.now() - t0);
      sock.ws.close();

      const page = await browser.newPage();
      await page.goto(`${server.base}/?session=${big.session_id}#token=${server.token}`);
      // Opened: the latest turns are on screen and the stream is live.
      await page.waitForFunction(
        (n: number) =>
          document.querySelector(".link-state")?.textContent === "ready" &&
          document.querySelector(".turn:last-child h2")?.textContent === `Part ${n - 1}`,
        { timeout: 600_000, polling: 20 },
        turns,
      );
      result.bigOpen.push(await page.evaluate(() => performance.now()));
      // Every message rendered: "show earlier" until none is hidden.
      const t1 = await page.evaluate(() => performance.now());
      while (await page.$(".chat > p.center button")) {
        await page.click(".chat > p.center button");
      }
      await page.waitForFunction(
        (n: number) => document.querySelectorAll(".turn").length === n,
        { timeout: 600_000, polling: 20 },
        turns,
      );
      result.bigRender.push(await page.evaluate(() => performance.now()) - t1);
      await page.close();
    }
  } finally {
    await browser.close().catch(() => {});
    await server.stop();
    await sb.cleanup().catch(() => {});
  }
  return result;
}

/** The report. */
export function pageMarkdown(r: PageBenchResult): string {
  const s = (xs: number[]) => summarize(xs);
  return [
    markdownTable(["Figure", "Median (min–max)", "Baseline in the same run", "Ratio"], [
      ["Page load → stream live", formatSummary(s(r.load)), "–", "–"],
      [
        "Enter → first rendered token",
        formatSummary(s(r.firstToken)),
        `raw socket prompt → first ContentPart: ${formatMs(s(r.firstTokenSocket).median)}`,
        formatRatio(s(r.firstToken).median, s(r.firstTokenSocket).median),
      ],
      [
        `Open a ${r.messages}-message session (latest turns shown, live)`,
        formatSummary(s(r.bigOpen)),
        `raw socket replay → history_complete: ${formatMs(s(r.bigSocket).median)}`,
        formatRatio(s(r.bigOpen).median, s(r.bigSocket).median),
      ],
      [
        `Then render all ${r.messages} messages`,
        formatSummary(s(r.bigRender)),
        "–",
        "–",
      ],
    ]),
    "",
  ].join("\n");
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  if (!findBrowser()) {
    console.log("Not measured: no chromium found (apt-get install chromium).");
  } else {
    const r = await runPageBench({ runs: intFlag("runs"), turns: intFlag("turns") });
    console.log(pageMarkdown(r));
  }
}
