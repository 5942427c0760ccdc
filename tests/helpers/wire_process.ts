/**
 * A raw JSON-RPC driver for `main.ts --wire` in a sandbox: send lines, read parsed lines,
 * run a request until its response while answering server requests.
 *
 * @module
 */
import { denoDir, type KimiSandbox, MAIN_TS } from "./kimi_process.ts";

/** One parsed output line. */
export type WireLine = Record<string, any>;

/** Answers a server request (`params.type`/`params.payload`); return the result, or undefined to leave it. */
export type RequestAnswerer = (msg: WireLine) => unknown | undefined;

/** A running `kimi --wire` child. */
export class WireProcess {
  readonly child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #lines: AsyncIterator<string>;
  readonly stderr: Promise<string>;
  /** Every line read so far. */
  readonly seen: WireLine[] = [];

  constructor(child: Deno.ChildProcess) {
    this.child = child;
    this.#writer = child.stdin.getWriter();
    this.#lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(new LineSplitter())
      [Symbol.asyncIterator]();
    this.stderr = new Response(child.stderr).text();
  }

  /** Send a JSON value (or a raw string) as one line. */
  async send(msg: unknown): Promise<void> {
    const text = typeof msg === "string" ? msg : JSON.stringify(msg);
    await this.#writer.write(new TextEncoder().encode(text + "\n"));
  }

  /** Next parsed line; throws at EOF or after `timeoutMs`. */
  async next(timeoutMs = 30000): Promise<WireLine> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, rej) => {
      timer = setTimeout(() => rej(new Error(`no wire output within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const r = await Promise.race([this.#lines.next(), timeout]);
      if (r.done) throw new Error("wire stdout closed");
      const line = JSON.parse(r.value);
      this.seen.push(line);
      return line;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Send a request and read until its response; server requests go to `answer`. */
  async call(
    id: string,
    method: string,
    params?: unknown,
    answer?: RequestAnswerer,
  ): Promise<{ lines: WireLine[]; response: WireLine }> {
    await this.send(
      params === undefined
        ? { jsonrpc: "2.0", id, method }
        : { jsonrpc: "2.0", id, method, params },
    );
    return await this.until(id, answer);
  }

  /** Read until the response with `id`, answering server requests with `answer`. */
  async until(
    id: string,
    answer?: RequestAnswerer,
  ): Promise<{ lines: WireLine[]; response: WireLine }> {
    const lines: WireLine[] = [];
    while (true) {
      const msg = await this.next();
      if (msg.id === id && !("method" in msg)) return { lines, response: msg };
      lines.push(msg);
      if (msg.method === "request" && answer) {
        const result = answer(msg);
        if (result !== undefined) await this.send({ jsonrpc: "2.0", id: msg.id, result });
      }
    }
  }

  /** Close stdin. */
  async closeStdin(): Promise<void> {
    await this.#writer.close().catch(() => {});
  }

  /** Close stdin and wait for exit. */
  async finish(): Promise<Deno.CommandStatus> {
    await this.closeStdin();
    const status = await this.child.status;
    await this.stderr;
    return status;
  }
}

/** Splits a text stream into lines. */
export class LineSplitter extends TransformStream<string, string> {
  constructor() {
    let buf = "";
    super({
      transform(chunk, ctl) {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf("\n")) >= 0) {
          ctl.enqueue(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      },
      flush(ctl) {
        if (buf) ctl.enqueue(buf);
      },
    });
  }
}

/** Spawn `main.ts --wire` in a sandbox with extra arguments. */
export function spawnWire(
  sb: KimiSandbox,
  args: string[],
  env: Record<string, string> = {},
): WireProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "-A", MAIN_TS, "--wire", ...args],
    cwd: sb.workDir,
    clearEnv: true,
    env: {
      HOME: sb.home,
      KIMI_SHARE_DIR: sb.shareDir,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...env,
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return new WireProcess(child);
}
