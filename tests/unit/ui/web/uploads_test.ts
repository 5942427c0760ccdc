import { assert, assertEquals } from "../../../helpers/assert.ts";
import {
  FILES_ONLY_MESSAGE,
  foldUploads,
  pendingUploads,
  safeExtension,
  sanitizeStem,
  saveUpload,
  uploadName,
} from "../../../../lib/ui/web/server/uploads.ts";

Deno.test("upload names: path parts dropped, odd characters removed, unique suffix", () => {
  assertEquals(sanitizeStem("../../etc/pass wd!.txt"), "pass wd");
  assertEquals(sanitizeStem("..\\..\\x.sh"), "x");
  assertEquals(sanitizeStem(".env"), "env"); // never a dot file
  assertEquals(sanitizeStem("€€€.png"), "unnamed");
  assertEquals(safeExtension("a.TXT"), ".txt");
  assertEquals(safeExtension("a.t/x"), "");
  assertEquals(safeExtension("a.$(rm)"), "");
  assert(/^report_[0-9a-f]{6}\.pdf$/.test(uploadName("report.pdf")));
});

Deno.test("uploads fold into the prompt once: list, text documents, the user's text", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const a = await saveUpload(dir, "notes.md", new TextEncoder().encode("# hi"));
    const b = await saveUpload(dir, "blob.bin", new Uint8Array([0, 1, 2]));
    assertEquals((await Deno.stat(a.path)).mode! & 0o777, 0o600);
    const sent = new Set<string>();
    const names = await pendingUploads(dir, sent);
    assertEquals(names.sort(), [a.filename, b.filename].sort());
    const parts = await foldUploads(dir, names, "look", { image: false, video: false });
    assert(parts[0].type === "text" && parts[0].text.startsWith("<uploaded_files>\n1. "));
    const texts = parts.map((p) => (p.type === "text" ? p.text : ""));
    assert(texts.some((t) => t.includes('content_type="text/plain">') && t.includes("# hi")));
    assertEquals(texts.at(-1), "look");
    const only = await foldUploads(dir, names, FILES_ONLY_MESSAGE, { image: false, video: false });
    assert(!only.some((p) => p.type === "text" && p.text === FILES_ONLY_MESSAGE));
    for (const n of names) sent.add(n);
    assertEquals(await pendingUploads(dir, sent), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
