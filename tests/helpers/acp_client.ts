/**
 * A real ACP client (the SDK's client side) driving `main.ts acp` in a sandbox: it records
 * every `session/update`, answers permission requests with a scripted choice, serves
 * `fs/*` from in-memory editor buffers (falling back to disk), and runs `terminal/*` commands
 * as local processes.
 *
 * @module
 */
import * as acp from "@agentclientprotocol/sdk";
import { denoDir, type KimiSandbox, MAIN_TS } from "./kimi_process.ts";

/** A terminal the test client runs. */
export interface ClientTerminal {
  /** The create request. */
  request: acp.CreateTerminalRequest;
  /** Output so far. */
  output: string;
  /** Exit status once ended. */
  exit: Promise<acp.WaitForTerminalExitResponse>;
  /** Whether the agent released it. */
  released: boolean;
  /** Whether the agent killed it. */
  killed: boolean;
}

/** Options of {@link spawnAcp}. */
export interface SpawnAcpOptions {
  /** Arguments before `acp` (e.g. `--config-file x`). */
  rootArgs?: string[];
  /** Deno permission flags of the child (default `-A`). */
  permissions?: string[];
  /** Extra environment of the child. */
  env?: Record<string, string>;
}

/** A running `kimi acp` child with a connected client. */
export class AcpHarness {
  readonly child: Deno.ChildProcess;
  readonly conn: acp.ClientConnection;
  readonly stderr: Promise<string>;
  /** Every update received, in order, by session id. */
  readonly updates = new Map<string, acp.SessionUpdate[]>();
  /** Permission requests received. */
  readonly permissions: acp.RequestPermissionRequest[] = [];
  /** Option id answered to each permission request (`null`: cancelled); default approve. */
  answerPermission: (req: acp.RequestPermissionRequest) => string | null = () => "approve";
  /** Editor buffers by absolute path (read before the disk; writes land here). */
  readonly buffers = new Map<string, string>();
  /** fs calls seen: `read <path>` / `write <path>`. */
  readonly fsCalls: string[] = [];
  /** Terminals created. */
  readonly terminals = new Map<string, ClientTerminal>();
  readonly #waiters: Array<() => void> = [];
  readonly #stdinClose = new AbortController();
  #stdinPipe: Promise<void>;

  constructor(child: Deno.ChildProcess) {
    this.child = child;
    this.stderr = new Response(child.stderr).text();
    const app = acp.client({ name: "kimi-test-client" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        const list = this.updates.get(params.sessionId) ?? [];
        list.push(params.update);
        this.updates.set(params.sessionId, list);
        for (const w of this.#waiters.splice(0)) w();
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        this.permissions.push(params);
        const id = this.answerPermission(params);
        return {
          outcome: id === null ? { outcome: "cancelled" } : { outcome: "selected", optionId: id },
        };
      })
      .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
        this.fsCalls.push(`read ${params.path}`);
        const text = this.buffers.get(params.path) ?? await Deno.readTextFile(params.path);
        return { content: text };
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        this.fsCalls.push(`write ${params.path}`);
        this.buffers.set(params.path, params.content);
        return {};
      })
      .onRequest(acp.methods.client.terminal.create, ({ params }) => this.#createTerminal(params))
      .onRequest(acp.methods.client.terminal.output, ({ params }) => {
        const t = this.#terminal(params.terminalId);
        return { output: t.output, truncated: false };
      })
      .onRequest(acp.methods.client.terminal.waitForExit, ({ params }) => {
        return this.#terminal(params.terminalId).exit;
      })
      .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
        const t = this.#terminal(params.terminalId);
        t.killed = true;
        (t as unknown as { proc: Deno.ChildProcess }).proc.kill("SIGKILL");
        return {};
      })
      .onRequest(acp.methods.client.terminal.release, ({ params }) => {
        this.#terminal(params.terminalId).released = true;
        return {};
      });
    // The SDK locks the stream it writes to; a pipe we can abort lets finish() close stdin.
    const pipe = new TransformStream<Uint8Array, Uint8Array>();
    this.#stdinPipe = pipe.readable.pipeTo(child.stdin, { signal: this.#stdinClose.signal })
      .catch(() => {});
    this.conn = app.connect(acp.ndJsonStream(pipe.writable, child.stdout));
  }

  /** The agent side of the connection. */
  get agent(): acp.ClientContext {
    return this.conn.agent;
  }

  #terminal(id: string): ClientTerminal {
    const t = this.terminals.get(id);
    if (!t) throw acp.RequestError.resourceNotFound(id);
    return t;
  }

  #createTerminal(params: acp.CreateTerminalRequest): acp.CreateTerminalResponse {
    const id = `term-${this.terminals.size + 1}`;
    const proc = new Deno.Command(params.command, {
      args: params.args ?? [],
      cwd: params.cwd ?? undefined,
      env: Object.fromEntries((params.env ?? []).map((e) => [e.name, e.value])),
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).spawn();
    const t: ClientTerminal & { proc: Deno.ChildProcess } = {
      request: params,
      output: "",
      released: false,
      killed: false,
      proc,
      exit: Promise.resolve({}),
    };
    const pump = async (s: ReadableStream<Uint8Array>) => {
      for await (const chunk of s.pipeThrough(new TextDecoderStream())) t.output += chunk;
    };
    const pumps = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
    t.exit = (async () => {
      const st = await proc.status;
      await pumps;
      return st.signal ? { exitCode: null, signal: st.signal } : { exitCode: st.code };
    })();
    this.terminals.set(id, t);
    return { terminalId: id };
  }

  /** `initialize` with the given client capabilities. */
  initialize(capabilities: acp.ClientCapabilities = {}): Promise<acp.InitializeResponse> {
    return this.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: capabilities,
      clientInfo: { name: "kimi-test-client", version: "0" },
    });
  }

  /** `session/new` in `cwd`. */
  async newSession(cwd: string): Promise<acp.NewSessionResponse> {
    return await this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  }

  /** `session/prompt` with one text block. */
  prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    return this.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text }],
    });
  }

  /** Updates of a session so far. */
  of(sessionId: string): acp.SessionUpdate[] {
    return this.updates.get(sessionId) ?? [];
  }

  /** Wait until an update of `sessionId` satisfies `pred` (throws after `timeoutMs`). */
  async waitFor(
    sessionId: string,
    pred: (u: acp.SessionUpdate) => boolean,
    timeoutMs = 30000,
  ): Promise<acp.SessionUpdate> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const hit = this.of(sessionId).find(pred);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching update within ${timeoutMs} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((res) => {
        this.#waiters.push(res);
        timer = setTimeout(res, left);
      });
      clearTimeout(timer);
    }
  }

  /** Close stdin and wait for the child; resolves with its exit code and stderr. */
  async finish(): Promise<{ code: number; stderr: string }> {
    this.#stdinClose.abort();
    await this.#stdinPipe;
    const status = await this.child.status;
    this.conn.close();
    for (const t of this.terminals.values()) {
      try {
        (t as unknown as { proc: Deno.ChildProcess }).proc.kill("SIGKILL");
      } catch {
        // already ended
      }
    }
    return { code: status.code, stderr: await this.stderr };
  }
}

/** Spawn `main.ts [rootArgs] acp` in the sandbox with a connected client. */
export function spawnAcp(sb: KimiSandbox, opts: SpawnAcpOptions = {}): AcpHarness {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      ...(opts.permissions ?? ["-A"]),
      MAIN_TS,
      ...(opts.rootArgs ?? []),
      "acp",
    ],
    cwd: sb.workDir,
    clearEnv: true,
    env: {
      HOME: sb.home,
      KIMI_SHARE_DIR: sb.shareDir,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...opts.env,
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return new AcpHarness(child);
}
