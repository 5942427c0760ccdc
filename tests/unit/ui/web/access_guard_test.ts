import { assert, assertEquals } from "../../../helpers/assert.ts";
import {
  AUTH_BAN_MS,
  AuthFailures,
  hostAllowed,
  isLanAddress,
  MAX_AUTH_FAILURES,
  originAllowed,
  parseAllowedOrigins,
  requestToken,
} from "../../../../lib/ui/web/server/access_guard.ts";

Deno.test("isLanAddress: private, loopback and link-local pass; public and junk are refused", () => {
  for (
    const a of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.9",
      "169.254.3.4",
      "::1",
      "fe80::1",
      "fd12:3456::1",
      "::ffff:192.168.0.2",
      "[::1]",
    ]
  ) assert(isLanAddress(a), a);
  for (
    const a of [
      "8.8.8.8",
      "172.32.0.1",
      "2001:4860::8888",
      "::ffff:8.8.8.8",
      "not-an-ip",
      "",
      "999.1.1.1",
      "192.168.1",
    ]
  ) assert(!isLanAddress(a), a);
});

Deno.test("origins: the list is trimmed and compared without a trailing slash; * allows any", () => {
  assertEquals(parseAllowedOrigins(" http://a:1/ ,, http://b "), ["http://a:1", "http://b"]);
  assert(originAllowed("http://a:1/", ["http://a:1"]));
  assert(!originAllowed("http://a:2", ["http://a:1"]));
  assert(originAllowed("http://evil", ["*"]));
});

Deno.test("hostAllowed: loopback names and IP literals pass; another name does not", () => {
  for (const h of ["localhost:5494", "127.0.0.1:1", "[::1]:80", "app.localhost", "10.0.0.2:9"]) {
    assert(hostAllowed(h, "127.0.0.1"), h);
  }
  assert(!hostAllowed("evil.example", "127.0.0.1"));
  assert(!hostAllowed("evil.example:5494", "127.0.0.1"));
  assert(hostAllowed(null, "127.0.0.1"));
});

Deno.test("requestToken: Bearer in any case; the query only when allowed", () => {
  const req = (url: string, auth?: string) =>
    new Request(url, auth ? { headers: { authorization: auth } } : undefined);
  assertEquals(requestToken(req("http://x/", "Bearer abc"), { query: false }), "abc");
  assertEquals(requestToken(req("http://x/", "bearer  abc "), { query: false }), "abc");
  assertEquals(requestToken(req("http://x/", "Basic abc"), { query: false }), null);
  assertEquals(requestToken(req("http://x/?token=q"), { query: false }), null);
  assertEquals(requestToken(req("http://x/?token=q"), { query: true }), "q");
});

Deno.test("AuthFailures: the tenth failure in a minute bans the address for a minute", () => {
  let now = 1_000_000;
  const f = new AuthFailures(() => now);
  for (let i = 1; i < MAX_AUTH_FAILURES; i++) assertEquals(f.fail("1.2.3.4"), false);
  assertEquals(f.isBanned("1.2.3.4"), false);
  assertEquals(f.fail("1.2.3.4"), true);
  assert(f.isBanned("1.2.3.4"));
  assert(!f.isBanned("5.6.7.8"));
  now += AUTH_BAN_MS - 1;
  assert(f.isBanned("1.2.3.4"));
  now += 1;
  assert(!f.isBanned("1.2.3.4"));
  // failures older than the window do not add up
  for (let i = 0; i < MAX_AUTH_FAILURES - 1; i++) f.fail("9.9.9.9");
  now += AUTH_BAN_MS;
  assertEquals(f.fail("9.9.9.9"), false);
});
