/**
 * ACP prompt content → the soul's user input (reference §12 "Prompt conversion"): text as text,
 * images as `data:` URLs, embedded text resources and resource links as tagged text.
 *
 * @module
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { ContentPart } from "../../llm/message.ts";

/** A prompt block this agent cannot take (the caller answers with invalid params). */
export class UnsupportedPromptContent extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedPromptContent";
  }
}

/** Quote an attribute value for the tagged-text forms. */
function attr(value: string): string {
  return value.replaceAll("'", "&#39;");
}

/**
 * Convert prompt blocks to content parts. Audio is refused (not advertised); a binary embedded
 * resource becomes a link-style note, since its bytes cannot be shown to the model as text.
 *
 * @throws {UnsupportedPromptContent} for audio blocks or an empty prompt.
 */
export function promptToUserInput(blocks: readonly acp.ContentBlock[]): ContentPart[] {
  const parts: ContentPart[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text });
        break;
      case "image": {
        const url = block.data ? `data:${block.mimeType};base64,${block.data}` : (block.uri ?? "");
        if (!url) throw new UnsupportedPromptContent("An image block needs `data` or `uri`.");
        parts.push({ type: "image_url", image_url: { url, id: null } });
        break;
      }
      case "resource": {
        const r = block.resource;
        if ("text" in r) {
          parts.push({
            type: "text",
            text: `<resource uri='${attr(r.uri)}'>\n${r.text}\n</resource>`,
          });
        } else {
          const mime = r.mimeType ? ` mime_type='${attr(r.mimeType)}'` : "";
          parts.push({ type: "text", text: `<resource uri='${attr(r.uri)}'${mime} />` });
        }
        break;
      }
      case "resource_link":
        parts.push({
          type: "text",
          text: `<resource_link uri='${attr(block.uri)}' name='${attr(block.name)}' />`,
        });
        break;
      case "audio":
        throw new UnsupportedPromptContent(
          "Audio prompts are not supported (promptCapabilities.audio is false).",
        );
    }
  }
  if (parts.length === 0) throw new UnsupportedPromptContent("The prompt is empty.");
  return parts;
}
