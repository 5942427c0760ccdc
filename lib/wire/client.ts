/**
 * A typed client for `kimi --wire`: spawns the server, speaks JSON-RPC 2.0 over its stdio,
 * streams each prompt's wire messages, and answers approvals, questions and external tool
 * calls through callbacks.
 *
 * @example
 * ```ts
 * import { KimiWireClient } from "./mod.ts";
 *
 * const client = KimiWireClient.spawn({
 *   args: ["--work-dir", Deno.cwd()],
 *   onApproval: (req) => ({ response: req.action === "run command" ? "approve" : "reject" }),
 * });
 * await client.initialize();
 * const turn = client.prompt("List the files here");
 * for await (const msg of turn) {
 *   if (msg.type === "ContentPart" && msg.payload.type === "text") console.log(msg.payload.text);
 * }
 * console.log(await turn.result); // { status: "finished" }
 * await client.close();
 * ```
 *
 * @module
 */
import { WIRE_SERVER_PROTOCOL_VERSION } from "../version.ts";
import { DENO_V8_FLAGS_ARG } from "../runtime_flags.ts";
import {
  type ApprovalResponseKind,
  type EventPayload,
  type EventType,
  fromEnvelope,
  type RequestPayload,
  type RequestResult,
  type RequestType,
  type ToolReturnValue,
  type UserInput,
  type WireEvent,
} from "./messages.ts";
import type {
  InboundMethod,
  InitializeResult,
  MethodParamsInput,
  MethodResult,
  PromptResult,
} from "./jsonrpc.ts";
import { readLines } from "./line_reader.ts";

/** A request the server sent, as seen in a prompt's stream. */
export type WireRequestItem = {
  [T in RequestType]: { type: T; payload: RequestPayload<T> };
}[RequestType];

/** One item of a prompt's stream: an event or a (already answered) server request. */
export type WireStreamItem = WireEvent | WireRequestItem;

export type { InitializeResult, PromptResult } from "./jsonrpc.ts";

/** An error response from the server. */
export class WireRpcError extends Error {
  /** JSON-RPC error code. */
  readonly code: number;
  /** Create the error. */
  constructor(code: number, message: string) {
    super(message);
    this.name = "WireRpcError";
    this.code = code;
  }
}

/** A tool implemented by the client. */
export interface ExternalToolHandler {
  /** Tool name. */
  name: string;
  /** Description for the model. */
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  /** Run the tool with the parsed arguments. */
  call(args: unknown): Promise<ToolReturnValue> | ToolReturnValue;
}

/** An answer to an approval request. */
export interface ApprovalAnswer {
  /** The decision. */
  response: ApprovalResponseKind;
  /** Optional feedback when rejecting. */
  feedback?: string;
}

/** Options of {@link KimiWireClient.spawn}. */
export interface KimiWireClientOptions {
  /** Executable (default: the running Deno). */
  command?: string;
  /**
   * Arguments. With the default command they are appended to
   * `run --no-prompt --v8-flags=… -A <main.ts> --wire` (see `lib/runtime_flags.ts`); with a
   * custom command they are used as given.
   */
  args?: string[];
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Working directory of the child. */
  cwd?: string;
  /** Where the child's stderr goes (default `"inherit"`). */
  stderr?: "inherit" | "null";
  /** Decide approval requests (default: reject). */
  onApproval?: (
    req: RequestPayload<"ApprovalRequest">,
  ) => Promise<ApprovalAnswer> | ApprovalAnswer;
  /** Answer questions (default: dismissed, `{}`). */
  onQuestion?: (
    req: RequestPayload<"QuestionRequest">,
  ) => Promise<Record<string, string>> | Record<string, string>;
  /** Tools the client implements; declared at `initialize`. */
  externalTools?: ExternalToolHandler[];
  /**
   * Finished background tasks and agents (protocol 1.12 `Notification` events), called whether
   * or not a prompt is running; during a prompt they also appear in its stream.
   */
  onNotification?: (notification: EventPayload<"Notification">) => void;
}

/** Options of {@link KimiWireClient.initialize}. */
export interface InitializeOptions {
  /** Declared protocol version (default "1.10"). */
  protocolVersion?: string;
  /** Client name and version. */
  client?: { name: string; version?: string };
  /** Client capabilities. */
  capabilities?: { supports_question?: boolean; supports_plan_mode?: boolean };
}

/** A running prompt: iterate for its messages; `result` resolves when the turn ends. */
export interface PromptHandle extends AsyncIterable<WireStreamItem> {
  /** The prompt's result (rejects with {@link WireRpcError}). */
  readonly result: Promise<PromptResult>;
}

const MAIN_TS = new URL("../../main.ts", import.meta.url).href;

/**
 * The `deno` arguments that start this checkout's kimi as a wire server, followed by `extra`
 * (what {@link KimiWireClient.spawn} runs when no command is given).
 */
export function wireServerArgs(extra: readonly string[] = []): string[] {
  return ["run", "--no-prompt", DENO_V8_FLAGS_ARG, "-A", MAIN_TS, "--wire", ...extra];
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

class Stream {
  items: WireStreamItem[] = [];
  done = false;
  wake: (() => void) | null = null;
  push(item: WireStreamItem) {
    this.items.push(item);
    this.wake?.();
  }
  end() {
    this.done = true;
    this.wake?.();
  }
  async *iterate(): AsyncGenerator<WireStreamItem> {
    while (true) {
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.done) return;
      await new Promise<void>((res) => (this.wake = res));
      this.wake = null;
    }
  }
}

/** A connection to a `kimi --wire` child process. */
export class KimiWireClient {
  /** The child process. */
  readonly process: Deno.ChildProcess;
  readonly #opts: KimiWireClientOptions;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending = new Map<string, Pending>();
  #counter = 0;
  #stream: Stream | null = null;
  #reading: Promise<void>;

  private constructor(process: Deno.ChildProcess, opts: KimiWireClientOptions) {
    this.process = process;
    this.#opts = opts;
    this.#writer = process.stdin.getWriter();
    this.#reading = this.#readLoop();
  }

  /** Spawn the server. */
  static spawn(opts: KimiWireClientOptions = {}): KimiWireClient {
    const command = opts.command ?? Deno.execPath();
    const args = opts.command ? (opts.args ?? []) : wireServerArgs(opts.args);
    const child = new Deno.Command(command, {
      args,
      cwd: opts.cwd,
      env: opts.env,
      stdin: "piped",
      stdout: "piped",
      stderr: opts.stderr ?? "inherit",
    }).spawn();
    return new KimiWireClient(child, opts);
  }

  /** Handshake; declares external tools and capabilities. */
  initialize(opts: InitializeOptions = {}): Promise<InitializeResult> {
    const tools = this.#opts.externalTools ?? [];
    return this.#request("initialize", {
      protocol_version: opts.protocolVersion ?? WIRE_SERVER_PROTOCOL_VERSION,
      ...(opts.client ? { client: opts.client } : {}),
      capabilities: {
        supports_question: opts.capabilities?.supports_question ?? Boolean(this.#opts.onQuestion),
        supports_plan_mode: opts.capabilities?.supports_plan_mode ?? false,
      },
      ...(tools.length > 0
        ? {
          external_tools: tools.map((t) => ({
            name: t.name,
            description: t.description,
            parameters: t.parameters,
          })),
        }
        : {}),
    });
  }

  /** Run one turn. */
  prompt(input: UserInput): PromptHandle {
    const stream = new Stream();
    this.#stream = stream;
    const result: Promise<PromptResult> = this.#request("prompt", { user_input: input }).finally(
      () => {
        stream.end();
        if (this.#stream === stream) this.#stream = null;
      },
    );
    result.catch(() => {});
    return { result, [Symbol.asyncIterator]: () => stream.iterate() };
  }

  /** Add input to the running turn. */
  async steer(input: UserInput): Promise<void> {
    await this.#request("steer", { user_input: input });
  }

  /** Cancel the running turn. */
  async cancel(): Promise<void> {
    await this.#request("cancel", undefined);
  }

  /** Set plan mode; resolves with the new state. */
  async setPlanMode(enabled: boolean): Promise<boolean> {
    const r = await this.#request("set_plan_mode", { enabled });
    return r.plan_mode;
  }

  /** Close stdin and wait for the child to exit. */
  async close(): Promise<Deno.CommandStatus> {
    await this.#writer.close().catch(() => {});
    const status = await this.process.status;
    await this.#reading;
    return status;
  }

  async #send(msg: Record<string, unknown>): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(msg) + "\n"));
  }

  #request<M extends InboundMethod>(
    method: M,
    params: MethodParamsInput<M>,
  ): Promise<MethodResult<M>> {
    const id = `${++this.#counter}_${Date.now()}`;
    // The server answers with the method's result schema (lib/wire/jsonrpc.ts).
    const p = new Promise<MethodResult<M>>((resolve, reject) =>
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
    );
    const msg: Record<string, unknown> = { jsonrpc: "2.0", id, method };
    if (params !== undefined) msg.params = params;
    this.#send(msg).catch((err) => {
      this.#pending.get(id)?.reject(err);
      this.#pending.delete(id);
    });
    return p;
  }

  async #readLoop(): Promise<void> {
    try {
      for await (const line of readLines(this.process.stdout)) {
        if (!line) continue;
        let msg: Record<string, any>;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (!msg || typeof msg !== "object") continue;
        if (msg.method === "event") this.#onEvent(msg.params);
        else if (msg.method === "request") this.#onRequest(msg.id, msg.params);
        else if (typeof msg.id === "string" && this.#pending.has(msg.id)) {
          const p = this.#pending.get(msg.id)!;
          this.#pending.delete(msg.id);
          if (msg.error) p.reject(new WireRpcError(msg.error.code, msg.error.message));
          else p.resolve(msg.result);
        }
      }
    } finally {
      for (const p of this.#pending.values()) p.reject(new Error("kimi --wire exited"));
      this.#pending.clear();
      this.#stream?.end();
    }
  }

  #onEvent(params: { type: string; payload: unknown }): void {
    if (!params || typeof params.type !== "string") return;
    let item: WireStreamItem;
    try {
      const parsed = fromEnvelope(params);
      if (parsed.kind !== "event") return;
      item = parsed.event;
    } catch {
      item = params as WireEvent;
    }
    if (item.type === "Notification") {
      try {
        this.#opts.onNotification?.(item.payload);
      } catch {
        // the callback's failure is the caller's
      }
    }
    this.#stream?.push(item);
  }

  async #onRequest(id: string, params: { type: RequestType; payload: any }): Promise<void> {
    if (!params || typeof params.type !== "string") return;
    this.#stream?.push({ type: params.type, payload: params.payload } as WireRequestItem);
    const payload = params.payload ?? {};
    let result: RequestResult<RequestType>;
    try {
      result = await this.#answer(params.type as RequestType, payload);
    } catch (err) {
      result = params.type === "ToolCallRequest"
        ? {
          tool_call_id: payload.id,
          return_value: {
            is_error: true,
            output: String((err as Error)?.message ?? err),
            message: `Tool execution failed: ${(err as Error)?.message ?? err}`,
            display: [],
            extras: null,
          },
        }
        : { request_id: payload.id, response: "reject", feedback: "" };
    }
    await this.#send({ jsonrpc: "2.0", id, result }).catch(() => {});
  }

  async #answer(type: RequestType, payload: any): Promise<RequestResult<RequestType>> {
    switch (type) {
      case "ApprovalRequest": {
        const a = this.#opts.onApproval
          ? await this.#opts.onApproval(payload)
          : { response: "reject" as const };
        return { request_id: payload.id, response: a.response, feedback: a.feedback ?? "" };
      }
      case "ToolCallRequest": {
        const tool = this.#opts.externalTools?.find((t) => t.name === payload.name);
        if (!tool) {
          return {
            tool_call_id: payload.id,
            return_value: {
              is_error: true,
              output: `Unknown external tool: ${payload.name}`,
              message: `Tool "${payload.name}" is not registered`,
              display: [],
              extras: null,
            },
          };
        }
        const args = payload.arguments ? JSON.parse(payload.arguments) : {};
        return { tool_call_id: payload.id, return_value: await tool.call(args) };
      }
      case "QuestionRequest": {
        const answers = this.#opts.onQuestion ? await this.#opts.onQuestion(payload) : {};
        return { request_id: payload.id, answers };
      }
      default:
        return { request_id: payload.id, action: "allow", reason: "" };
    }
  }
}

/** Names of event types, for narrowing stream items. */
export type { EventType };
