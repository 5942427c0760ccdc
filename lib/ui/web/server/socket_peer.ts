/**
 * One browser tab's WebSocket on a session: a bounded outbound buffer (a client that stops
 * reading is disconnected, never buffered without limit), and replay mode (live output is held
 * while the session's history is being sent, then released in order).
 *
 * @module
 */
import { log } from "../../../log.ts";

/** Bytes queued in a socket beyond which a client counts as not reading. */
export const MAX_SOCKET_BUFFER_BYTES = 16 * 1024 * 1024;
/** Live lines held for a socket during its replay, at most. */
export const MAX_HELD_LINES = 100_000;
/** Close code for a client that does not keep up (sent before the socket is dropped). */
export const SLOW_CLIENT_CLOSE = 4008;

/** The minimal socket surface a peer needs (a Deno WebSocket satisfies it). */
export interface PeerSocket {
  /** `WebSocket.OPEN` when writable. */
  readonly readyState: number;
  /** Bytes queued but not yet sent. */
  readonly bufferedAmount: number;
  /** Send one text frame. */
  send(data: string): void;
  /** Close with a code and reason. */
  close(code?: number, reason?: string): void;
}

/** A socket attached to a session. */
export class SocketPeer {
  readonly #ws: PeerSocket;
  #held: string[] | null = [];
  #closed = false;

  /** Wrap an accepted socket (it starts in replay mode: live output is held). */
  constructor(ws: PeerSocket) {
    this.#ws = ws;
  }

  /** Whether the socket was closed (by either side). */
  get closed(): boolean {
    return this.#closed || this.#ws.readyState > 1;
  }

  /** Send live output: held during replay, else sent now. */
  live(line: string): void {
    if (this.#held !== null) {
      if (this.#held.length >= MAX_HELD_LINES) {
        this.close(SLOW_CLIENT_CLOSE, "Too much output while replaying; reconnect");
        return;
      }
      this.#held.push(line);
      return;
    }
    this.direct(line);
  }

  /** Send a frame now (replay, replies meant for this socket only). */
  direct(line: string): void {
    if (this.closed) return;
    try {
      this.#ws.send(line);
    } catch (err) {
      log("INFO", "web", `socket send failed: ${(err as Error).message}`);
      this.close(1011, "Send failed");
      return;
    }
    if (this.#ws.bufferedAmount > MAX_SOCKET_BUFFER_BYTES) {
      log("WARNING", "web", "a client stopped reading its socket: disconnected");
      this.close(SLOW_CLIENT_CLOSE, "Client is not reading; reconnect to resume");
    }
  }

  /** Wait until the socket's queue is below half its limit (replay pacing); false if closed. */
  async drained(): Promise<boolean> {
    while (!this.closed && this.#ws.bufferedAmount > MAX_SOCKET_BUFFER_BYTES / 2) {
      await new Promise((r) => setTimeout(r, 10));
    }
    return !this.closed;
  }

  /** End replay mode: send the held live output, then send live output directly. */
  release(): void {
    const held = this.#held ?? [];
    this.#held = null;
    for (const line of held) this.direct(line);
  }

  /** Close the socket (idempotent). */
  close(code = 1000, reason = ""): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#held = null;
    try {
      this.#ws.close(code, reason);
    } catch {
      // already closing
    }
  }
}
