import { assertEquals, assertRejects } from "../../helpers/assert.ts";
import {
  dataUrl,
  MAX_MEDIA_BYTES,
  mediaTypeOf,
  PromptAttachments,
} from "../../../lib/ui/shell/attachments.ts";

Deno.test("attachments: small pastes stay, large ones fold and expand on send", () => {
  const a = new PromptAttachments();
  assertEquals(a.foldPaste("one\ntwo"), "one\ntwo");
  const big = Array.from({ length: 240 }, (_, i) => `l${i}`).join("\n");
  assertEquals(a.foldPaste(big), "[pasted 240 lines]");
  assertEquals(a.foldPaste(big), "[pasted 240 lines #2]");
  assertEquals(a.foldPaste("x".repeat(1500)), "[pasted 1500 characters]");
  const sent = a.expandPastes("see [pasted 240 lines] and [pasted 240 lines #2]!");
  assertEquals(sent, `see ${big} and ${big}!`);
  a.clearUnused("");
  assertEquals(a.expandPastes("[pasted 240 lines]"), "[pasted 240 lines]");
});

Deno.test("attachments: plain text stays a string; images become parts after their reference", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    await Deno.writeFile(`${dir}/a b.png`, png);
    await Deno.writeFile(`${dir}/clip.mp4`, new Uint8Array([0, 0, 0, 1]));
    const a = new PromptAttachments();
    assertEquals(
      await a.toUserInput("just @notes.txt and @missing.png", dir),
      "just @notes.txt and @missing.png",
    );
    const ph = a.addImage("image/webp", new Uint8Array([1, 2]));
    assertEquals(ph, "[image #1]");
    const input = await a.toUserInput(`x ${ph} y @"a b.png" z @clip.mp4`, dir);
    assertEquals(input, [
      { type: "text", text: "x [image #1]" },
      { type: "image_url", image_url: { url: "data:image/webp;base64,AQI=", id: null } },
      { type: "text", text: ' y @"a b.png"' },
      { type: "image_url", image_url: { url: dataUrl("image/png", png), id: null } },
      { type: "text", text: " z @clip.mp4" },
      { type: "video_url", video_url: { url: "data:video/mp4;base64,AAAAAQ==", id: null } },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("attachments: a too large file is refused with its size", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const f = await Deno.open(`${dir}/huge.png`, { create: true, write: true });
    await f.truncate(MAX_MEDIA_BYTES + 1);
    f.close();
    await assertRejects(
      () => new PromptAttachments().toUserInput("look @huge.png", dir),
      { name: "AttachmentError", message: /too large to attach \(20\.0 MB; at most 20 MB\)/ },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("attachments: media types by extension", () => {
  assertEquals(mediaTypeOf("a.JPG"), { kind: "image", mime: "image/jpeg" });
  assertEquals(mediaTypeOf("a.webm"), { kind: "video", mime: "video/webm" });
  assertEquals(mediaTypeOf("a.txt"), null);
});
