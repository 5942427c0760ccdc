/**
 * ReadMediaFile: images and videos as data URLs wrapped in media tags, size hint, refusals.
 */
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { assertEquals } from "../../helpers/assert.ts";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { readMediaFileTool } from "../../../tools/read_media_file.ts";
import { briefOf } from "../../../lib/tooling/result.ts";

/** A 3x2 PNG header (enough for type sniffing and the size hint). */
const PNG = new Uint8Array([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  0,
  0,
  0,
  13,
  0x49,
  0x48,
  0x44,
  0x52,
  0,
  0,
  0,
  3,
  0,
  0,
  0,
  2,
  8,
  6,
  0,
  0,
  0,
]); // deno-fmt-ignore

Deno.test("ReadMediaFile loads an image as a wrapped data URL", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "media_" }));
  try {
    await Deno.writeFile(join(dir, "a&b.png"), PNG);
    const tool = (await readMediaFileTool(makeToolEnv({ workDir: dir, capabilities: ["image_in"] })))!;
    const rv = await runTool(tool, { path: "a&b.png" });
    const p = join(dir, "a&b.png");
    const url = `data:image/png;base64,${Buffer.from(PNG).toString("base64")}`;
    assertEquals(rv.is_error, false);
    assertEquals(rv.output, [
      { type: "text", text: `<image path="${join(dir, "a&amp;b.png")}">` },
      { type: "image_url", image_url: { url, id: null } },
      { type: "text", text: "</image>" },
    ]);
    assertEquals(
      rv.message.slice(0, rv.message.indexOf(")") + 2),
      `Loaded image file \`${p}\` (image/png, ${PNG.length} bytes, original size 3x2px).`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ReadMediaFile refusals", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "media_" }));
  try {
    await Deno.writeTextFile(join(dir, "t.txt"), "text");
    await Deno.writeFile(
      join(dir, "v.mp4"),
      new Uint8Array([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]),
    );
    await Deno.writeFile(join(dir, "empty.png"), new Uint8Array());
    const tool =
      (await readMediaFileTool(makeToolEnv({ workDir: dir, capabilities: ["image_in"] })))!;
    const text = await runTool(tool, { path: "t.txt" });
    assertEquals(
      [text.message, briefOf(text)],
      ["`t.txt` is a text file. Use ReadFile to read text files.", "Unsupported file type"],
    );
    const video = await runTool(tool, { path: "v.mp4" });
    assertEquals(
      [video.message, briefOf(video)],
      [
        "The current model does not support video input. Tell the user to use a model with video input capability.",
        "Unsupported media type",
      ],
    );
    const empty = await runTool(tool, { path: "empty.png" });
    assertEquals([empty.message, briefOf(empty)], [
      `\`${join(dir, "empty.png")}\` is empty.`,
      "Empty file",
    ]);
    const missing = await runTool(tool, { path: "nope.png" });
    assertEquals([missing.message, briefOf(missing)], [
      "`nope.png` does not exist.",
      "File not found",
    ]);
    const outside = await runTool(tool, { path: "../x.png" });
    assertEquals(briefOf(outside), "Invalid path");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
