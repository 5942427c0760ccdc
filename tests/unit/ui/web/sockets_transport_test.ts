import { assertEquals } from "../../../helpers/assert.ts";
import { SocketsTransport } from "../../../../lib/ui/web/server/sockets_transport.ts";

Deno.test("SocketsTransport: frames reach the server only while it receives; writes fan out", async () => {
  const out: string[] = [];
  const t = new SocketsTransport((line) => out.push(line));
  assertEquals(t.feed("early"), false);
  const got: (string | null)[] = [];
  const stop = new AbortController();
  const done = t.receive((l) => got.push(l), stop.signal);
  assertEquals(t.feed("a"), true);
  assertEquals(t.feed("b"), true);
  assertEquals(got, ["a", "b"]); // delivered at once, in order
  await t.write('{"x":1}\n{"y":2}');
  assertEquals(out, ['{"x":1}', '{"y":2}']);
  stop.abort();
  await done;
  assertEquals(t.feed("late"), false);
});
