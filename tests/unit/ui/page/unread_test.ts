/**
 * Unread dots of the web page's session list: a session met for the first time is seen; one
 * whose `last_updated` grew while another was open, or that went busy → idle, has new
 * activity; opening it clears that; the seen times are capped.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import {
  type ActivitySession,
  markSeen,
  MAX_SEEN,
  trackActivity,
} from "../../../../lib/ui/web/page/unread.ts";

const at = (ms: number) => new Date(ms).toISOString();
const s = (id: string, ms: number, state = "idle"): ActivitySession => ({
  session_id: id,
  last_updated: at(ms),
  status: { state },
});

Deno.test("unread: first sight is seen; growth while another session is open is new activity", () => {
  const none = new Set<string>();
  let r = trackActivity({
    seen: {},
    sessions: [s("a", 1000), s("b", 2000)],
    current: "a",
    busy: none,
  });
  assertEquals(r.seen, { a: 1000, b: 2000 });
  assertEquals([...r.unread], []);
  // b grew while a is open; a grew too (it is open: seen)
  r = trackActivity({
    seen: r.seen,
    sessions: [s("a", 1500), s("b", 2500)],
    current: "a",
    busy: none,
  });
  assertEquals([...r.unread], ["b"]);
  assertEquals(r.seen, { a: 1500, b: 2000 });
  // nothing open: still unread
  r = trackActivity({
    seen: r.seen,
    sessions: [s("a", 1500), s("b", 2500)],
    current: null,
    busy: none,
  });
  assertEquals([...r.unread], ["b"]);
  // opening b clears it, and it stays cleared after leaving
  r = trackActivity({
    seen: r.seen,
    sessions: [s("a", 1500), s("b", 2500)],
    current: "b",
    busy: none,
  });
  assertEquals([...r.unread], []);
  r = trackActivity({
    seen: r.seen,
    sessions: [s("a", 1500), s("b", 2500)],
    current: "a",
    busy: none,
  });
  assertEquals([...r.unread], []);
  assertEquals(r.seen, { a: 1500, b: 2500 });
});

Deno.test("unread: busy → idle without a newer time still counts; a just-left session does not", () => {
  const seen = { a: 1000, b: 2000 };
  let r = trackActivity({
    seen,
    sessions: [s("a", 1000), s("b", 2000, "busy")],
    current: "a",
    busy: new Set(),
  });
  assertEquals([...r.busy], ["b"]);
  assertEquals([...r.unread], []);
  assertEquals(r.seen, seen); // unchanged: the same object
  r = trackActivity({
    seen: r.seen,
    sessions: [s("a", 1000), s("b", 2000)],
    current: "a",
    busy: r.busy,
  });
  assertEquals([...r.unread], ["b"]);
  assertEquals([...r.busy], []);
  // the open one going idle is no news
  r = trackActivity({ seen: {}, sessions: [s("a", 1000)], current: "a", busy: new Set(["a"]) });
  assertEquals([...r.unread], []);
  // `open` (just left, being fetched) is treated like the current session
  r = trackActivity({
    seen: { a: 1000, b: 2000 },
    sessions: [s("a", 1800), s("b", 2000)],
    current: "b",
    open: new Set(["a"]),
    busy: new Set(),
  });
  assertEquals([...r.unread], []);
  assertEquals(r.seen.a, 1800);
});

Deno.test("unread: bad times are skipped; markSeen only moves forward; the map is capped", () => {
  const r = trackActivity({
    seen: {},
    sessions: [{ session_id: "x", last_updated: "not a date", status: null }],
    current: null,
    busy: new Set(),
  });
  assertEquals(r.seen, {});
  assertEquals(markSeen({ a: 5000 }, s("a", 4000)), { a: 5000 });
  assertEquals(markSeen({ a: 5000 }, s("a", 6000)), { a: 6000 });
  const many = Array.from({ length: MAX_SEEN + 5 }, (_, i) => s(`id${i}`, i + 1));
  const capped = trackActivity({ seen: {}, sessions: many, current: null, busy: new Set() }).seen;
  assertEquals(Object.keys(capped).length, MAX_SEEN);
  // the least recently updated are the ones forgotten
  assertEquals("id0" in capped, false);
  assertEquals(capped[`id${MAX_SEEN + 4}`], MAX_SEEN + 5);
});
