/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * One session's live connection: the WebSocket of `/api/sessions/{id}/stream` carrying
 * wire-protocol JSON-RPC. On every (re)connect the server replays the session's history and
 * then says `history_complete`; the replay is folded into a fresh transcript that replaces the
 * shown one only once complete, so a reconnect never duplicates a message. Prompts typed while
 * the agent is busy wait in a queue and go out one by one when it is idle again.
 *
 * @module
 */
import { streamUrl } from "./api.ts";
import {
  applyWireMessage,
  emptyTranscript,
  markApprovalAnswered,
  resolveQuestion,
  type Transcript,
  userInputView,
} from "./transcript.ts";

/** A slash command the server offers (from the `initialize` result). */
export interface SlashCommand {
  /** Name without the slash. */
  name: string;
  /** What it does. */
  description: string;
  /** Other names. */
  aliases: string[];
}

/** Connection state shown to the user. */
export type LinkState = "connecting" | "replaying" | "live" | "reconnecting" | "closed";

/** What the page renders of a session stream. */
export interface StreamSnapshot {
  /** The chat view model. */
  transcript: Transcript;
  /** Connection state. */
  link: LinkState;
  /** Session state from `session_status` (`idle`, `busy`, …). */
  state: string;
  /** Whether a turn runs. */
  busy: boolean;
  /** Prompts waiting for the agent to be idle. */
  queue: string[];
  /** Steers sent to the running turn that the agent has not taken in yet (end of its step). */
  steering: string[];
  /** Slash commands from `initialize`. */
  slashCommands: SlashCommand[];
  /** A fatal problem (auth, unknown session) with what to do. */
  fatal: { kind: "auth" | "gone" | "error"; message: string } | null;
  /** The latest error a request returned (busy, provider error…), shown until the next prompt. */
  error: string | null;
}

/** Options of {@link SessionStream}. */
export interface SessionStreamOptions {
  /** Called when an approval or question starts waiting (for notifications). */
  onAttention?: (what: string) => void;
  /** Socket factory (tests); default `new WebSocket(url)`. */
  connect?: (url: string) => WebSocket;
}

type Listener = (s: StreamSnapshot) => void;

/** The live stream of one session. */
export class SessionStream {
  readonly #id: string;
  readonly #opts: SessionStreamOptions;
  #ws: WebSocket | null = null;
  #pending: Transcript | null = null;
  #snap: StreamSnapshot;
  #listeners = new Set<Listener>();
  #closed = false;
  #retry = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ownIds = new Set<string>();
  #initId = "";
  #initTries = 0;
  #promptIds = new Set<string>();
  /** Steer requests not answered yet, with their text. */
  #steerIds = new Map<string, string>();
  /** Requests that came with the replayed history (may be stale if the agent no longer waits). */
  #replayedRequests = new Set<string>();

  /** Open the stream of session `id`. */
  constructor(id: string, opts: SessionStreamOptions = {}) {
    this.#id = id;
    this.#opts = opts;
    this.#snap = {
      transcript: emptyTranscript(),
      link: "connecting",
      state: "stopped",
      busy: false,
      queue: [],
      steering: [],
      slashCommands: [],
      fatal: null,
      error: null,
    };
    this.#open();
  }

  /** Current snapshot. */
  get snapshot(): StreamSnapshot {
    return this.#snap;
  }

  /** Be told of every change; returns the unsubscribe function. */
  subscribe(fn: Listener): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Close for good. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#ws?.close(1000);
    this.#set({ link: "closed" });
  }

  /** Send a prompt now, or queue it while a turn runs. */
  prompt(userInput: string | unknown[]): void {
    if (this.#snap.busy && typeof userInput === "string") {
      this.#set({ queue: [...this.#snap.queue, userInput] });
      return;
    }
    this.#sendPrompt(userInput);
  }

  /** Remove a queued prompt. */
  unqueue(index: number): void {
    this.#set({ queue: this.#snap.queue.filter((_, i) => i !== index) });
  }

  /** Send text to the running turn (`steer`). */
  steer(text: string): void {
    this.#steerIds.set(this.#request("steer", { user_input: text }), text);
    this.#set({ steering: [...this.#snap.steering, text] });
  }

  /** Cancel the running turn. */
  cancel(): void {
    this.#request("cancel", undefined);
  }

  /** Turn plan mode on or off. */
  setPlanMode(enabled: boolean): void {
    this.#request("set_plan_mode", { enabled });
  }

  /** Answer an approval request. */
  answerApproval(
    requestId: string,
    response: "approve" | "approve_for_session" | "reject",
    feedback = "",
  ): void {
    this.#send({
      jsonrpc: "2.0",
      id: requestId,
      result: { request_id: requestId, response, ...(feedback ? { feedback } : {}) },
    });
    // The server confirms with an ApprovalResponse event; hide the card at once meanwhile.
    markApprovalAnswered(this.#snap.transcript, requestId);
    this.#set({});
  }

  /** Answer a question request (`answers`: question text → chosen label(s)). */
  answerQuestion(requestId: string, answers: Record<string, string>): void {
    this.#send({ jsonrpc: "2.0", id: requestId, result: { request_id: requestId, answers } });
    resolveQuestion(this.#snap.transcript, requestId);
    this.#set({});
  }

  #sendPrompt(userInput: string | unknown[]): void {
    this.#set({ error: null });
    this.#promptIds.add(this.#request("prompt", { user_input: userInput }));
  }

  #request(method: string, params: unknown): string {
    const id = crypto.randomUUID();
    this.#ownIds.add(id);
    this.#send({ jsonrpc: "2.0", method, id, ...(params === undefined ? {} : { params }) });
    return id;
  }

  #send(frame: unknown): void {
    if (this.#ws?.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(frame));
    else this.#set({ error: "Not connected to the server; reconnecting…" });
  }

  #set(patch: Partial<StreamSnapshot>): void {
    this.#snap = { ...this.#snap, ...patch };
    for (const fn of this.#listeners) fn(this.#snap);
  }

  #open(): void {
    if (this.#closed) return;
    const url = streamUrl(this.#id);
    const ws = this.#opts.connect ? this.#opts.connect(url) : new WebSocket(url);
    this.#ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.#retry = 0;
      this.#pending = emptyTranscript();
      this.#set({ link: "replaying" });
      this.#initialize();
    };
    ws.onmessage = (ev) => {
      if (ws !== this.#ws) return;
      let msg: unknown;
      try {
        msg = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      this.#onFrame(msg as Record<string, unknown>);
    };
    ws.onclose = (ev) => {
      if (ws !== this.#ws) return;
      this.#ws = null;
      if (ev.code === 4401) {
        this.#set({
          link: "closed",
          fatal: { kind: "auth", message: ev.reason || "Auth required" },
        });
        return;
      }
      if (ev.code === 4004 || ev.code === 4403) {
        this.#set({
          link: "closed",
          fatal: { kind: ev.code === 4004 ? "gone" : "error", message: ev.reason },
        });
        return;
      }
      if (this.#closed) return;
      this.#retry++;
      const delay = Math.min(8000, 500 * 2 ** Math.min(this.#retry, 4));
      this.#set({ link: opened || this.#retry > 1 ? "reconnecting" : "connecting" });
      this.#timer = setTimeout(() => this.#open(), delay);
    };
  }

  #initialize(): void {
    this.#initId = crypto.randomUUID();
    this.#ownIds.add(this.#initId);
    this.#send({
      jsonrpc: "2.0",
      method: "initialize",
      id: this.#initId,
      params: {
        protocol_version: "1.10",
        client: { name: "kimi-web", version: "1" },
        capabilities: { supports_question: true, supports_plan_mode: true },
      },
    });
  }

  #finishReplay(): void {
    if (!this.#pending) return;
    const t = this.#pending;
    this.#pending = null;
    this.#replayedRequests = new Set([
      ...t.approvals.map((a) => a.id),
      ...t.questions.map((q) => q.id),
    ]);
    this.#set({ transcript: t, link: "live" });
  }

  #onFrame(msg: Record<string, unknown>): void {
    const method = msg.method;
    if (method === "history_complete") {
      this.#finishReplay();
      return;
    }
    if (method === "session_status") {
      this.#finishReplay();
      const p = (msg.params ?? {}) as Record<string, unknown>;
      const state = typeof p.state === "string" ? p.state : "idle";
      const busy = state === "busy";
      const wasBusy = this.#snap.busy;
      if (!busy && this.#replayedRequests.size > 0) {
        // Nothing runs: requests from the history no longer wait for an answer (the server
        // re-sends the ones that still do when the client initializes).
        const t = this.#snap.transcript;
        t.approvals = t.approvals.filter((a) => !this.#replayedRequests.has(a.id));
        t.questions = t.questions.filter((q) => !this.#replayedRequests.has(q.id));
        this.#replayedRequests.clear();
      } else if (busy) this.#replayedRequests.clear();
      // A turn that ended no longer takes steers in: the ones it did not take run as the next
      // turn (as in the shell), before the prompts queued meanwhile.
      if (busy) this.#set({ state, busy });
      else {
        this.#set({
          state,
          busy,
          steering: [],
          queue: [...this.#snap.steering, ...this.#snap.queue],
        });
      }
      if (state === "error" && typeof p.detail === "string" && p.detail) {
        this.#set({ error: `Session error: ${p.detail}` });
      }
      if (wasBusy && !busy) this.#drainQueue();
      else if (!busy && this.#snap.queue.length) this.#drainQueue();
      return;
    }
    if (method === "event" || method === "request") {
      const target = this.#pending ?? this.#snap.transcript;
      const before = target.approvals.length + target.questions.length;
      applyWireMessage(target, msg);
      if (!this.#pending) {
        const taken = steerText(msg);
        const at = taken === null ? -1 : this.#snap.steering.indexOf(taken);
        if (at >= 0) this.#set({ steering: this.#snap.steering.filter((_, i) => i !== at) });
        this.#set({ transcript: target });
        const after = target.approvals.length + target.questions.length;
        if (after > before) this.#opts.onAttention?.(method === "request" ? "request" : "event");
      }
      return;
    }
    // A response: only ours matter (every tab sees every response).
    const id = typeof msg.id === "string" ? msg.id : null;
    if (!id || !this.#ownIds.has(id)) return;
    this.#ownIds.delete(id);
    const err = msg.error as { code?: number; message?: string } | undefined;
    if (id === this.#initId) {
      if (err) {
        // E.g. a turn in progress: retry a few times like the reference client.
        if (this.#initTries++ < 5) setTimeout(() => this.#initialize(), 2000);
        return;
      }
      this.#initTries = 0;
      const r = (msg.result ?? {}) as { slash_commands?: SlashCommand[] };
      this.#set({ slashCommands: Array.isArray(r.slash_commands) ? r.slash_commands : [] });
      return;
    }
    const steered = this.#steerIds.get(id);
    this.#steerIds.delete(id);
    if (err) {
      this.#promptIds.delete(id);
      const at = steered === undefined ? -1 : this.#snap.steering.indexOf(steered);
      if (at >= 0) {
        // The turn ended before the steer arrived: it runs as the next turn instead.
        this.#set({ steering: this.#snap.steering.filter((_, i) => i !== at) });
        this.prompt(steered!);
        return;
      }
      // (A steer moved to the queue when its turn ended needs nothing more.)
      if (steered === undefined) {
        const failure = turnFailureText(err);
        const turn = this.#snap.transcript.turns.at(-1);
        const last = turn?.blocks.at(-1);
        if (failure && turn && last?.kind === "notice" && last.text === "Step interrupted") {
          // The cause goes with the turn it interrupted, not in a line by the composer.
          turn.blocks.push({ kind: "notice", text: failure, tone: "error" });
          this.#set({ transcript: this.#snap.transcript });
        } else this.#set({ error: err.message ?? "Request failed" });
      }
      return;
    }
    if (this.#promptIds.delete(id)) {
      const status = (msg.result as { status?: string } | undefined)?.status;
      if (status === "cancelled" || status === "max_steps_reached") {
        const t = this.#snap.transcript;
        t.turns.at(-1)?.blocks.push({
          kind: "notice",
          text: status === "cancelled" ? "Cancelled" : "Stopped: the step limit was reached",
          tone: "warn",
        });
        this.#set({ transcript: t });
      }
    }
  }

  #drainQueue(): void {
    const [next, ...rest] = this.#snap.queue;
    if (next === undefined || this.#snap.busy) return;
    this.#set({ queue: rest, busy: true });
    this.#sendPrompt(next);
  }
}

/** JSON-RPC error codes of a turn that failed in a step (the wire server's `ErrorCodes`). */
const CHAT_PROVIDER_ERROR = -32003;
const AUTH_EXPIRED = -32004;

/**
 * What to show in the turn a prompt error interrupted: the model's error with what to do about
 * it; null for an error that is not a failed step (busy, not running…).
 */
export function turnFailureText(err: { code?: number; message?: string }): string | null {
  const message = (err.message ?? "").trim();
  if (err.code === AUTH_EXPIRED) return message || "The login expired: sign in again.";
  if (err.code !== CHAT_PROVIDER_ERROR) return null;
  const text = `Model error: ${message.replace(/\.$/, "") || "the provider failed"}.`;
  return /^401\b/.test(message)
    ? `${text} The provider refused the API key: check it under Settings → Providers and ` +
      "models, then send the message again."
    : text;
}

/** The text of a live `SteerInput` event, or null for any other frame. */
function steerText(msg: Record<string, unknown>): string | null {
  const params = msg.params as { type?: unknown; payload?: { user_input?: unknown } } | undefined;
  if (msg.method !== "event" || params?.type !== "SteerInput") return null;
  return userInputView(params.payload?.user_input).text;
}
