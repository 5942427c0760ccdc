/**
 * `kimi web` benchmark (the server driven over HTTP and WebSockets, as the page drives it):
 *
 * - Idle cost: RSS (`VmRSS` of the server process) after one session has been opened (socket
 *   attached, agent built, socket closed) and after fifty; the cost of each session beyond the
 *   first is `(rss50 − rss1) / 49` (goal ≤ 2 MB).
 * - Time to first event: from sending `prompt` on an initialized socket to the first `event`
 *   frame, against `kimi --wire` (prompt written → first event yielded by `KimiWireClient`),
 *   interleaved in the same run.
 * - Fan-out: one `_scripted_echo` turn streaming `lines` parts to ten sockets on one session;
 *   events delivered per second (all sockets), prompt → the last socket's prompt result.
 *
 * Usage: `deno run --no-prompt -A scripts/bench/web.ts [--runs=N] [--sessions=N] [--lines=N]
 * [--sockets=N]`
 *
 * @module
 */
import { KimiWireClient } from "../../mod.ts";
import { type ChildSandbox, createSandbox, MAIN_TS } from "./child_env.ts";
import {
  formatBytes,
  formatMs,
  formatRatio,
  formatSummary,
  markdownTable,
  summarize,
  type Summary,
} from "./stats.ts";
import { throughputScript, writeConfig } from "./wire.ts";

/** Options of {@link runWebBench}. */
export interface WebBenchOptions {
  /** First-event runs of each front end. Default 10. */
  runs?: number;
  /** Idle sessions opened for the RSS figure. Default 50. */
  sessions?: number;
  /** Parts streamed to the sockets. Default 20,000. */
  lines?: number;
  /** Sockets on the fan-out session. Default 10. */
  sockets?: number;
}

/** Result of {@link runWebBench}. */
export interface WebBenchResult {
  /** Server RSS with one opened session, bytes. */
  rssOne: number;
  /** Server RSS with all opened sessions, bytes. */
  rssMany: number;
  /** How many sessions `rssMany` holds. */
  sessions: number;
  /** `(rssMany − rssOne) / (sessions − 1)`. */
  perSession: number;
  /** Prompt → first event over the socket. */
  webFirstEvent: Summary;
  /** Prompt → first event over `kimi --wire`. */
  wireFirstEvent: Summary;
  /** Parts of the fan-out turn. */
  lines: number;
  /** Sockets of the fan-out turn. */
  sockets: number;
  /** Events delivered per second, all sockets together. */
  fanoutEventsPerSecond: number;
  /** Fan-out turn wall time. */
  fanoutMs: number;
  /** CPU time the server spent on the fan-out turn. */
  fanoutServerCpuMs: number;
}

interface Server {
  child: Deno.ChildProcess;
  base: string;
  ws: string;
  token: string;
  stop(): Promise<void>;
}

async function startServer(sb: ChildSandbox, config: string): Promise<Server> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "-A",
      MAIN_TS,
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
    ],
    cwd: sb.workDir,
    env: sb.env,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let m: RegExpExecArray | null = null;
  while (!(m = /http:\/\/127\.0\.0\.1:(\d+)\/#token=(\S+)/.exec(text))) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`kimi web exited before its banner: ${text}`);
    text += value;
  }
  const port = m[1];
  // keep draining stdout
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return {
    child,
    base: `http://127.0.0.1:${port}`,
    ws: `ws://127.0.0.1:${port}`,
    token: decodeURIComponent(m[2]),
    stop: async () => {
      child.kill("SIGINT");
      await child.status;
    },
  };
}

/** CPU time (user + system) of a live process in ms; 0 when /proc is unavailable. */
async function cpuMs(pid: number): Promise<number> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  } catch {
    return 0;
  }
}

async function vmRss(pid: number): Promise<number> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** A socket whose frames can be awaited. */
class Socket {
  readonly ws: WebSocket;
  readonly frames: Record<string, unknown>[] = [];
  #wait: (() => void) | null = null;
  count = 0;
  countOnlyEvents = false;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.onmessage = (e) => {
      this.count++;
      const data = String(e.data);
      // fan-out sockets count streamed events without parsing them (the clients share one
      // process: they must not be the bottleneck)
      if (this.countOnlyEvents && data.startsWith('{"jsonrpc":"2.0","method":"event"')) return;
      this.frames.push(JSON.parse(data));
      this.#wait?.();
    };
  }

  static open(url: string): Promise<Socket> {
    const s = new Socket(new WebSocket(url));
    return new Promise((res, rej) => {
      s.ws.onopen = () => res(s);
      s.ws.onerror = () => rej(new Error(`socket ${url} failed`));
    });
  }

  async waitFor(pred: (f: Record<string, unknown>) => boolean, from = 0) {
    let i = from;
    for (;;) {
      for (; i < this.frames.length; i++) if (pred(this.frames[i])) return i;
      await new Promise<void>((r) => (this.#wait = r));
    }
  }

  send(msg: unknown): void {
    this.ws.send(JSON.stringify(msg));
  }

  async close(): Promise<void> {
    const closed = new Promise((r) => (this.ws.onclose = r));
    this.ws.close();
    await closed;
  }
}

async function newSession(s: Server, workDir: string): Promise<string> {
  const r = await fetch(`${s.base}/api/sessions/`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
    body: JSON.stringify({ work_dir: workDir }),
  });
  return (await r.json()).session_id;
}

async function openSocket(s: Server, id: string): Promise<Socket> {
  const sock = await Socket.open(`${s.ws}/api/sessions/${id}/stream?token=${s.token}`);
  await sock.waitFor((f) => f.method === "session_status");
  return sock;
}

async function initialize(sock: Socket): Promise<void> {
  sock.send({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocol_version: "1.10", client: { name: "bench", version: "0" } },
  });
  await sock.waitFor((f) => f.id === "init");
}

/** Run the benchmark. */
export async function runWebBench(opts: WebBenchOptions = {}): Promise<WebBenchResult> {
  const runs = opts.runs ?? 10;
  const sessions = opts.sessions ?? 50;
  const lines = opts.lines ?? 20_000;
  const sb = await createSandbox();
  sb.env.PATH = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  try {
    const small = await writeConfig(sb, Array.from({ length: runs + 5 }, () => "text: hi"));
    const server = await startServer(sb, small);
    let rssOne = 0;
    let rssMany = 0;
    const webFirst: number[] = [];
    const wireFirst: number[] = [];
    try {
      for (let i = 0; i < sessions; i++) {
        const sock = await openSocket(server, await newSession(server, sb.workDir));
        await sock.close();
        if (i === 0) rssOne = await vmRss(server.child.pid);
      }
      rssMany = await vmRss(server.child.pid);

      for (let i = 0; i < runs; i++) {
        const sock = await openSocket(server, await newSession(server, sb.workDir));
        await initialize(sock);
        const from = sock.frames.length;
        const t0 = performance.now();
        sock.send({ jsonrpc: "2.0", id: "p", method: "prompt", params: { user_input: "go" } });
        await sock.waitFor((f) => f.method === "event", from);
        webFirst.push(performance.now() - t0);
        await sock.waitFor((f) => f.id === "p", from);
        await sock.close();

        const client = KimiWireClient.spawn({
          args: ["--config-file", small],
          cwd: sb.workDir,
          env: sb.env,
          stderr: "null",
        });
        await client.initialize({ client: { name: "bench", version: "0" } });
        const t1 = performance.now();
        const turn = client.prompt("go");
        let first = 0;
        for await (const _ of turn) {
          if (!first) first = performance.now() - t1;
        }
        await turn.result;
        wireFirst.push(first);
        await client.close();
      }
    } finally {
      await server.stop();
    }

    const big = await writeConfig(sb, [throughputScript(lines, 100)]);
    const fan = await startServer(sb, big);
    let fanoutMs = 0;
    let fanoutServerCpuMs = 0;
    let delivered = 0;
    const nSockets = opts.sockets ?? 10;
    try {
      const id = await newSession(fan, sb.workDir);
      const socks: Socket[] = [];
      for (let i = 0; i < nSockets; i++) socks.push(await openSocket(fan, id));
      for (const s of socks) s.countOnlyEvents = true;
      await initialize(socks[0]);
      const before = socks.map((s) => s.count);
      const cpu0 = await cpuMs(fan.child.pid);
      const t0 = performance.now();
      socks[0].send({ jsonrpc: "2.0", id: "big", method: "prompt", params: { user_input: "go" } });
      await Promise.all(socks.map((s) => s.waitFor((f) => f.id === "big")));
      fanoutMs = performance.now() - t0;
      fanoutServerCpuMs = (await cpuMs(fan.child.pid)) - cpu0;
      delivered = socks.reduce((n, s, i) => n + s.count - before[i], 0);
      for (const s of socks) await s.close();
    } finally {
      await fan.stop();
    }
    return {
      rssOne,
      rssMany,
      sessions,
      perSession: (rssMany - rssOne) / Math.max(1, sessions - 1),
      webFirstEvent: summarize(webFirst),
      wireFirstEvent: summarize(wireFirst),
      lines,
      sockets: nSockets,
      fanoutEventsPerSecond: delivered / (fanoutMs / 1000),
      fanoutMs,
      fanoutServerCpuMs,
    };
  } finally {
    await sb.cleanup();
  }
}

/** The result as Markdown. */
export function webMarkdown(r: WebBenchResult): string {
  const rows = [
    ["Server RSS, 1 opened session", formatBytes(r.rssOne), "VmRSS after the socket closed"],
    [
      `Server RSS, ${r.sessions} opened sessions`,
      formatBytes(r.rssMany),
      `${formatBytes(r.perSession)} per session beyond the first (goal ≤ 2 MB)`,
    ],
    [
      "Prompt → first event (socket)",
      formatSummary(r.webFirstEvent),
      `${formatRatio(r.webFirstEvent.median, r.wireFirstEvent.median)} of \`kimi --wire\``,
    ],
    ["Prompt → first event (`kimi --wire`)", formatSummary(r.wireFirstEvent), "same run"],
    [
      `${r.lines.toLocaleString("en-US")} parts to ${r.sockets} sockets`,
      formatMs(r.fanoutMs),
      `${Math.round(r.fanoutEventsPerSecond).toLocaleString("en-US")} events/s delivered; ` +
      `server CPU ${formatMs(r.fanoutServerCpuMs)} (the clients share the bench process)`,
    ],
  ];
  return markdownTable(["Metric", "Value (median, min–max)", "Notes"], rows);
}

function intFlag(name: string): number | undefined {
  const arg = Deno.args.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.split("=")[1]) : undefined;
}

if (import.meta.main) {
  const r = await runWebBench({
    runs: intFlag("runs"),
    sessions: intFlag("sessions"),
    lines: intFlag("lines"),
    sockets: intFlag("sockets"),
  });
  console.log(webMarkdown(r));
}
