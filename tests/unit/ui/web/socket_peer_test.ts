import { assert, assertEquals } from "../../../helpers/assert.ts";
import {
  MAX_SOCKET_BUFFER_BYTES,
  type PeerSocket,
  SLOW_CLIENT_CLOSE,
  SocketPeer,
} from "../../../../lib/ui/web/server/socket_peer.ts";

class FakeSocket implements PeerSocket {
  readyState = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  closedWith: [number | undefined, string | undefined] | null = null;
  /** Bytes that never leave (a client that stopped reading). */
  stuck = false;
  send(data: string): void {
    this.sent.push(data);
    if (this.stuck) this.bufferedAmount += data.length;
  }
  close(code?: number, reason?: string): void {
    this.closedWith = [code, reason];
    this.readyState = 3;
  }
}

Deno.test("SocketPeer: live output is held during replay and released after it, in order", () => {
  const ws = new FakeSocket();
  const p = new SocketPeer(ws);
  p.live("live-1");
  p.direct("replay-1");
  p.live("live-2");
  assertEquals(ws.sent, ["replay-1"]);
  p.release();
  p.live("live-3");
  assertEquals(ws.sent, ["replay-1", "live-1", "live-2", "live-3"]);
});

Deno.test("SocketPeer: a client that stops reading is disconnected, not buffered forever", () => {
  const ws = new FakeSocket();
  ws.stuck = true;
  const p = new SocketPeer(ws);
  p.release();
  const chunk = "x".repeat(1024 * 1024);
  for (let i = 0; i < 40 && !p.closed; i++) p.live(chunk);
  assert(p.closed);
  assertEquals(ws.closedWith![0], SLOW_CLIENT_CLOSE);
  assert(ws.bufferedAmount <= MAX_SOCKET_BUFFER_BYTES + chunk.length);
  const n = ws.sent.length;
  p.live("after");
  assertEquals(ws.sent.length, n);
});
