/**
 * One session served by `kimi web`: its agent (built through the composition root on first
 * use), the session's single {@link WireServer} — the same server as `kimi --wire`, on the
 * session's sockets as its transport ({@link SocketsTransport}: each socket's frames are fed to
 * it, its output goes to all of them) — the session status of
 * reference §A4/§A5, and the uploads folded into the next prompt. A session keeps running when
 * its last socket leaves; a socket attaching later gets the recorded history, then live output.
 *
 * @module
 */
import type { KimiApp } from "../../../app/kimi_app.ts";
import type { BackgroundTaskManager } from "../../../background/task_manager.ts";
import { log } from "../../../log.ts";
import { SessionLock } from "../../../session/lock.ts";
import type { Session } from "../../../session/session.ts";
import { WireFile } from "../../../wire/recorder.ts";
import { UserInputSchema } from "../../../wire/messages.ts";
import { serialize } from "../../../wire/jsonrpc.ts";
import { replayRecords } from "../../wire_server/replay.ts";
import { WireServer } from "../../wire_server/server.ts";
import { serveOn } from "../../wire_server/transport.ts";
import { SocketsTransport } from "./sockets_transport.ts";
import { type PeerSocket, SocketPeer } from "./socket_peer.ts";
import { foldUploads, pendingUploads } from "./uploads.ts";
import type { SessionStatus, SessionStatusState } from "./schemas.ts";

/** JSON-RPC error code of a prompt sent while the session is busy (reference §A4). */
export const BUSY_ERROR_CODE = -32000;
/** Message of that error. */
export const BUSY_MESSAGE = "Session is busy; wait for completion before sending a new prompt.";
/** Bytes of a running turn's output kept for sockets that join mid-turn. */
export const MAX_TURN_LOG_BYTES = 64 * 1024 * 1024;
/** How long a finished turn's log is kept (until `wire.jsonl` surely holds the turn). */
const TURN_LOG_LINGER_MS = 5000;
/** Close code and reason when a session goes away (deleted, server stopping). */
export const SESSION_GONE_CLOSE = { code: 1001, reason: "Session process exited" } as const;

/** What a host needs from the server that runs it. */
export interface SessionHostDeps {
  /**
   * Build the agent of a session (the composition root with the server's settings); `tasks`
   * are the session's background tasks from an earlier build (a restart keeps them).
   */
  buildApp(
    session: Session,
    opts: { resumed: boolean; tasks: BackgroundTaskManager | null },
  ): Promise<KimiApp>;
  /**
   * Tidy up an app being stopped (session-end hooks, MCP); `final`: the session is closed, so
   * its background tasks stop too (unless kept alive by the config).
   */
  closeApp(app: KimiApp, opts: { final: boolean }): Promise<void>;
  /** The next status sequence number (monotonic per server process). */
  nextSeq(): number;
  /** Called before the first prompt of a socket is forwarded (work dir `last_session_id`). */
  onFirstPrompt(session: Session): Promise<void>;
}

interface Running {
  app: KimiApp;
  server: WireServer;
  /** The session's sockets as the server's transport. */
  transport: SocketsTransport;
  /** Ends the server's reception. */
  stop: AbortController;
  lock: SessionLock;
  workerId: string;
}

/** A session of the web server. */
export class SessionHost {
  /** The session. */
  readonly session: Session;
  readonly #deps: SessionHostDeps;
  readonly #peers = new Set<SocketPeer>();
  readonly #prompted = new WeakSet<SocketPeer>();
  readonly #sentUploads = new Set<string>();
  #running: Running | null = null;
  #starting: Promise<Running> | null = null;
  #status: SessionStatus;
  #closed = false;
  /** The last `initialize` a client sent: replayed to a restarted server (no reconnect needed). */
  #lastInitialize: Record<string, unknown> | null = null;
  /** The session's background tasks: they outlive a restart of its agent. */
  #tasks: BackgroundTaskManager | null = null;
  /**
   * The running turn as its sockets got it (every `event` and `request` line since the prompt
   * started, and when it started), so a socket joining mid-turn gets the history recorded
   * before the turn, then exactly these lines, then live output: nothing twice, nothing lost.
   * Null when idle, or when the turn outgrew {@link MAX_TURN_LOG_BYTES} (then the joining
   * socket gets what `wire.jsonl` holds).
   */
  #turnLog: { startedAt: number; lines: string[]; bytes: number } | null = null;
  /** Holds on the socket frames (a restart, or a config change about to restart): see {@link hold}. */
  #holds = 0;
  /** Frames waiting for the holds to end. */
  #heldFrames: (() => void)[] = [];
  /** Frames being handled (past the holds, not yet given to the server). */
  #framesInFlight = 0;
  /** Holds waiting for the frames in flight. */
  #drainWaiters: (() => void)[] = [];

  /** A host for `session` (nothing runs until {@link ensureStarted}). */
  constructor(session: Session, deps: SessionHostDeps) {
    this.session = session;
    this.#deps = deps;
    this.#status = {
      session_id: session.id,
      state: "stopped",
      seq: 0,
      worker_id: null,
      reason: null,
      detail: null,
      updated_at: new Date().toISOString(),
    };
  }

  /** The current status. */
  get status(): SessionStatus {
    return this.#status;
  }

  /** Whether the agent is built and serving. */
  get isRunning(): boolean {
    return this.#running !== null;
  }

  /** Whether a turn (or replay) runs. */
  get busy(): boolean {
    return this.#running?.server.activity != null;
  }

  /** The running agent, if any. */
  get app(): KimiApp | null {
    return this.#running?.app ?? null;
  }

  /**
   * The session's background tasks: the running agent's, else the ones kept from an earlier
   * run, else a manager made by `make` (kept, so the agent built later gets the same one).
   */
  backgroundTasks(make: () => BackgroundTaskManager): BackgroundTaskManager {
    const running = this.#running?.app.tasks;
    if (running) return running;
    this.#tasks ??= make();
    return this.#tasks;
  }

  /** Number of attached sockets. */
  get socketCount(): number {
    return this.#peers.size;
  }

  #setStatus(state: SessionStatusState, reason: string | null, detail: string | null = null): void {
    const s = this.#status;
    if (s.state === state && s.reason === reason && s.detail === detail) return;
    this.#status = {
      session_id: this.session.id,
      state,
      seq: this.#deps.nextSeq(),
      worker_id: this.#running?.workerId ?? null,
      reason,
      detail,
      updated_at: new Date().toISOString(),
    };
    const msg = { jsonrpc: "2.0", method: "session_status", params: this.#status };
    const server = this.#running?.server;
    // in order with the server's own output when it runs
    if (server) server.sendNotice(msg);
    else this.#broadcast(serialize(msg));
  }

  /**
   * Drop the finished turn's log once `wire.jsonl` surely holds the turn (its output written,
   * then a few seconds for the recorder); a new turn's log is left alone.
   */
  #forgetTurnLog(server: WireServer): void {
    const log = this.#turnLog;
    server.flush().then(() =>
      setTimeout(() => {
        if (this.#turnLog === log) this.#turnLog = null;
      }, TURN_LOG_LINGER_MS)
    );
  }

  /** Send one serialized message to every attached socket. */
  #broadcast(line: string): void {
    for (const p of this.#peers) p.live(line);
  }

  /** The server's output: kept in the turn log while a turn runs, and sent to every socket. */
  #serverLine(line: string): void {
    const log = this.#turnLog;
    if (
      log && (line.startsWith('{"jsonrpc":"2.0","method":"event"') ||
        line.startsWith('{"jsonrpc":"2.0","method":"request"'))
    ) {
      log.bytes += line.length;
      if (log.bytes > MAX_TURN_LOG_BYTES) this.#turnLog = null;
      else log.lines.push(line);
    }
    this.#broadcast(line);
  }

  /** Build the agent and start its wire server (once; concurrent callers share the start). */
  ensureStarted(): Promise<Running> {
    if (this.#closed) return Promise.reject(new Error("The session was closed."));
    if (this.#running) return Promise.resolve(this.#running);
    this.#starting ??= this.#start().finally(() => (this.#starting = null));
    return this.#starting;
  }

  async #start(): Promise<Running> {
    const lock = await SessionLock.acquire(this.session.dir, { sessionId: this.session.id });
    let app: KimiApp;
    try {
      // the reference creates a missing work dir (stat first: mkdir needs write access)
      const present = await Deno.stat(this.session.workDir).then(() => true, () => false);
      if (!present) await Deno.mkdir(this.session.workDir, { recursive: true });
      const resumed = !(await this.session.isEmpty());
      app = await this.#deps.buildApp(this.session, { resumed, tasks: this.#tasks });
      this.#tasks = app.tasks;
    } catch (err) {
      await lock.release();
      throw err;
    }
    const transport = new SocketsTransport((line) => this.#serverLine(line));
    const server = new WireServer(app, {
      write: (text) => transport.write(text),
      onActivity: (kind) => {
        if (kind === "prompt") {
          this.#turnLog = { startedAt: Date.now() / 1000, lines: [], bytes: 0 };
          this.#setStatus("busy", "prompt");
        } else if (kind === null && this.#status.state === "busy") {
          this.#setStatus("idle", "prompt_complete");
          this.#forgetTurnLog(server);
        }
      },
    });
    server.start();
    const stop = new AbortController();
    serveOn(server, transport, stop.signal);
    const running: Running = {
      app,
      server,
      transport,
      stop,
      lock,
      workerId: crypto.randomUUID(),
    };
    this.#running = running;
    // a restart reports its own end (with how long it took)
    if (this.#status.state !== "restarting") this.#setStatus("idle", "start");
    return running;
  }

  /**
   * Attach a socket: replay the recorded history (live output held meanwhile), send
   * `history_complete`, start the agent if needed, then the status snapshot.
   */
  async attach(ws: PeerSocket): Promise<SocketPeer> {
    const peer = new SocketPeer(ws);
    // from here on live output is held for this socket; the running turn so far is copied in
    // the same step, so the two meet exactly
    this.#peers.add(peer);
    const turn = this.#turnLog ? { ...this.#turnLog, lines: [...this.#turnLog.lines] } : null;
    const wireFile = this.#running?.app.wireFile ?? new WireFile(this.session.wireFile);
    const abort = new AbortController();
    const flush = async () => {
      if (!(await peer.drained())) abort.abort();
    };
    try {
      await replayRecords(wireFile, {
        client: { version: null, name: null },
        send: (msg) => peer.direct(serialize(msg)),
        flush,
        signal: abort.signal,
        before: turn?.startedAt,
      });
      for (let i = 0; turn && i < turn.lines.length && !abort.signal.aborted; i++) {
        peer.direct(turn.lines[i]);
        if (i % 64 === 63) await flush();
      }
    } catch (err) {
      log("WARNING", "web", `replay of ${this.session.id} failed: ${(err as Error).message}`);
    }
    peer.direct(serialize({ jsonrpc: "2.0", method: "history_complete", id: crypto.randomUUID() }));
    peer.release();
    const seqBefore = this.#status.seq;
    try {
      await this.ensureStarted();
      // a start made now was broadcast to this socket already
      if (this.#status.seq === seqBefore) {
        peer.direct(serialize({ jsonrpc: "2.0", method: "session_status", params: this.#status }));
      }
    } catch (err) {
      const detail = errorText(err);
      log("WARNING", "web", `session ${this.session.id} could not start: ${detail}`);
      this.#status = {
        ...this.#status,
        state: "error",
        seq: this.#deps.nextSeq(),
        reason: "initialization_failed",
        detail,
        updated_at: new Date().toISOString(),
      };
      peer.direct(serialize({ jsonrpc: "2.0", method: "session_status", params: this.#status }));
      this.detach(peer);
      peer.close(1011, "Session failed to start");
    }
    return peer;
  }

  /** Detach a socket (the session keeps running). */
  detach(peer: SocketPeer): void {
    this.#peers.delete(peer);
  }

  /**
   * Handle one frame of a socket: a prompt while busy is refused, a cancel with nothing
   * running answered at once, a prompt gets the pending uploads; everything goes to the
   * session's wire server.
   */
  async handleFrame(peer: SocketPeer, text: string): Promise<void> {
    while (this.#holds > 0) await new Promise<void>((r) => this.#heldFrames.push(r));
    this.#framesInFlight++;
    try {
      await this.#handleFrame(peer, text);
    } finally {
      if (--this.#framesInFlight === 0) { for (const wake of this.#drainWaiters.splice(0)) wake(); }
    }
  }

  /**
   * Hold the sockets' frames: frames arriving from now on wait until every hold is released, and
   * the returned promise resolves once the frames already being handled have reached the server
   * (so {@link busy} then tells whether a turn runs, and no prompt slips in before a restart
   * that it would not survive). Release by calling the function it resolves to (once).
   */
  async hold(): Promise<() => void> {
    this.#holds++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0) { for (const wake of this.#heldFrames.splice(0)) wake(); }
    };
    while (this.#framesInFlight > 0) {
      await new Promise<void>((r) => this.#drainWaiters.push(r));
    }
    return release;
  }

  /** Frames waiting for the holds to end (a restart or a config change in progress). */
  get heldFrameCount(): number {
    return this.#heldFrames.length;
  }

  async #handleFrame(peer: SocketPeer, text: string): Promise<void> {
    const running = this.#running ?? await this.ensureStarted().catch(() => null);
    if (!running) {
      peer.direct(serialize({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32603, message: "The session is not running." },
      }));
      return;
    }
    let msg: Record<string, unknown> | null = null;
    try {
      const parsed = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) msg = parsed;
    } catch {
      // the wire server answers malformed JSON
    }
    const method = msg?.method;
    const id = msg?.id;
    if (msg && method === "prompt" && (typeof id === "string" || typeof id === "number")) {
      if (running.server.activity !== null) {
        peer.direct(serialize({
          jsonrpc: "2.0",
          id,
          error: { code: BUSY_ERROR_CODE, message: BUSY_MESSAGE },
        }));
        return;
      }
      if (!this.#prompted.has(peer)) {
        this.#prompted.add(peer);
        await this.#deps.onFirstPrompt(this.session);
      }
      text = await this.#withUploads(running, msg, text);
      // a prompt racing another socket's while the uploads were read
      if (running.server.activity !== null) {
        peer.direct(serialize({
          jsonrpc: "2.0",
          id,
          error: { code: BUSY_ERROR_CODE, message: BUSY_MESSAGE },
        }));
        return;
      }
    } else if (msg && method === "initialize") {
      this.#lastInitialize = msg;
    } else if (msg && method === "cancel" && running.server.activity === null && id != null) {
      peer.direct(serialize({ jsonrpc: "2.0", id, result: {} }));
      return;
    }
    if (!running.transport.feed(text)) {
      peer.direct(serialize({
        jsonrpc: "2.0",
        id: typeof id === "string" || typeof id === "number" ? id : null,
        error: { code: -32603, message: "The session stopped; send the message again." },
      }));
    }
  }

  async #withUploads(
    running: Running,
    msg: Record<string, unknown>,
    text: string,
  ): Promise<string> {
    const names = await pendingUploads(this.session.dir, this.#sentUploads);
    if (names.length === 0) return text;
    const params = msg.params as { user_input?: unknown } | undefined;
    const input = UserInputSchema.safeParse(params?.user_input);
    if (!input.success) return text; // the wire server reports the bad params
    const caps = running.app.llm?.capabilities ?? new Set<string>();
    const folded = await foldUploads(this.session.dir, names, input.data, {
      image: caps.has("image_in"),
      video: caps.has("video_in"),
    });
    for (const n of names) this.#sentUploads.add(n);
    return JSON.stringify({ ...msg, params: { ...params, user_input: folded } });
  }

  /** Stop the agent (running turn cancelled, records closed); sockets stay attached. */
  async stop(reason = "stop", final = false): Promise<void> {
    if (this.#starting) await this.#starting.catch(() => {});
    const running = this.#running;
    if (!running) return;
    running.stop.abort(); // no more frames reach this server
    this.#turnLog = null;
    try {
      await running.server.shutdown();
    } catch (err) {
      log("WARNING", "web", `wire server shutdown failed: ${errorText(err)}`);
    }
    this.#running = null;
    try {
      await this.#deps.closeApp(running.app, { final });
    } finally {
      await running.lock.release();
    }
    if (this.#status.state !== "restarting") this.#setStatus("stopped", reason);
  }

  /** Restart the agent (config change); tells every socket how long it took. */
  async restart(reason: string): Promise<void> {
    const t0 = performance.now();
    // frames sent meanwhile go to the new agent, not to the one being stopped
    const release = await this.hold();
    try {
      await this.#restart(reason, t0);
    } finally {
      release();
    }
  }

  async #restart(reason: string, t0: number): Promise<void> {
    this.#setStatus("restarting", reason);
    try {
      await this.stop(reason);
      await this.ensureStarted();
    } catch (err) {
      this.#setStatus("error", "restart_failed", errorText(err));
      throw err;
    }
    const ms = Math.round(performance.now() - t0);
    if (this.#lastInitialize && this.#running) {
      // the clients' settings (capabilities, external tools, hooks) carry over; the reply goes
      // to every socket under an id no client sent, so clients ignore it
      const id = `restart-initialize-${crypto.randomUUID()}`;
      this.#running.transport.feed(JSON.stringify({ ...this.#lastInitialize, id }));
    }
    this.#setStatus("idle", reason, `restart_ms=${ms}`);
    const label = reason === "config_update"
      ? "Session restarted due to config update"
      : "Session restarted";
    this.#running?.server.sendNotice({
      jsonrpc: "2.0",
      method: "event",
      params: {
        type: "SessionNotice",
        payload: { text: `${label} · ${ms}ms`, kind: "restart", reason, restart_ms: ms },
      },
    });
  }

  /** Stop and close every socket (`1001 Session process exited`); the host is done. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.stop("stop", true);
    for (const p of this.#peers) p.close(SESSION_GONE_CLOSE.code, SESSION_GONE_CLOSE.reason);
    this.#peers.clear();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
