/**
 * Merge rules for streamed pieces (reference §5.2): text with text, think with think (unless
 * encrypted), tool-call argument fragments onto their call. Media never merge.
 *
 * @module
 */
import type { WireEvent, WireMessage } from "./messages.ts";

/** Events that can absorb later pieces. */
export type MergeableEvent = Extract<
  WireEvent,
  { type: "ContentPart" | "ToolCall" | "ToolCallPart" }
>;

/** Whether a message takes part in merging. */
export function isMergeable(msg: WireMessage): msg is MergeableEvent {
  return msg.type === "ContentPart" || msg.type === "ToolCall" || msg.type === "ToolCallPart";
}

/** A deep copy of a mergeable event, safe to grow in place. */
export function cloneMergeable(msg: MergeableEvent): MergeableEvent {
  return structuredClone(msg);
}

/** Merge `next` into `buffer` in place; returns whether it was absorbed. */
export function mergeInPlace(buffer: MergeableEvent, next: MergeableEvent): boolean {
  if (buffer.type === "ContentPart" && next.type === "ContentPart") {
    const a = buffer.payload;
    const b = next.payload;
    if (a.type === "text" && b.type === "text") {
      a.text += b.text;
      return true;
    }
    if (a.type === "think" && b.type === "think") {
      if (a.encrypted) return false;
      a.think += b.think;
      if (b.encrypted) a.encrypted = b.encrypted;
      return true;
    }
    return false;
  }
  if (buffer.type === "ToolCall" && next.type === "ToolCallPart") {
    const part = next.payload.arguments_part;
    if (part === null) return true;
    const fn = buffer.payload.function;
    fn.arguments = (fn.arguments ?? "") + part;
    return true;
  }
  if (buffer.type === "ToolCallPart" && next.type === "ToolCallPart") {
    const part = next.payload.arguments_part;
    if (part === null) return true;
    buffer.payload.arguments_part = (buffer.payload.arguments_part ?? "") + part;
    return true;
  }
  return false;
}
