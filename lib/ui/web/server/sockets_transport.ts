/**
 * The WebSockets of one session as a wire transport (the second transport of the wire server,
 * after stdio): frames the session host lets through are delivered to the server in order,
 * and everything the server writes goes to every socket attached to the session.
 *
 * @module
 */
import type { WireTransport } from "../../wire_server/transport.ts";

/** The sockets of a session, as one line transport. */
export class SocketsTransport implements WireTransport {
  readonly #broadcast: (line: string) => void;
  #deliver: ((line: string | null) => void) | null = null;

  /** `broadcast` sends one serialized message to every attached socket. */
  constructor(broadcast: (line: string) => void) {
    this.#broadcast = broadcast;
  }

  /** Take inbound lines until `signal` aborts (the session's server stops). */
  receive(deliver: (line: string | null) => void, signal: AbortSignal): Promise<void> {
    this.#deliver = deliver;
    return new Promise((resolve) => {
      const end = () => {
        this.#deliver = null;
        resolve();
      };
      if (signal.aborted) end();
      else signal.addEventListener("abort", end, { once: true });
    });
  }

  /** Hand one client frame to the server now; false when the server is not receiving. */
  feed(line: string): boolean {
    if (!this.#deliver) return false;
    this.#deliver(line);
    return true;
  }

  /** Send the server's lines (joined by "\n") to every socket, one frame each. */
  write(text: string): Promise<void> {
    for (const line of text.split("\n")) if (line) this.#broadcast(line);
    return Promise.resolve();
  }
}
