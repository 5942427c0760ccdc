/**
 * Driving `kimi web` as a browser or a script would: start `main.ts web --no-open --port 0`
 * in a sandbox, read the URL and token from its banner, and talk to it with `fetch` and a real
 * WebSocket client whose frames are collected for waiting on.
 *
 * @module
 */
import { type KimiSandbox, MAIN_TS, sandboxEnv } from "./kimi_process.ts";

/** A running `kimi web`. */
export interface WebServer {
  /** `http://127.0.0.1:<port>`. */
  base: string;
  /** The port. */
  port: number;
  /** The token from the banner (null with `--dangerously-omit-auth`). */
  token: string | null;
  /** Everything printed on stdout so far. */
  stdout(): string;
  /** Everything printed on stderr so far. */
  stderr(): string;
  /** The child process. */
  child: Deno.ChildProcess;
  /** `fetch` relative to {@link base} with the bearer token (unless `auth: false`). */
  api(path: string, init?: RequestInit & { auth?: boolean }): Promise<Response>;
  /** Open a session's socket (token in the query unless `token: null`). */
  socket(sessionId: string, opts?: { token?: string | null; origin?: string }): Promise<WsClient>;
  /** SIGINT and wait for the exit code. */
  stop(): Promise<number>;
}

/** Options of {@link startWeb}. */
export interface StartWebOptions {
  /** The config file (`--config-file`). */
  config: string;
  /** Extra arguments after `web`. */
  args?: string[];
  /** Root flags before `web` (e.g. `--yolo`). */
  rootArgs?: string[];
  /** Extra environment. */
  env?: Record<string, string>;
  /** Deno permission flags (default `-A`). */
  permissions?: string[];
}

async function collect(stream: ReadableStream<Uint8Array>, into: { text: string }) {
  const dec = new TextDecoder();
  for await (const chunk of stream) into.text += dec.decode(chunk, { stream: true });
}

/** Start `kimi web` in `sb` and wait for its banner. */
export async function startWeb(sb: KimiSandbox, opts: StartWebOptions): Promise<WebServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...(opts.permissions ?? ["-A"]),
      MAIN_TS,
      "--config-file",
      opts.config,
      ...(opts.rootArgs ?? []),
      "web",
      "--no-open",
      ...(opts.args?.includes("--port") ? [] : ["--port", "0"]),
      ...(opts.args ?? []),
    ],
    cwd: sb.workDir,
    env: sandboxEnv(sb, { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...opts.env }),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = { text: "" };
  const err = { text: "" };
  const outDone = collect(child.stdout, out);
  const errDone = collect(child.stderr, err);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  let m: RegExpExecArray | null = null;
  while (!(m = /http:\/\/([^\s/]+):(\d+)\/(#token=(\S+))?/.exec(out.text))) {
    if (exited) {
      throw new Error(`kimi web exited before its banner:\n${out.text}\n${err.text}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  // the banner is printed in one write: wait for its last line
  while (!out.text.includes("Stop:") && !exited) await new Promise((r) => setTimeout(r, 10));
  const port = Number(m[2]);
  const token = m[4] ? decodeURIComponent(m[4]) : null;
  const base = `http://127.0.0.1:${port}`;
  const server: WebServer = {
    base,
    port,
    token,
    child,
    stdout: () => out.text,
    stderr: () => err.text,
    api: (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (init.auth !== false && token && !headers.has("authorization")) {
        headers.set("authorization", `Bearer ${token}`);
      }
      return fetch(base + path, { ...init, headers });
    },
    socket: (id, o = {}) => {
      const t = o.token === undefined ? token : o.token;
      const url = `ws://127.0.0.1:${port}/api/sessions/${id}/stream` +
        (t ? `?token=${encodeURIComponent(t)}` : "");
      return WsClient.open(url, o.origin ? { headers: { origin: o.origin } } : undefined);
    },
    stop: async () => {
      if (!exited) {
        try {
          child.kill("SIGINT");
        } catch {
          // gone
        }
      }
      const s = await status;
      await Promise.allSettled([outDone, errDone]);
      return s.code;
    },
  };
  return server;
}

/** A WebSocket client that keeps every frame (parsed JSON) and the close event. */
export class WsClient {
  /** The socket. */
  readonly ws: WebSocket;
  /** Frames received, parsed. */
  readonly frames: Record<string, unknown>[] = [];
  /** The close code and reason, once closed. */
  closed: { code: number; reason: string } | null = null;
  #waiters: (() => void)[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.onmessage = (e) => {
      this.frames.push(JSON.parse(String(e.data)));
      this.#wake();
    };
    ws.onclose = (e) => {
      this.closed = { code: e.code, reason: e.reason };
      this.#wake();
    };
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }

  /** Connect (resolves once open, or once closed when the server refuses it). */
  static open(url: string, init?: { headers: Record<string, string> }): Promise<WsClient> {
    // Deno's WebSocket takes headers as a second-argument option
    // deno-lint-ignore no-explicit-any
    const ws = new WebSocket(url, init as any);
    const c = new WsClient(ws);
    return new Promise((resolve) => {
      ws.addEventListener("open", () => resolve(c), { once: true });
      ws.addEventListener("close", () => resolve(c), { once: true });
      ws.addEventListener("error", () => {}, { once: true });
    });
  }

  /** Send a JSON message. */
  send(msg: unknown): void {
    this.ws.send(JSON.stringify(msg));
  }

  /** Wait until a frame matches (searching from `from`); resolves with it. */
  async waitFor(
    pred: (f: Record<string, unknown>) => boolean,
    from = 0,
  ): Promise<Record<string, unknown>> {
    let i = from;
    for (;;) {
      for (; i < this.frames.length; i++) if (pred(this.frames[i])) return this.frames[i];
      if (this.closed) {
        throw new Error(
          `socket closed (${this.closed.code} ${this.closed.reason}) before the frame came; got ${
            JSON.stringify(this.frames).slice(-2000)
          }`,
        );
      }
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  /** Wait for the close event. */
  async waitClosed(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await new Promise<void>((r) => this.#waiters.push(r));
    return this.closed;
  }

  /** Send `initialize` and wait for its result. */
  async initialize(id = "init-" + crypto.randomUUID()): Promise<Record<string, unknown>> {
    this.send({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: {
        protocol_version: "1.10",
        client: { name: "web-test", version: "1" },
        capabilities: { supports_question: true, supports_plan_mode: true },
      },
    });
    return await this.waitFor((f) => f.id === id && ("result" in f || "error" in f));
  }

  /** Close the socket. */
  close(): void {
    try {
      this.ws.close();
    } catch {
      // closed
    }
  }
}
