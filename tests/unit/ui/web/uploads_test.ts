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

/** A PNG header of the given size (enough for the size reader; the body is not decoded). */
function pngHeader(width: number, height: number): Uint8Array {
  const b = new Uint8Array(33);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(b.buffer).setUint32(16, width);
  new DataView(b.buffer).setUint32(20, height);
  return b;
}

Deno.test("uploaded images go into the prompt when the model takes images and they are not huge", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const small = await saveUpload(dir, "shot.png", pngHeader(800, 600));
    const huge = await saveUpload(dir, "poster.png", pngHeader(8000, 100));
    const names = [small.filename, huge.filename];
    const withImages = await foldUploads(dir, names, "see", { image: true, video: false });
    const images = withImages.filter((p) => p.type === "image_url");
    assertEquals(images.length, 1);
    assert(
      withImages.some((p) =>
        p.type === "text" && p.text === `<image path="${small.path}" content_type="image/png">`
      ),
    );
    const noImages = await foldUploads(dir, names, "see", { image: false, video: false });
    assertEquals(noImages.filter((p) => p.type === "image_url").length, 0);
    // both are still listed
    const list = noImages[0].type === "text" ? noImages[0].text : "";
    assert(list.includes(small.path) && list.includes(huge.path));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
