/**
 * Converting an MCP `tools/call` result into a tool return value (reference §7.9): content
 * blocks become content parts under a 100,000-character budget shared by text and inline
 * media, unsupported blocks become a placeholder, `isError` becomes a tool error.
 *
 * @module
 */
import type { ContentPart } from "../llm/message.ts";
import { toolError, toolOk } from "../tooling/result.ts";
import type { ToolReturnValue } from "../tooling/tool.ts";

/** Characters of MCP output (text plus media data URLs) the model may receive. */
export const MCP_MAX_OUTPUT_CHARS = 100_000;

/** Note appended when output was cut. */
export const MCP_TRUNCATED_NOTE = `\n\n[Output truncated: exceeded ${MCP_MAX_OUTPUT_CHARS} ` +
  "character limit. Use pagination or more specific queries to get remaining content.]";

/** Message of a result the server flagged with `isError`. */
export const MCP_IS_ERROR_MESSAGE =
  "Tool returned an error. The output may be error message or incomplete output";

/** The subset of an MCP `CallToolResult` that is converted. */
export interface McpCallResult {
  /** Content blocks. */
  content?: unknown[];
  /** Whether the tool reported an error. */
  isError?: boolean;
}

class UnsupportedContent extends Error {}

function mediaPart(mime: string, url: string): ContentPart {
  if (mime.startsWith("image/")) return { type: "image_url", image_url: { url, id: null } };
  if (mime.startsWith("audio/")) return { type: "audio_url", audio_url: { url, id: null } };
  if (mime.startsWith("video/")) return { type: "video_url", video_url: { url, id: null } };
  throw new UnsupportedContent(`Unsupported mime type: ${mime}`);
}

/** Convert one MCP content block; throws {@link UnsupportedContent} for what has no part. */
function convertBlock(block: unknown): ContentPart {
  const b = (block ?? {}) as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return { type: "text", text: String(b.text ?? "") };
    case "image":
    case "audio":
      return mediaPart(String(b.mimeType ?? ""), `data:${b.mimeType};base64,${b.data}`);
    case "resource": {
      const r = (b.resource ?? {}) as Record<string, unknown>;
      if (typeof r.text === "string") return { type: "text", text: r.text };
      if (typeof r.blob === "string") {
        const mime = typeof r.mimeType === "string" ? r.mimeType : "application/octet-stream";
        return mediaPart(mime, `data:${mime};base64,${r.blob}`);
      }
      break;
    }
    case "resource_link": {
      const mime = typeof b.mimeType === "string" ? b.mimeType : "application/octet-stream";
      return mediaPart(mime, String(b.uri));
    }
  }
  throw new UnsupportedContent(`Unsupported MCP tool result part: ${JSON.stringify(block)}`);
}

function mediaSize(part: ContentPart): number | null {
  switch (part.type) {
    case "image_url":
      return part.image_url.url.length;
    case "audio_url":
      return part.audio_url.url.length;
    case "video_url":
      return part.video_url.url.length;
    default:
      return null;
  }
}

/** Convert a `tools/call` result to the tool's return value. */
export function convertMcpResult(result: McpCallResult): ToolReturnValue {
  const parts: ContentPart[] = [];
  let budget = MCP_MAX_OUTPUT_CHARS;
  let truncated = false;
  for (const block of result.content ?? []) {
    let part: ContentPart;
    try {
      part = convertBlock(block);
    } catch (err) {
      part = { type: "text", text: `[Unsupported content: ${(err as Error).message}]` };
    }
    if (part.type === "text") {
      if (budget <= 0) {
        truncated = true;
        continue;
      }
      if (part.text.length > budget) {
        part = { type: "text", text: part.text.slice(0, budget) };
        truncated = true;
      }
      budget -= part.text.length;
      parts.push(part);
      continue;
    }
    const size = mediaSize(part);
    if (size !== null) {
      if (size > budget) {
        truncated = true;
        continue;
      }
      budget -= size;
    }
    parts.push(part);
  }
  if (truncated) parts.push({ type: "text", text: MCP_TRUNCATED_NOTE });
  if (result.isError) return toolError({ output: parts, message: MCP_IS_ERROR_MESSAGE });
  return toolOk({ output: parts });
}
