/**
 * ReadMediaFile: give the model an image or video file as a data URL, wrapped in
 * `<image path="...">`/`<video path="...">` tags. Offered only to models with image or video
 * input.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset, renderTemplate } from "../lib/assets/mod.ts";
import type { ContentPart } from "../lib/llm/message.ts";
import type { FileType } from "../lib/tooling/file_type.ts";
import { imageSize } from "../lib/tooling/image_size.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory, ToolReturnValue } from "../lib/tooling/tool.ts";
import { type FilePin, openPinned } from "../lib/fs/real_path.ts";
import { inspectReadFile, readInvocation } from "../lib/tooling/read_target.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Largest media file accepted, in MiB. */
export const MAX_MEDIA_MEGABYTES = 100;

/** ReadMediaFile parameters. */
export const readMediaFileParamsSchema = lazyValue(() =>
  z.object({
    path: z.string().describe(
      "Path of the image or video to read. Relative paths are resolved against the working " +
        "directory; files outside it need an absolute path.",
    ),
  })
);
/** ReadMediaFile parameters. */
export type ReadMediaFileParams = z.infer<ReturnType<typeof readMediaFileParamsSchema>>;

function escapeAttr(value: string): string {
  return value.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&#x27;");
}

/** Wrap a media part in `<tag path="...">` ... `</tag>` text parts. */
export function wrapMediaPart(part: ContentPart, tag: string, path: string): ContentPart[] {
  return [
    { type: "text", text: `<${tag} path="${escapeAttr(path)}">` },
    part,
    { type: "text", text: `</${tag}>` },
  ];
}

/** Read an open file to its end (`size` is the expected length, a hint). */
async function readAll(file: Deno.FsFile, size: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const buf = new Uint8Array(Math.max(64 << 10, Math.min(size + 1, 8 << 20)));
  while (true) {
    const n = await file.read(buf);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
    total += n;
  }
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/** Builds ReadMediaFile, or `null` when the model takes neither images nor videos. */
export const readMediaFileTool: ToolFactory = (env) => {
  const caps = env.modelCapabilities;
  if (!caps.has("image_in") && !caps.has("video_in")) return null;
  const kinds = caps.has("image_in") && caps.has("video_in")
    ? "images and videos"
    : caps.has("image_in")
    ? "images"
    : "videos";
  const tool: Tool<ReadMediaFileParams> = {
    name: "ReadMediaFile",
    description: renderTemplate(readAsset("tools/read_media_file.md"), {
      MEDIA_KINDS: kinds,
      MAX_MEDIA_MEGABYTES: String(MAX_MEDIA_MEGABYTES),
    }),
    get parameters() {
      return readMediaFileParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.ReadMediaFile,
    isRoot: env.isRoot,
    resolve: (params) =>
      readInvocation(params.path, env, (p, pin) => readMedia(env, p, params, pin)),
  };
  return tool;
};

/** Check the media file at the checked path `p` against the model, then load it. */
async function readMedia(
  env: ToolEnv,
  p: string,
  params: ReadMediaFileParams,
  pin: FilePin | null,
): Promise<ToolReturnValue> {
  const kind = await inspectReadFile(params.path, p, pin);
  if (!kind.ok) return kind.error;
  const type = kind.type;
  if (type.kind === "text") {
    return toolError({
      message: `\`${params.path}\` is a text file. Use ReadFile to read text files.`,
      brief: "Unsupported file type",
    });
  }
  if (type.kind === "binary") {
    return toolError({
      message: `\`${params.path}\` seems not readable as an image or video file. Inspect ` +
        "it with shell commands, a script or an MCP tool instead.",
      brief: "File not readable",
    });
  }
  const needed = type.kind === "image" ? "image_in" : "video_in";
  if (!env.modelCapabilities.has(needed)) {
    return toolError({
      message: `The current model does not support ${type.kind} input. Tell the user to use ` +
        `a model with ${type.kind} input capability.`,
      brief: "Unsupported media type",
    });
  }
  return await loadMedia(p, type, pin);
}

/** The file as a data URL part, within the size limit. */
async function loadMedia(p: string, type: FileType, pin: FilePin | null): Promise<ToolReturnValue> {
  using file = await openPinned(p, pin);
  const size = (await file.stat()).size;
  if (size === 0) return toolError({ message: `\`${p}\` is empty.`, brief: "Empty file" });
  if (size > MAX_MEDIA_MEGABYTES * 1024 * 1024) {
    return toolError({
      message: `\`${p}\` is ${size} bytes, which exceeds the max ${MAX_MEDIA_MEGABYTES}MB ` +
        "bytes for media files.",
      brief: "File too large",
    });
  }
  const data = await readAll(file, size);
  const url = `data:${type.mimeType};base64,${Buffer.from(data).toString("base64")}`;
  let output: ContentPart[];
  let sizeHint = "";
  if (type.kind === "image") {
    output = wrapMediaPart({ type: "image_url", image_url: { url, id: null } }, "image", p);
    const dims = imageSize(data);
    if (dims) sizeHint = `, original size ${dims.width}x${dims.height}px`;
  } else {
    output = wrapMediaPart({ type: "video_url", video_url: { url, id: null } }, "video", p);
  }
  const note = " Give coordinates relative to the image first and derive absolute ones from " +
    "the original size; after creating or changing an image or video with a command or " +
    "script, read it back before going on.";
  return toolOk({
    output,
    message:
      `Loaded ${type.kind} file \`${p}\` (${type.mimeType}, ${size} bytes${sizeHint}).${note}`,
  });
}
