/**
 * ReadMediaFile: give the model an image or video file as a data URL, wrapped in
 * `<image path="...">`/`<video path="...">` tags. Offered only to models with image or video
 * input.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { z } from "zod";
import { readAsset, renderTemplate } from "../lib/assets/mod.ts";
import type { ContentPart } from "../lib/llm/message.ts";
import { detectFileType, type FileType, readHeader } from "../lib/tooling/file_type.ts";
import { imageSize } from "../lib/tooling/image_size.ts";
import { toolError, toolOk, toolRejected } from "../lib/tooling/result.ts";
import type {
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolFactory,
  ToolReturnValue,
} from "../lib/tooling/tool.ts";
import { resolveToolPath } from "../lib/tooling/workspace.ts";

/** Largest media file accepted, in MiB. */
export const MAX_MEDIA_MEGABYTES = 100;

/** ReadMediaFile parameters. */
export const ReadMediaFileParamsSchema = z.object({
  path: z.string().describe(
    "Path of the image or video to read. Relative paths are resolved against the working " +
      "directory; files outside it need an absolute path.",
  ),
});
/** ReadMediaFile parameters. */
export type ReadMediaFileParams = z.infer<typeof ReadMediaFileParamsSchema>;

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

class ReadMediaFileTool implements Tool<ReadMediaFileParams> {
  readonly name = "ReadMediaFile";
  readonly description: string;
  readonly parameters = ReadMediaFileParamsSchema;
  readonly #env: ToolEnv;

  constructor(env: ToolEnv) {
    this.#env = env;
    const caps = env.modelCapabilities;
    const kinds = caps.has("image_in") && caps.has("video_in")
      ? "images and videos"
      : caps.has("image_in")
      ? "images"
      : "videos";
    this.description = renderTemplate(readAsset("tools/read_media_file.md"), {
      MEDIA_KINDS: kinds,
      MAX_MEDIA_MEGABYTES: String(MAX_MEDIA_MEGABYTES),
    });
  }

  async #load(p: string, type: FileType): Promise<ToolReturnValue> {
    const size = (await Deno.stat(p)).size;
    if (size === 0) return toolError({ message: `\`${p}\` is empty.`, brief: "Empty file" });
    if (size > MAX_MEDIA_MEGABYTES * 1024 * 1024) {
      return toolError({
        message: `\`${p}\` is ${size} bytes, which exceeds the max ${MAX_MEDIA_MEGABYTES}MB ` +
          "bytes for media files.",
        brief: "File too large",
      });
    }
    const data = await Deno.readFile(p);
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

  async call(params: ReadMediaFileParams, ctx: ToolCallContext): Promise<ToolReturnValue> {
    const env = this.#env;
    if (!params.path) {
      return toolError({ message: "File path cannot be empty.", brief: "Empty file path" });
    }
    try {
      const resolved = resolveToolPath(params.path, env, "read");
      if (!resolved.ok) return resolved.error;
      const p = resolved.path;
      const decision = env.scope.check("read", p);
      if (!decision.allowed) {
        return toolError({ message: decision.message, brief: "Sandbox denied" });
      }
      const ruled = await ctx.requestApproval({
        action: "read file",
        description: `Read file \`${p}\``,
        display: [],
        subject: { kind: "file", path: p, access: "read" },
        unruled: "allow",
      });
      if (!ruled.approved) {
        return toolRejected(ruled.feedback, { isRoot: env.isRoot, denial: ruled.denial });
      }
      let info: Deno.FileInfo;
      try {
        info = await Deno.stat(p);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
        return toolError({
          message: `\`${params.path}\` does not exist.`,
          brief: "File not found",
        });
      }
      if (!info.isFile) {
        return toolError({ message: `\`${params.path}\` is not a file.`, brief: "Invalid path" });
      }
      const type = detectFileType(p, await readHeader(p));
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
      return await this.#load(p, type);
    } catch (e) {
      return toolError({
        message: `Failed to read ${params.path}. Error: ${e instanceof Error ? e.message : e}`,
        brief: "Failed to read file",
      });
    }
  }
}

/** Builds ReadMediaFile, or `null` when the model takes neither images nor videos. */
export const readMediaFileTool: ToolFactory = (env) => {
  const caps = env.modelCapabilities;
  if (!caps.has("image_in") && !caps.has("video_in")) return null;
  return new ReadMediaFileTool(env);
};
