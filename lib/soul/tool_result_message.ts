/**
 * How a tool result becomes the `tool` message the model sees (reference §6.3).
 *
 * @module
 */
import type { ContentPart, NormalizedMessage } from "../llm/message.ts";
import type { ToolReturnValue } from "../tooling/tool.ts";
import { isToolRuntimeError } from "./toolset.ts";

/** `<system>x</system>` as a text part. */
export function systemPart(text: string): ContentPart {
  return { type: "text", text: `<system>${text}</system>` };
}

/** `<system-reminder>` wrapping. */
export function systemReminder(text: string): string {
  return `<system-reminder>\n${text}\n</system-reminder>`;
}

/** Convert a tool result into the context message answering `toolCallId`. */
export function toolResultToMessage(toolCallId: string, rv: ToolReturnValue): NormalizedMessage {
  const output: ContentPart[] = typeof rv.output === "string"
    ? (rv.output ? [{ type: "text", text: rv.output }] : [])
    : [...rv.output];
  const content: ContentPart[] = [];
  if (rv.is_error) {
    let msg = rv.message;
    if (isToolRuntimeError(rv)) {
      msg += "\nThis is an unexpected error and the tool is probably not working.";
    }
    content.push(systemPart(`ERROR: ${msg}`), ...output);
  } else {
    if (rv.message) content.push(systemPart(rv.message));
    content.push(...output);
    if (content.length === 0) content.push(systemPart("Tool output is empty."));
    else if (!content.some((p) => p.type === "text")) {
      content.unshift(systemPart("Tool returned non-text content."));
    }
  }
  return { role: "tool", content, tool_call_id: toolCallId };
}
