/**
 * Approvals (reference §8): yolo/afk state, the "approve for session" action whitelist, and
 * the runtime holding pending requests until a UI answers them.
 *
 * @module
 */
import type { ApprovalAsk, ApprovalOutcome } from "../tooling/tool.ts";
import { BroadcastQueue, type Subscription } from "../wire/broadcast.ts";
import { event, PendingRequest, type WireMessage } from "../wire/messages.ts";

/** Where an approval request comes from. */
export interface ApprovalSource {
  /** `foreground_turn` or `background_agent`. */
  kind: "foreground_turn" | "background_agent";
  /** Id of the turn or task. */
  id: string;
  /** Subagent instance id, for subagent requests. */
  agentId?: string | null;
  /** Subagent type, for subagent requests. */
  subagentType?: string | null;
  /** Human description of the source. */
  description?: string | null;
}

/** Persisted approval flags. */
export interface ApprovalSnapshot {
  /** Auto-approve everything. */
  yolo: boolean;
  /** Away from keyboard (persisted). */
  afk: boolean;
  /** Actions approved for the whole session. */
  auto_approve_actions: string[];
}

/** Yolo/afk flags and the session whitelist, shared by the root agent and its subagents. */
export class ApprovalState {
  #yolo: boolean;
  #afk: boolean;
  #runtimeAfk: boolean;
  #actions: Set<string>;
  readonly #persist: (s: ApprovalSnapshot) => Promise<void>;

  /** Create the state. `persist` is called after every change. */
  constructor(opts: {
    yolo?: boolean;
    afk?: boolean;
    runtimeAfk?: boolean;
    actions?: Iterable<string>;
    persist?: (s: ApprovalSnapshot) => Promise<void>;
  } = {}) {
    this.#yolo = opts.yolo ?? false;
    this.#afk = opts.afk ?? false;
    this.#runtimeAfk = opts.runtimeAfk ?? false;
    this.#actions = new Set(opts.actions ?? []);
    this.#persist = opts.persist ?? (() => Promise.resolve());
  }

  /** Yolo flag. */
  get yolo(): boolean {
    return this.#yolo;
  }
  /** Persisted afk flag. */
  get afk(): boolean {
    return this.#afk;
  }
  /** Whether no user is present (persisted afk or runtime afk such as print mode). */
  get isAfk(): boolean {
    return this.#afk || this.#runtimeAfk;
  }
  /** Whether every request is approved without asking. */
  get autoApprove(): boolean {
    return this.#yolo || this.isAfk;
  }
  /** Actions approved for the session. */
  get actions(): ReadonlySet<string> {
    return this.#actions;
  }

  /** The persisted form. */
  snapshot(): ApprovalSnapshot {
    return { yolo: this.#yolo, afk: this.#afk, auto_approve_actions: [...this.#actions] };
  }

  /** Set yolo. */
  async setYolo(on: boolean): Promise<void> {
    this.#yolo = on;
    await this.#persist(this.snapshot());
  }
  /** Set persisted afk. */
  async setAfk(on: boolean): Promise<void> {
    this.#afk = on;
    await this.#persist(this.snapshot());
  }
  /** Set runtime afk (not persisted). */
  setRuntimeAfk(on: boolean): void {
    this.#runtimeAfk = on;
  }
  /** Approve an action for the rest of the session. */
  async addAction(action: string): Promise<void> {
    if (this.#actions.has(action)) return;
    this.#actions.add(action);
    await this.#persist(this.snapshot());
  }
}

interface PendingApproval {
  request: PendingRequest<"ApprovalRequest">;
  source: ApprovalSource;
}

/**
 * Pending approval requests of a session. Requests are published on the session's root hub,
 * which every UI subscribes to; the answer resolves the waiting tool.
 */
export class ApprovalRuntime {
  /** Session-level broadcast of approval requests and their responses. */
  readonly hub: BroadcastQueue<WireMessage> = new BroadcastQueue();
  readonly #pending = new Map<string, PendingApproval>();
  readonly state: ApprovalState;

  /** Create a runtime over a state. */
  constructor(state: ApprovalState) {
    this.state = state;
  }

  /** Subscribe to requests and responses. */
  subscribe(): Subscription<WireMessage> {
    return this.hub.subscribe();
  }

  /** Requests still waiting for an answer. */
  pending(): PendingRequest<"ApprovalRequest">[] {
    return [...this.#pending.values()].map((p) => p.request);
  }

  /** Ask for approval; resolves when answered (or auto-approved). */
  async request(opts: {
    sender: string;
    toolCallId: string;
    ask: ApprovalAsk;
    source: ApprovalSource;
  }): Promise<ApprovalOutcome> {
    if (opts.ask.mustAsk) {
      if (this.state.isAfk) {
        return {
          approved: false,
          feedback: "No user is present to approve this change, and it is never auto-approved.",
        };
      }
    } else {
      if (this.state.autoApprove) return { approved: true };
      if (this.state.actions.has(opts.ask.action)) return { approved: true };
    }
    const id = crypto.randomUUID();
    const req = new PendingRequest("ApprovalRequest", {
      id,
      tool_call_id: opts.toolCallId,
      sender: opts.sender,
      action: opts.ask.action,
      description: opts.ask.description,
      source_kind: opts.source.kind,
      source_id: opts.source.id,
      agent_id: opts.source.agentId ?? null,
      subagent_type: opts.source.subagentType ?? null,
      source_description: opts.source.description ?? null,
      display: opts.ask.display,
    });
    this.#pending.set(id, { request: req, source: opts.source });
    this.hub.publish(req);
    const result = await req.result;
    this.#pending.delete(id);
    this.hub.publish(event("ApprovalResponse", {
      request_id: id,
      response: result.response,
      feedback: result.feedback ?? "",
    }));
    if (result.response === "approve") return { approved: true };
    if (result.response === "approve_for_session" && opts.ask.mustAsk) return { approved: true };
    if (result.response === "approve_for_session") {
      await this.state.addAction(opts.ask.action);
      for (const p of [...this.#pending.values()]) {
        if (p.request.payload.action === opts.ask.action) {
          p.request.resolve({
            request_id: p.request.payload.id,
            response: "approve",
            feedback: "",
          });
        }
      }
      return { approved: true };
    }
    return { approved: false, feedback: result.feedback ?? "" };
  }

  /** Reject every pending request of a source (turn ended or was cancelled). */
  cancelSource(sourceId: string): void {
    for (const p of [...this.#pending.values()]) {
      if (p.source.id === sourceId) {
        p.request.resolve({ request_id: p.request.payload.id, response: "reject", feedback: "" });
      }
    }
  }

  /** Reject every pending foreground request (wire closed). */
  cancelForeground(): void {
    for (const p of [...this.#pending.values()]) {
      if (p.source.kind === "foreground_turn") {
        p.request.resolve({ request_id: p.request.payload.id, response: "reject", feedback: "" });
      }
    }
  }
}
