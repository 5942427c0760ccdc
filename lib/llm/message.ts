/**
 * Conversation message types shared by the LLM layer, the wire protocol and the context file.
 *
 * Every type is a zod schema with its TypeScript type inferred from it. Field order in the
 * schemas is the field order on the wire and in `context.jsonl`.
 *
 * @module
 */
import * as z from "zod";

/** A piece of visible assistant or user text. */
export const TextPartSchema = z.object({ type: z.literal("text"), text: z.string() });
/** A text content part. */
export type TextPart = z.infer<typeof TextPartSchema>;

/** Model reasoning ("thinking"), optionally with a provider-encrypted signature. */
export const ThinkPartSchema = z.object({
  type: z.literal("think"),
  think: z.string(),
  encrypted: z.string().nullable().default(null),
});
/** A thinking content part. */
export type ThinkPart = z.infer<typeof ThinkPartSchema>;

const mediaRef = z.object({ url: z.string(), id: z.string().nullable().default(null) });

/** An image given by URL (often a `data:` URL). */
export const ImageURLPartSchema = z.object({ type: z.literal("image_url"), image_url: mediaRef });
/** An image content part. */
export type ImageURLPart = z.infer<typeof ImageURLPartSchema>;
/** An audio clip given by URL. */
export const AudioURLPartSchema = z.object({ type: z.literal("audio_url"), audio_url: mediaRef });
/** An audio content part. */
export type AudioURLPart = z.infer<typeof AudioURLPartSchema>;
/** A video given by URL. */
export const VideoURLPartSchema = z.object({ type: z.literal("video_url"), video_url: mediaRef });
/** A video content part. */
export type VideoURLPart = z.infer<typeof VideoURLPartSchema>;

/** Any content part of a message. */
export const ContentPartSchema = z.discriminatedUnion("type", [
  TextPartSchema,
  ThinkPartSchema,
  ImageURLPartSchema,
  AudioURLPartSchema,
  VideoURLPartSchema,
]);
/** Any content part of a message. */
export type ContentPart = z.infer<typeof ContentPartSchema>;

/** A complete (or streaming, still growing) function call requested by the model. */
export const ToolCallSchema = z.object({
  type: z.literal("function").default("function"),
  id: z.string(),
  function: z.object({ name: z.string(), arguments: z.string().nullable().default(null) }),
  extras: z.record(z.string(), z.unknown()).nullable().default(null),
});
/** A tool call. */
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** A streamed fragment of the arguments of the tool call streamed just before it. */
export const ToolCallPartSchema = z.object({ arguments_part: z.string().nullable().default(null) });
/** A tool call arguments fragment. */
export type ToolCallPart = z.infer<typeof ToolCallPartSchema>;

/** Roles of a conversation message. */
export const RoleSchema = z.enum(["system", "user", "assistant", "tool"]);
/** A message role. */
export type Role = z.infer<typeof RoleSchema>;

/** One conversation message as stored in `context.jsonl` and sent to providers. */
export const MessageSchema = z.object({
  role: RoleSchema,
  name: z.string().optional(),
  content: z.union([z.string(), z.array(ContentPartSchema)]),
  tool_calls: z.array(ToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
  partial: z.boolean().optional(),
});
/** A conversation message (content may be a string on input; see {@link normalizeMessage}). */
export type Message = z.infer<typeof MessageSchema>;

/** A message whose content is always a list of parts: the in-memory form. */
export interface NormalizedMessage {
  /** Who said it. */
  role: Role;
  /** Optional speaker name. */
  name?: string;
  /** Content parts. */
  content: ContentPart[];
  /** Tool calls made by an assistant message. */
  tool_calls?: ToolCall[];
  /** The call a `tool` message answers. */
  tool_call_id?: string;
}

/** Token usage reported by a provider for one completion. */
export const TokenUsageSchema = z.object({
  input_other: z.number().int().default(0),
  output: z.number().int().default(0),
  input_cache_read: z.number().int().default(0),
  input_cache_creation: z.number().int().default(0),
});
/** Token usage of one completion. */
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

/** Total input tokens of a usage record (uncached plus cache reads and writes). */
export function usageInput(u: TokenUsage): number {
  return u.input_other + u.input_cache_read + u.input_cache_creation;
}

/** Total tokens of a usage record. */
export function usageTotal(u: TokenUsage): number {
  return usageInput(u) + u.output;
}

/** Build a text part. */
export function textPart(text: string): TextPart {
  return { type: "text", text };
}

/** Convert a message with string or list content into the in-memory list form. */
export function normalizeMessage(m: Message): NormalizedMessage {
  const out: NormalizedMessage = {
    role: m.role,
    content: typeof m.content === "string"
      ? (m.content === "" && m.role === "assistant" ? [] : [textPart(m.content)])
      : m.content,
  };
  if (m.name !== undefined) out.name = m.name;
  if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  return out;
}

/**
 * Serialize a message as the reference does (`model_dump_json(exclude_none=True)`): content is a
 * plain string when it is exactly one text part, absent optional fields are left out, and tool
 * calls omit a null `extras`.
 */
export function messageToJSON(m: NormalizedMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: m.role };
  if (m.name !== undefined) out.name = m.name;
  out.content = m.content.length === 1 && m.content[0].type === "text"
    ? m.content[0].text
    : m.content;
  if (m.tool_calls !== undefined && m.tool_calls.length > 0) {
    out.tool_calls = m.tool_calls.map((tc) => {
      const o: Record<string, unknown> = {
        type: "function",
        id: tc.id,
        function: { name: tc.function.name, arguments: tc.function.arguments },
      };
      if (tc.extras !== null && tc.extras !== undefined) o.extras = tc.extras;
      return o;
    });
  }
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  return out;
}

/** Concatenate the text parts of a content list (no separator). */
export function extractText(parts: readonly ContentPart[], sep = ""): string {
  return parts.filter((p): p is TextPart => p.type === "text").map((p) => p.text).join(sep);
}
