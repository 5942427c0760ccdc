/**
 * The wire server (`kimi --wire`, reference §4): JSON-RPC 2.0 over a line transport (stdio for
 * `kimi --wire`, WebSockets for `kimi web`; see `transport.ts`). Each inbound request
 * runs in its own task so `cancel`, `steer` and answers to server requests are handled while
 * a `prompt` runs. Turn messages are forwarded raw (unmerged); approvals come from the
 * session's approval hub for the server's whole lifetime.
 *
 * @module
 */
import { log } from "../../log.ts";
import { RunCancelled } from "../../soul/errors.ts";
import type { KimiApp } from "../../app/kimi_app.ts";
import { runTurn } from "../../soul/run_turn.ts";
import { turnOutcome } from "../../soul/turn_outcome.ts";
import { SERVER_NAME, VERSION, WIRE_SERVER_PROTOCOL_VERSION } from "../../version.ts";
import type { Subscription } from "../../wire/broadcast.ts";
import {
  type Envelope,
  isRequest,
  type PendingRequest,
  statusUpdate,
  toEnvelope,
  type UserInput,
  type WireMessage,
} from "../../wire/messages.ts";
import { type WireFile, WireFileError } from "../../wire/recorder.ts";
import { registerExternalTools } from "./external_tools.ts";
import { OutputQueue, type OutputQueueOptions } from "./output_queue.ts";
import { replayRecords } from "./replay.ts";
import { answerFromClient, type SettleReason, settleUnanswered } from "./request_answers.ts";
import {
  ErrorCodes,
  ErrorMessages,
  type ErrorObject,
  errorResponse,
  eventMessage,
  type InboundRequest,
  type InitializeResult,
  type MethodParams,
  type OutboundMessage,
  parseInbound,
  requestMessage,
  resultResponse,
} from "../../wire/jsonrpc.ts";
import { HOOK_EVENTS } from "../../hooks/engine.ts";
import {
  type ClientProfile,
  filterForClient,
  negotiatedProtocolVersion,
  parseProtocolVersion,
} from "../../wire/version_filter.ts";

/** The 13 hook events of the hook system (initialize `hooks.supported_events`). */
export const HOOK_EVENT_TYPES: readonly string[] = HOOK_EVENTS;

/** Tools hidden unless the client declares plan mode support. */
const PLAN_MODE_TOOLS = ["EnterPlanMode", "ExitPlanMode"];
/** Tool hidden unless the client declares question support. */
const QUESTION_TOOL = "AskUserQuestion";

/** Options of {@link WireServer}. */
export interface WireServerOptions {
  /** Writes one serialized line (a newline is appended by the server). */
  write: (text: string) => Promise<void>;
  /** Writes one message given as JSON pieces plus a newline (see {@link OutputQueueOptions}). */
  writePieces?: OutputQueueOptions["writePieces"];
  /** Where `set_plan_mode` records its StatusUpdate and `replay` reads (default: the session's). */
  wireFile?: WireFile;
  /**
   * Told when a turn or replay starts (`"prompt"`, `"replay"`) and when it ends (`null`):
   * a host serving several clients derives its busy state from it.
   */
  onActivity?: (kind: "prompt" | "replay" | null) => void;
}

/** A running turn or replay. */
interface Activity {
  kind: "prompt" | "replay";
  abort: AbortController;
}

/** The JSON-RPC dispatcher of one wire connection. */
export class WireServer {
  readonly #app: KimiApp;
  readonly #wireFile: WireFile;
  readonly #out: OutputQueue;
  readonly #onActivity: (kind: "prompt" | "replay" | null) => void;
  #initialized = false;
  #client: ClientProfile = { version: null, name: null };
  #activity: Activity | null = null;
  readonly #pending = new Map<string, PendingRequest>();
  readonly #tasks = new Set<Promise<void>>();
  #hub: Subscription<WireMessage> | null = null;
  #hubLoop: Promise<void> = Promise.resolve();
  #stopNotifications: (() => void) | null = null;

  /** Create a server for an app. */
  constructor(app: KimiApp, opts: WireServerOptions) {
    this.#app = app;
    this.#out = new OutputQueue({ write: opts.write, writePieces: opts.writePieces });
    this.#wireFile = opts.wireFile ?? app.wireFile;
    this.#onActivity = opts.onActivity ?? (() => {});
  }

  /** What runs now: a prompt's turn, a replay, or nothing. */
  get activity(): "prompt" | "replay" | null {
    return this.#activity?.kind ?? null;
  }

  #setActivity(activity: Activity | null): void {
    this.#activity = activity;
    try {
      this.#onActivity(activity?.kind ?? null);
    } catch (err) {
      log("WARNING", "wire", `activity listener failed: ${(err as Error).message}`);
    }
  }

  /** Start following the approval hub (call once, before reading input). */
  start(): void {
    // finished background work, told to the client between turns too (wire 1.12)
    this.#stopNotifications = this.#app.onNotification((e) => {
      if (this.#initialized) this.#sendEvent(toEnvelope(e));
    });
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
        const task = this.#dispatch(inbound.id, inbound.request).catch((err) => {
          const method = inbound.request.method;
          log("ERROR", "wire", `dispatch of ${method} failed: ${(err as Error).message}`);
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
    this.#stopNotifications?.();
    this.#hub?.unsubscribe();
    await this.#hubLoop;
    await this.#out.close();
  }

  /** Wait until everything queued so far is written. */
  flush(): Promise<void> {
    return this.#out.flush();
  }

  // ---- output -------------------------------------------------------------------------------

  #send(msg: OutboundMessage): void {
    this.#out.send(msg);
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
    answerFromClient(req, result, error);
  }

  /** Settle a request the client will not answer. */
  #settle(req: PendingRequest, reason: SettleReason): void {
    settleUnanswered(req, reason);
  }

  // ---- methods ------------------------------------------------------------------------------

  async #dispatch(id: string, request: InboundRequest): Promise<void> {
    let reply: OutboundMessage;
    switch (request.method) {
      case "initialize":
        reply = this.#initialize(id, request.params);
        break;
      case "prompt":
        reply = await this.#prompt(id, request.params.user_input);
        break;
      case "steer":
        reply = this.#steer(id, request.params.user_input);
        break;
      case "set_plan_mode":
        reply = await this.#setPlanMode(id, request.params.enabled);
        break;
      case "cancel":
        reply = this.#cancel(id);
        break;
      case "replay":
        reply = await this.#replay(id);
        break;
    }
    this.#send(reply);
    const ended = request.method === "prompt" || request.method === "replay";
    if (ended && this.#activity === null) this.#setActivity(null);
  }

  /**
   * Queue a message that is not a reply to a method (a host's own notice, e.g. `kimi web`'s
   * `session_status`), in order with everything else this server sends.
   */
  sendNotice(msg: OutboundMessage): void {
    this.#send(msg);
  }

  #initialize(id: string, params: MethodParams<"initialize">): OutboundMessage {
    if (this.#activity) {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.TURN_IN_PROGRESS);
    }
    const soul = this.#app.soul;
    const toolset = soul.toolset;
    this.#client = {
      version: parseProtocolVersion(params.protocol_version),
      name: params.client?.name ?? null,
    };
    const result: InitializeResult = {
      protocol_version: negotiatedProtocolVersion(
        params.protocol_version,
        WIRE_SERVER_PROTOCOL_VERSION,
      ),
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
    return resultResponse(id, "initialize", result);
  }

  async #prompt(id: string, input: UserInput): Promise<OutboundMessage> {
    if (this.#activity) {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.TURN_IN_PROGRESS);
    }
    const activity: Activity = { kind: "prompt", abort: new AbortController() };
    this.#setActivity(activity);
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
              const lag = this.#out.lagging();
              if (lag) await lag;
            }
          })();
        },
      });
      return resultResponse(id, "prompt", { status: "finished" });
    } catch (err) {
      const outcome = turnOutcome(err);
      switch (outcome.kind) {
        case "cancelled":
          return resultResponse(id, "prompt", { status: "cancelled" });
        case "max_steps":
          return resultResponse(id, "prompt", {
            status: "max_steps_reached",
            steps: outcome.steps,
          });
        case "llm_not_set":
          return errorResponse(id, ErrorCodes.LLM_NOT_SET, "LLM is not set");
        case "llm_not_supported":
          return errorResponse(id, ErrorCodes.LLM_NOT_SUPPORTED, outcome.message);
        case "auth_expired":
          return errorResponse(id, ErrorCodes.AUTH_EXPIRED, outcome.message);
        case "provider":
          return errorResponse(id, ErrorCodes.CHAT_PROVIDER_ERROR, outcome.message);
        default: // "session_write", "unexpected"
          log("ERROR", "wire", `unexpected error in prompt: ${errorText(err)}`);
          return errorResponse(id, ErrorCodes.INTERNAL_ERROR, errorText(err));
      }
    } finally {
      for (const req of turnRequests) this.#settle(req, "turn_ended");
      for (const req of [...this.#pending.values()]) {
        const p = req.payload as { source_kind?: string | null };
        if (req.type === "ApprovalRequest" && p.source_kind === "foreground_turn") {
          this.#settle(req, "turn_ended");
        }
        if (req.type === "HookRequest") this.#settle(req, "turn_ended");
      }
      this.#activity = null; // told to the host once the reply is queued (#dispatch)
    }
  }

  #steer(id: string, input: UserInput): OutboundMessage {
    if (this.#activity?.kind !== "prompt") {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.NO_TURN);
    }
    this.#app.soul.steer(input);
    return resultResponse(id, "steer", { status: "steered" });
  }

  async #setPlanMode(id: string, enabled: boolean): Promise<OutboundMessage> {
    const soul = this.#app.soul;
    await soul.setPlanMode(enabled);
    const status = statusUpdate({ plan_mode: soul.planMode });
    this.#sendEvent(toEnvelope(status));
    try {
      await this.#wireFile.append(status);
    } catch (err) {
      log("WARNING", "wire", `could not record plan mode change: ${(err as Error).message}`);
    }
    return resultResponse(id, "set_plan_mode", { status: "ok", plan_mode: soul.planMode });
  }

  #cancel(id: string): OutboundMessage {
    if (!this.#activity) return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.NO_TURN);
    this.#activity.abort.abort(new RunCancelled());
    return resultResponse(id, "cancel", {});
  }

  async #replay(id: string): Promise<OutboundMessage> {
    if (this.#activity) {
      return errorResponse(id, ErrorCodes.INVALID_STATE, ErrorMessages.TURN_IN_PROGRESS);
    }
    const activity: Activity = { kind: "replay", abort: new AbortController() };
    this.#setActivity(activity);
    try {
      const { events, requests } = await replayRecords(this.#wireFile, {
        client: this.#client,
        send: (msg) => this.#send(msg),
        flush: () => this.flush(),
        lagging: () => this.#out.lagging(),
        signal: activity.abort.signal,
      });
      await this.flush();
      const status = activity.abort.signal.aborted ? "cancelled" : "finished";
      return resultResponse(id, "replay", { status, events, requests });
    } catch (err) {
      log("ERROR", "wire", `replay failed: ${errorText(err)}`);
      // The records sent so far stay sent; the cause of the stop goes with the error.
      return {
        jsonrpc: "2.0",
        id,
        error: {
          code: ErrorCodes.INTERNAL_ERROR,
          message: ErrorMessages.REPLAY_FAILED,
          data: err instanceof WireFileError ? { reason: err.message } : null,
        },
      };
    } finally {
      this.#activity = null; // told to the host once the reply is queued (#dispatch)
    }
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
