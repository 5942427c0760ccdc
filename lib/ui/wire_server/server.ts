/**
 * The wire server (`kimi --wire`, reference §4): JSON-RPC 2.0 over stdio. Each inbound request
 * runs in its own task so `cancel`, `steer` and answers to server requests are handled while
 * a `prompt` runs. Turn messages are forwarded raw (unmerged); approvals come from the
 * session's approval hub for the server's whole lifetime.
 *
 * @module
 */
import { ChatProviderError } from "../../llm/errors.ts";
import { log } from "../../log.ts";
import { LLMNotSet, LLMNotSupported, MaxStepsReached, RunCancelled } from "../../soul/errors.ts";
import type { KimiApp } from "../../soul/kimi_app.ts";
import { runTurn } from "../../soul/run_turn.ts";
import { toolError } from "../../tooling/result.ts";
import { SERVER_NAME, VERSION, WIRE_SERVER_PROTOCOL_VERSION } from "../../version.ts";
import type { Subscription } from "../../wire/broadcast.ts";
import {
  type Envelope,
  event,
  fromEnvelope,
  isRequest,
  type PendingRequest,
  RequestResultSchemas,
  type RequestType,
  toEnvelope,
  type UserInput,
  type WireMessage,
} from "../../wire/messages.ts";
import { WireFile } from "../../wire/recorder.ts";
import { registerExternalTools } from "./external_tools.ts";
import {
  ErrorCodes,
  ErrorMessages,
  type ErrorObject,
  errorResponse,
  eventMessage,
  type InitializeParams,
  type OutboundMessage,
  parseInbound,
  requestMessage,
  serialize,
  successResponse,
} from "./jsonrpc.ts";
import { readLines } from "./line_reader.ts";
import { HOOK_EVENTS } from "../../hooks/engine.ts";
import { type ClientProfile, filterForClient, parseProtocolVersion } from "./version_filter.ts";

/** The 13 hook events of the hook system (initialize `hooks.supported_events`). */
export const HOOK_EVENT_TYPES: readonly string[] = HOOK_EVENTS;

/** Tools hidden unless the client declares plan mode support. */
const PLAN_MODE_TOOLS = ["EnterPlanMode", "ExitPlanMode"];
/** Tool hidden unless the client declares question support. */
const QUESTION_TOOL = "AskUserQuestion";

/** Why still-pending requests are being settled. */
type SettleReason = "turn_ended" | "wire_closed" | "dropped";

/** Options of {@link WireServer}. */
export interface WireServerOptions {
  /** Writes one serialized line (a newline is appended by the server). */
  write: (text: string) => Promise<void>;
  /** Where `set_plan_mode` records its StatusUpdate and `replay` reads (default: the session's). */
  wireFile?: WireFile;
}

/** A running turn or replay. */
interface Activity {
  kind: "prompt" | "replay";
  abort: AbortController;
}

/** The JSON-RPC dispatcher of one wire connection. */
export class WireServer {
  readonly #app: KimiApp;
  readonly #write: (text: string) => Promise<void>;
  readonly #wireFile: WireFile;
  #pendingLines: string[] = [];
  #draining: Promise<void> | null = null;
  #writerClosed = false;
  #initialized = false;
  #client: ClientProfile = { version: null, name: null };
  #activity: Activity | null = null;
  readonly #pending = new Map<string, PendingRequest>();
  readonly #tasks = new Set<Promise<void>>();
  #hub: Subscription<WireMessage> | null = null;
  #hubLoop: Promise<void> = Promise.resolve();

  /** Create a server for an app. */
  constructor(app: KimiApp, opts: WireServerOptions) {
    this.#app = app;
    this.#write = opts.write;
    this.#wireFile = opts.wireFile ?? new WireFile(app.session.wireFile);
  }

  /** Start following the approval hub (call once, before reading input). */
  start(): void {
    const hub = this.#app.soul.approval.subscribe();
    this.#hub = hub;
    this.#hubLoop = (async () => {
      for await (const msg of hub) {
        try {
          if (!this.#initialized) continue;
          if (isRequest(msg)) {
            this.#sendRequest(msg);
          } else {
            if (msg.type === "ApprovalResponse") this.#pending.delete(msg.payload.request_id);
            this.#sendEvent(toEnvelope(msg));
          }
        } catch (err) {
          log("ERROR", "wire", `root hub message handling failed: ${(err as Error).message}`);
        }
      }
    })();
  }

  /** Whether `initialize` was received. */
  get initialized(): boolean {
    return this.#initialized;
  }

  /** Handle one inbound line (`null` = a line over the size limit). Never throws. */
  handleLine(line: string | null): void {
    if (line === null) {
      this.#send(errorResponse(null, ErrorCodes.PARSE_ERROR, ErrorMessages.INVALID_JSON));
      return;
    }
    if (!line.trim()) return;
    const inbound = parseInbound(line.trim());
    switch (inbound.kind) {
      case "ignore":
        return;
      case "reply":
        this.#send(inbound.message);
        return;
      case "response":
        this.#handleResponse(inbound.id, inbound.result, inbound.error);
        return;
      case "request": {
        const task = this.#dispatch(inbound.id, inbound.method, inbound.params).catch((err) => {
          log("ERROR", "wire", `dispatch of ${inbound.method} failed: ${(err as Error).message}`);
          this.#send(errorResponse(inbound.id, ErrorCodes.INTERNAL_ERROR, errorText(err)));
        });
        this.#tasks.add(task);
        task.finally(() => this.#tasks.delete(task));
      }
    }
  }

  /**
   * Shut down (stdin EOF or a signal): cancel the running turn, reject pending foreground
   * approvals, settle pending client requests, wait briefly for handlers, flush output.
   */
  async shutdown(): Promise<void> {
    this.#activity?.abort.abort(new RunCancelled());
    for (const req of [...this.#pending.values()]) this.#settle(req, "wire_closed");
    this.#pending.clear();
    this.#app.soul.approval.cancelForeground();
    await Promise.race([
      Promise.allSettled([...this.#tasks]),
      new Promise((res) => setTimeout(res, 3000)),
    ]);
    this.#hub?.unsubscribe();
    await this.#hubLoop;
    await this.flush();
    this.#writerClosed = true;
  }

  /** Wait until everything queued so far is written. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  // ---- output -------------------------------------------------------------------------------

  #send(msg: OutboundMessage): void {
    if (this.#writerClosed) return;
    this.#pendingLines.push(serialize(msg));
    if (!this.#draining) this.#draining = this.#drain();
  }

  /** Write queued lines, batching everything queued while the previous write ran. */
  async #drain(): Promise<void> {
    while (this.#pendingLines.length > 0) {
      const batch = this.#pendingLines.join("\n");
      this.#pendingLines = [];
      try {
        await this.#write(batch);
      } catch (err) {
        log("WARNING", "wire", `could not write to stdout: ${(err as Error).message}`);
      }
    }
    this.#draining = null;
  }

  #sendEvent(env: Envelope): void {
    const out = filterForClient(this.#client, env);
    if (out) this.#send(eventMessage(out.type, out.payload));
  }

  #sendRequest(req: PendingRequest): void {
    if (req.settled) return;
    const id = req.payload.id;
    const out = filterForClient(this.#client, toEnvelope(req));
    if (out === null) {
      this.#settle(req, "dropped");
      return;
    }
    this.#pending.set(id, req);
    req.result.then(() => {
      if (this.#pending.get(id) === req) this.#pending.delete(id);
    });
    this.#send(requestMessage(id, out.type, out.payload));
  }

  #forward(msg: WireMessage): void {
    if (isRequest(msg)) this.#sendRequest(msg);
    else this.#sendEvent(toEnvelope(msg));
  }

  // ---- client answers -----------------------------------------------------------------------

  #handleResponse(id: string, result: unknown, error: ErrorObject | null): void {
    const req = this.#pending.get(id);
    if (!req) {
      log("WARNING", "wire", `response to unknown request id ${id} ignored`);
      return;
    }
    this.#pending.delete(id);
    const type = req.type as RequestType;
    const payloadId = req.payload.id;
    if (type === "ApprovalRequest") {
      const parsed = error ? null : RequestResultSchemas.ApprovalRequest.safeParse(result);
      if (!parsed?.success) {
        answer(req, { request_id: payloadId, response: "reject", feedback: "" });
        return;
      }
      if (parsed.data.request_id !== payloadId) {
        log("WARNING", "wire", `approval answer for ${id} names request ${parsed.data.request_id}`);
      }
      answer(req, { ...parsed.data, request_id: payloadId });
    } else if (type === "ToolCallRequest") {
      if (error) {
        answer(req, {
          tool_call_id: payloadId,
          return_value: toolError({ message: error.message, brief: "External tool error" }),
        });
        return;
      }
      const parsed = RequestResultSchemas.ToolCallRequest.safeParse(result);
      answer(
        req,
        parsed.success ? parsed.data : {
          tool_call_id: payloadId,
          return_value: toolError({
            message: "Invalid tool result payload from client.",
            brief: "Invalid tool result",
          }),
        },
      );
    } else if (type === "QuestionRequest") {
      const parsed = error ? null : RequestResultSchemas.QuestionRequest.safeParse(result);
      answer(req, parsed?.success ? parsed.data : { request_id: payloadId, answers: {} });
    } else {
      const parsed = error ? null : RequestResultSchemas.HookRequest.safeParse(result);
      answer(
        req,
        parsed?.success ? parsed.data : { request_id: payloadId, action: "allow", reason: "" },
      );
    }
  }

  /** Settle a request the client will not answer. */
  #settle(req: PendingRequest, reason: SettleReason): void {
    if (req.settled) return;
    const id = req.payload.id;
    switch (req.type as RequestType) {
      case "ApprovalRequest": {
        const p = req.payload as { source_kind?: string | null };
        if (reason !== "dropped" && p.source_kind === "background_agent") return;
        answer(req, { request_id: id, response: "reject", feedback: "" });
        return;
      }
      case "ToolCallRequest":
        answer(req, {
          tool_call_id: id,
          return_value: reason === "turn_ended"
            ? toolError({
              message: "Agent turn ended before tool result was received.",
              brief: "Turn ended",
            })
            : reason === "wire_closed"
            ? toolError({
              message: "Wire connection closed before tool result was received.",
              brief: "Wire closed",
            })
            : toolError({
              message: "The wire client does not support external tool calls.",
              brief: "Not supported",
            }),
        });
        return;
      case "QuestionRequest":
        answer(req, { request_id: id, answers: {} });
        return;
      case "HookRequest":
        answer(req, { request_id: id, action: "allow", reason: "" });
    }
  }

  // ---- methods ------------------------------------------------------------------------------

  async #dispatch(id: string, method: string, params: unknown): Promise<void> {
    let reply: OutboundMessage;
    switch (method) {
      case "initialize":
        reply = this.#initialize(id, params as InitializeParams);
        break;
      case "prompt":
        reply = await this.#prompt(id, (params as { user_input: UserInput }).user_input);
        break;
      case "steer":
        reply = this.#steer(id, (params as { user_input: UserInput }).user_input);
        break;
      case "set_plan_mode":
        reply = await this.#setPlanMode(id, (params as { enabled: boolean }).enabled);
        break;
      case "cancel":
        reply = this.#cancel(id);
        break;
      case "replay":
        reply = await this.#replay(id);
        break;
      default:
        reply = errorResponse(
          id,
          ErrorCodes.METHOD_NOT_FOUND,
          `Unexpected method received: ${method}`,
        );
    }
    this.#send(reply);
  }

  #initialize(id: string, params: InitializeParams): OutboundMessage {
    if (this.#activity) {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.TURN_IN_PROGRESS);
    }
    const soul = this.#app.soul;
    const toolset = soul.toolset;
    this.#client = {
      version: parseProtocolVersion(params.protocol_version),
      name: params.client?.name ?? null,
    };
    const result: Record<string, unknown> = {
      protocol_version: WIRE_SERVER_PROTOCOL_VERSION,
      server: { name: SERVER_NAME, version: VERSION },
      slash_commands: soul.commands.map((c) => ({
        name: c.name,
        description: c.description,
        aliases: [...c.aliases],
      })),
    };
    if (params.external_tools && params.external_tools.length > 0) {
      result.external_tools = registerExternalTools(
        toolset,
        params.external_tools,
        (msg) => soul.emit(msg),
      );
    }
    const hooks = this.#app.hooks;
    if (params.hooks && params.hooks.length > 0) hooks.addWireSubscriptions(params.hooks);
    hooks.setWireSender((req) => this.#sendRequest(req as PendingRequest));
    result.hooks = { supported_events: [...HOOK_EVENT_TYPES], configured: hooks.summary() };
    result.capabilities = { supports_question: true };

    const supportsQuestion = params.capabilities?.supports_question ?? false;
    const supportsPlanMode = params.capabilities?.supports_plan_mode ?? false;
    this.#app.supportsQuestions = supportsQuestion;
    toolset.setHidden(QUESTION_TOOL, !supportsQuestion);
    for (const name of PLAN_MODE_TOOLS) toolset.setHidden(name, !supportsPlanMode);

    this.#initialized = true;
    for (const req of soul.approval.pending()) {
      if (!this.#pending.has(req.payload.id)) this.#sendRequest(req);
    }
    return successResponse(id, result);
  }

  async #prompt(id: string, input: UserInput): Promise<OutboundMessage> {
    if (this.#activity) {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.TURN_IN_PROGRESS);
    }
    const activity: Activity = { kind: "prompt", abort: new AbortController() };
    this.#activity = activity;
    const turnRequests: PendingRequest[] = [];
    try {
      await runTurn(this.#app.soul, input, {
        signal: activity.abort.signal,
        wireFile: this.#wireFile,
        ui: (wire) => {
          const sub = wire.subscribe({ merge: false });
          return (async () => {
            for await (const msg of sub) {
              if (isRequest(msg)) turnRequests.push(msg);
              this.#forward(msg);
              // Stop taking messages while stdout lags: the soul then waits for room.
              if (this.#pendingLines.length >= 2048) await this.#draining;
            }
          })();
        },
      });
      return successResponse(id, { status: "finished" });
    } catch (err) {
      if (err instanceof RunCancelled) return successResponse(id, { status: "cancelled" });
      if (err instanceof MaxStepsReached) {
        return successResponse(id, { status: "max_steps_reached", steps: err.nSteps });
      }
      if (err instanceof LLMNotSet) {
        return errorResponse(id, ErrorCodes.LLM_NOT_SET, "LLM is not set");
      }
      if (err instanceof LLMNotSupported) {
        return errorResponse(id, ErrorCodes.LLM_NOT_SUPPORTED, err.message);
      }
      if (err instanceof ChatProviderError) {
        return errorResponse(id, ErrorCodes.CHAT_PROVIDER_ERROR, err.message);
      }
      log("ERROR", "wire", `unexpected error in prompt: ${errorText(err)}`);
      return errorResponse(id, ErrorCodes.INTERNAL_ERROR, errorText(err));
    } finally {
      for (const req of turnRequests) this.#settle(req, "turn_ended");
      for (const req of [...this.#pending.values()]) {
        const p = req.payload as { source_kind?: string | null };
        if (req.type === "ApprovalRequest" && p.source_kind === "foreground_turn") {
          this.#settle(req, "turn_ended");
        }
        if (req.type === "HookRequest") this.#settle(req, "turn_ended");
      }
      this.#activity = null;
    }
  }

  #steer(id: string, input: UserInput): OutboundMessage {
    if (this.#activity?.kind !== "prompt") {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.NO_TURN);
    }
    this.#app.soul.steer(input);
    return successResponse(id, { status: "steered" });
  }

  async #setPlanMode(id: string, enabled: boolean): Promise<OutboundMessage> {
    const soul = this.#app.soul;
    await soul.setPlanMode(enabled);
    const status = event("StatusUpdate", {
      context_usage: null,
      context_tokens: null,
      max_context_tokens: null,
      token_usage: null,
      message_id: null,
      plan_mode: soul.planMode,
      mcp_status: null,
    });
    this.#sendEvent(toEnvelope(status));
    try {
      await this.#wireFile.append(status);
    } catch (err) {
      log("WARNING", "wire", `could not record plan mode change: ${(err as Error).message}`);
    }
    return successResponse(id, { status: "ok", plan_mode: soul.planMode });
  }

  #cancel(id: string): OutboundMessage {
    if (!this.#activity) return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.NO_TURN);
    this.#activity.abort.abort(new RunCancelled());
    return successResponse(id, {});
  }

  async #replay(id: string): Promise<OutboundMessage> {
    if (this.#activity) {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.TURN_IN_PROGRESS);
    }
    const activity: Activity = { kind: "replay", abort: new AbortController() };
    this.#activity = activity;
    let events = 0;
    let requests = 0;
    try {
      let n = 0;
      for await (const rec of this.#wireFile.records()) {
        if (activity.abort.signal.aborted) break;
        const env = normalizeRecord(rec.message);
        if (env.kind === "request") {
          const payload = env.envelope.payload;
          const out = filterForClient(this.#client, env.envelope);
          if (out) {
            this.#send(requestMessage(String(payload.id ?? ""), out.type, out.payload));
            requests++;
          }
        } else {
          const out = filterForClient(this.#client, env.envelope);
          if (out) {
            this.#send(eventMessage(out.type, out.payload));
            events++;
          }
        }
        if (++n % 64 === 0) await this.flush();
      }
      await this.flush();
      const status = activity.abort.signal.aborted ? "cancelled" : "finished";
      return successResponse(id, { status, events, requests });
    } catch (err) {
      log("ERROR", "wire", `replay failed: ${errorText(err)}`);
      return errorResponse(id, ErrorCodes.INTERNAL_ERROR, ErrorMessages.REPLAY_FAILED);
    } finally {
      this.#activity = null;
    }
  }
}

/** Normalise a recorded envelope (legacy names and fields) and say whether it is a request. */
function normalizeRecord(env: Envelope): { kind: "event" | "request"; envelope: Envelope } {
  try {
    const parsed = fromEnvelope(env);
    if (parsed.kind === "event") return { kind: "event", envelope: toEnvelope(parsed.event) };
    if (parsed.kind === "request") {
      return {
        kind: "request",
        envelope: { type: parsed.type, payload: parsed.payload as Record<string, unknown> },
      };
    }
  } catch {
    // keep the record as written
  }
  return { kind: "event", envelope: env };
}

function answer(req: PendingRequest, result: unknown): void {
  (req as PendingRequest<RequestType>).resolve(result as never);
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/** Options of {@link runWire}. */
export interface RunWireOptions {
  /** Input stream (default: the process's stdin). */
  stdin?: ReadableStream<Uint8Array>;
  /** Writes one or more lines (joined by "\n", no final newline; default: stdout). */
  writeLine?: (text: string) => Promise<void>;
  /** Whether SIGTERM/SIGINT shut the server down (default true). */
  handleSignals?: boolean;
}

const encoder = new TextEncoder();

async function stdoutWrite(text: string): Promise<void> {
  const data = encoder.encode(text + "\n");
  let off = 0;
  while (off < data.length) off += await Deno.stdout.write(data.subarray(off));
}

/** Serve the wire protocol until stdin closes or a termination signal; resolves with 0. */
export async function runWire(app: KimiApp, opts: RunWireOptions = {}): Promise<number> {
  const server = new WireServer(app, { write: opts.writeLine ?? stdoutWrite });
  server.start();
  const stop = Promise.withResolvers<void>();
  const onSignal = () => stop.resolve();
  const signals: Deno.Signal[] = opts.handleSignals === false ? [] : ["SIGTERM", "SIGINT"];
  for (const sig of signals) {
    try {
      Deno.addSignalListener(sig, onSignal);
    } catch {
      // signal not supported on this platform
    }
  }
  let stopped = false;
  const reading = (async () => {
    for await (const line of readLines(opts.stdin ?? Deno.stdin.readable)) {
      if (stopped) return;
      server.handleLine(line);
    }
  })().catch((err) => {
    log("WARNING", "wire", `stdin read failed: ${(err as Error).message}`);
  });
  try {
    await Promise.race([reading, stop.promise]);
    stopped = true;
    await server.shutdown();
  } finally {
    for (const sig of signals) {
      try {
        Deno.removeSignalListener(sig, onSignal);
      } catch {
        // ignore
      }
    }
  }
  return 0;
}
