import { assert, assertEquals } from "../../../helpers/assert.ts";
import {
  rotateToken,
  tokenPath,
  tokensEqual,
  TokenStore,
} from "../../../../lib/ui/web/server/token_store.ts";

Deno.test("TokenStore: created 0600 on first open, reused, replaced at once by a rotation", async () => {
  const share = await Deno.makeTempDir();
  try {
    const a = await TokenStore.open(share);
    const first = a.current();
    assertEquals(first.length, 43);
    assertEquals((await Deno.stat(tokenPath(share))).mode! & 0o777, 0o600);
    const again = await TokenStore.open(share);
    assertEquals(again.current(), first);
    const fresh = await rotateToken(share);
    assert(fresh !== first);
    assertEquals(a.current(), fresh);
    assert(a.accepts(fresh));
    assert(!a.accepts(first));
    assert(!a.accepts(""));
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});

Deno.test("TokenStore: --auth-token is saved; a replacement readable by others is ignored", async () => {
  const share = await Deno.makeTempDir();
  try {
    const s = await TokenStore.open(share, "my-fixed-token");
    assertEquals(s.current(), "my-fixed-token");
    assertEquals((await Deno.readTextFile(tokenPath(share))).trim(), "my-fixed-token");
    const tmp = `${share}/other`;
    await Deno.writeTextFile(tmp, "planted\n", { mode: 0o644 });
    await Deno.chmod(tmp, 0o644);
    await Deno.rename(tmp, tokenPath(share));
    assertEquals(s.current(), "my-fixed-token");
  } finally {
    await Deno.remove(share, { recursive: true });
  }
});

Deno.test("tokensEqual: equal strings only", () => {
  assert(tokensEqual("abc", "abc"));
  assert(!tokensEqual("abc", "abd"));
  assert(!tokensEqual("abc", "abcd"));
});
