/**
 * The hand-written MD5 that names work-dir session directories agrees with `node:crypto`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { md5Hex } from "../../../lib/session/md5.ts";
import { workDirKey } from "../../../lib/session/metadata.ts";
import { assertEquals } from "../../helpers/assert.ts";

const nodeMd5 = (s: string) => createHash("md5").update(s, "utf8").digest("hex");

Deno.test("md5: RFC 1321 test suite", () => {
  assertEquals(md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  assertEquals(md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  assertEquals(md5Hex("message digest"), "f96b697d7cb7938d525a2f31aaf161d0");
  assertEquals(
    md5Hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
    "57edf4a22be3c955ac49da2e2107b67a",
  );
});

Deno.test("md5: agrees with node:crypto at every length around the block boundaries, and on UTF-8", () => {
  for (let n = 0; n < 200; n++) {
    const s = "/home/user/project-".padEnd(n, "x").slice(0, n);
    assertEquals(md5Hex(s), nodeMd5(s), `length ${n}`);
  }
  for (const s of ["/tmp/日本語/プロジェクト", "/home/é/ñ", "/tmp/emoji-🦕", "a\u0000b"]) {
    assertEquals(md5Hex(s), nodeMd5(s));
  }
  assertEquals(workDirKey("/tmp/w"), nodeMd5("/tmp/w"));
});
