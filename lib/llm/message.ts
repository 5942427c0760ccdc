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

const ROLES: ReadonlySet<string> = new Set(RoleSchema.options);

function isObjectRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A nullable string field with a `null` default: its value, or `false` when it has the wrong type. */
function nullableString(v: unknown): string | null | false {
  if (v === undefined || v === null) return null;
  return typeof v === "string" ? v : false;
}

function quickContentPart(p: unknown): ContentPart | undefined {
  if (!isObjectRecord(p)) return undefined;
  const type = p.type;
  if (type === "text") {
    return typeof p.text === "string" ? { type, text: p.text } : undefined;
  }
  if (type === "think") {
    const encrypted = nullableString(p.encrypted);
    return typeof p.think === "string" && encrypted !== false
      ? { type, think: p.think, encrypted }
      : undefined;
  }
  if (type === "image_url" || type === "audio_url" || type === "video_url") {
    const ref = p[type];
    if (!isObjectRecord(ref) || typeof ref.url !== "string") return undefined;
    const id = nullableString(ref.id);
    if (id === false) return undefined;
    return { type, [type]: { url: ref.url, id } } as ContentPart;
  }
  return undefined;
}

function quickToolCall(tc: unknown): ToolCall | undefined {
  if (!isObjectRecord(tc) || (tc.type !== undefined && tc.type !== "function")) return undefined;
  const fn = tc.function;
  if (typeof tc.id !== "string" || !isObjectRecord(fn) || typeof fn.name !== "string") {
    return undefined;
  }
  const args = nullableString(fn.arguments);
  // Non-null extras (free-form provider data) are left to the schema.
  if (args === false || (tc.extras !== undefined && tc.extras !== null)) return undefined;
  return {
    type: "function",
    id: tc.id,
    function: { name: fn.name, arguments: args },
    extras: null,
  };
}

/**
 * What `MessageSchema.parse(value)` returns, computed without zod for a plainly well-formed
 * record (the common case when a long `context.jsonl` is restored), or `undefined` when the
 * record is not one: it is malformed, or holds a part left to the schema (a tool call's
 * non-null `extras`). On `undefined` the caller asks {@link MessageSchema}, which accepts or
 * rejects with its precise error; a result is always exactly what the schema would give (same
 * fields, defaults and key order; `tests/unit/llm/message_quick_parse_test.ts` holds them equal).
 */
export function quickParseMessage(value: unknown): Message | undefined {
  if (!isObjectRecord(value)) return undefined;
  const { role, name, content, tool_calls, tool_call_id, partial } = value;
  if (typeof role !== "string" || !ROLES.has(role)) return undefined;
  // Built in the schema's field order (the order they are written back in).
  const out = { role } as Message;
  if (name !== undefined) {
    if (typeof name !== "string") return undefined;
    out.name = name;
  }
  if (typeof content === "string") {
    out.content = content;
  } else if (Array.isArray(content)) {
    const parts: ContentPart[] = new Array(content.length);
    for (let i = 0; i < content.length; i++) {
      const part = quickContentPart(content[i]);
      if (part === undefined) return undefined;
      parts[i] = part;
    }
    out.content = parts;
  } else {
    return undefined;
  }
  if (tool_calls !== undefined) {
    if (!Array.isArray(tool_calls)) return undefined;
    const calls: ToolCall[] = new Array(tool_calls.length);
    for (let i = 0; i < tool_calls.length; i++) {
      const call = quickToolCall(tool_calls[i]);
      if (call === undefined) return undefined;
      calls[i] = call;
    }
    out.tool_calls = calls;
  }
  if (tool_call_id !== undefined) {
    if (typeof tool_call_id !== "string") return undefined;
    out.tool_call_id = tool_call_id;
  }
  if (partial !== undefined) {
    if (typeof partial !== "boolean") return undefined;
    out.partial = partial;
  }
  return out;
}

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
