/**
 * `SessionHost.hold()`: while a config change or a restart holds a session, frames from its
 * sockets wait (none reaches the agent being replaced); a hold waits for the frames already being
 * handled; the frames go on, in order, once every hold is released.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import { Session } from "../../../../lib/session/session.ts";
import { SessionHost } from "../../../../lib/ui/web/server/session_host.ts";
import { SocketPeer } from "../../../../lib/ui/web/server/socket_peer.ts";
import type { KimiApp } from "../../../../lib/app/kimi_app.ts";

/** A peer whose socket records what the host sends it. */
function recordingPeer(): { peer: SocketPeer; sent: string[] } {
  const sent: string[] = [];
  const peer = new SocketPeer({
    readyState: 1,
    bufferedAmount: 0,
    send: (data) => sent.push(data),
    close: () => {},
  });
  return { peer, sent };
}

/** Let pending promise reactions and a macrotask run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

Deno.test("SessionHost.hold: frames wait for every hold, a hold waits for frames in flight", async () => {
  const root = await Deno.makeTempDir();
  try {
    const session = await Session.create({ shareDir: `${root}/share`, workDir: root });
    // The agent never builds: each frame gets the host's "not running" answer once handled,
    // and the first build can be kept pending to stand for a frame in flight.
    let builds = 0;
    let failFirstBuild!: () => void;
    let firstBuildStarted!: () => void;
    const building = new Promise<void>((r) => (firstBuildStarted = r));
    const host = new SessionHost(session, {
      buildApp: () => {
        builds++;
        if (builds === 1) {
          return new Promise<KimiApp>((_, reject) => {
            failFirstBuild = () => reject(new Error("no agent in this test"));
            firstBuildStarted();
          });
        }
        return Promise.reject(new Error("no agent in this test"));
      },
      closeApp: () => Promise.resolve(),
      nextSeq: (() => {
        let n = 0;
        return () => ++n;
      })(),
      onFirstPrompt: () => Promise.resolve(),
    });
    const { peer, sent } = recordingPeer();
    const answered = () => sent.filter((l) => l.includes("The session is not running")).length;

    // A frame in flight (its agent still building): a hold waits for it.
    const first = host.handleFrame(peer, '{"jsonrpc":"2.0","id":"a","method":"cancel"}');
    await building;
    let held = false;
    const holding = host.hold().then((release) => {
      held = true;
      return release;
    });
    await settle();
    assertEquals(held, false);
    failFirstBuild();
    await first;
    const release = await holding;
    assertEquals([held, answered()], [true, 1]);

    // Held: new frames wait, through a second hold released first.
    const release2 = await host.hold();
    const later = host.handleFrame(peer, '{"jsonrpc":"2.0","id":"b","method":"cancel"}');
    assertEquals(host.heldFrameCount, 1);
    await settle();
    assertEquals([host.heldFrameCount, answered()], [1, 1]);
    release2();
    await settle();
    assertEquals([host.heldFrameCount, answered()], [1, 1]);
    release();
    release(); // a second call changes nothing
    assertEquals(host.heldFrameCount, 0);
    await later;
    assertEquals(answered(), 2);
    // No hold left: frames go straight on.
    await host.handleFrame(peer, '{"jsonrpc":"2.0","id":"c","method":"cancel"}');
    assertEquals(answered(), 3);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
