/**
 * Every message type of wire protocol 1.12 (1.10, with its Notification event, plus the approval
 * rule choices of 1.11 and the goal and swarm events of 1.12), as zod schemas with inferred types, plus the
 * `{type, payload}` envelope (with the legacy names older clients and files use).
 *
 * Field order in the schemas is the order on the wire; nullable fields are always present.
 *
 * @module
 */
import * as z from "zod";
import { lazyRecord, lazyValue } from "../lazy_record.ts";
import {
  AudioURLPartSchema,
  type ContentPart,
  ContentPartSchema,
  ImageURLPartSchema,
  TextPartSchema,
  ThinkPartSchema,
  TokenUsageSchema,
  type ToolCall,
  type ToolCallPart,
  ToolCallPartSchema,
  ToolCallSchema,
  VideoURLPartSchema,
} from "../llm/message.ts";
import { displaySchemas } from "./display.ts";
import { GoalSchema } from "../session/goal_state.ts";

/** User input: a string or a list of content parts. */
export const UserInputSchema = z.union([z.string(), z.array(ContentPartSchema)]);
/** User input. */
export type UserInput = z.infer<typeof UserInputSchema>;

const empty = z.object({});

/** What a tool returns: shown to the model (output, message) and to the user (display). */
const toolReturnValueSchema = lazyValue(() =>
  z.object({
    is_error: z.boolean(),
    output: z.union([z.string(), z.array(ContentPartSchema)]),
    message: z.string(),
    display: z.array(displaySchemas().block),
    extras: z.record(z.string(), z.unknown()).nullable().default(null),
  })
);
/** A tool's return value. */
export type ToolReturnValue = z.infer<ReturnType<typeof toolReturnValueSchema>>;

/** Status of one MCP server. */
const mcpServerStatusSchema = lazyValue(() =>
  z.object({
    name: z.string(),
    status: z.enum(["pending", "connecting", "connected", "failed", "unauthorized"]),
    tools: z.array(z.string()),
  })
);
/** MCP loading status. */
const mcpStatusSchema = lazyValue(() =>
  z.object({
    loading: z.boolean(),
    connected: z.number().int(),
    total: z.number().int(),
    tools: z.number().int(),
    servers: z.array(mcpServerStatusSchema()),
  })
);
/** MCP loading status. */
export type MCPStatus = z.infer<ReturnType<typeof mcpStatusSchema>>;

/**
 * Answers to an approval: once, for the session (the derived rule patterns), always (the
 * patterns saved as rules in the user's config; wire 1.11), or reject.
 */
export const ApprovalResponseKindSchema = z.enum([
  "approve",
  "approve_for_session",
  "approve_always",
  "reject",
]);
/** An answer to an approval. */
export type ApprovalResponseKind = z.infer<typeof ApprovalResponseKindSchema>;

/** One choice an approval offers (wire 1.11): the response id to send and its label. */
const approvalOptionSchema = lazyValue(() =>
  z.object({
    id: ApprovalResponseKindSchema,
    label: z.string(),
  })
);
/** One choice of an approval. */
export type ApprovalOption = z.infer<ReturnType<typeof approvalOptionSchema>>;

/** How a goal run ended (GoalUpdate `outcome`). */
export const GoalOutcomeSchema = z.enum([
  "achieved",
  "blocked",
  "budget_exhausted",
  "paused",
  "cancelled",
]);
/** How a goal run ended. */
export type GoalOutcome = z.infer<typeof GoalOutcomeSchema>;

/** State of one swarm item. */
export const SwarmItemStateSchema = z.enum(["pending", "running", "ok", "error", "cancelled"]);
/** State of one swarm item. */
export type SwarmItemState = z.infer<typeof SwarmItemStateSchema>;

/** One item of a swarm as reported on the wire. */
const swarmItemSchema = lazyValue(() =>
  z.object({
    index: z.number().int(),
    item: z.string(),
    state: SwarmItemStateSchema,
    agent_id: z.string().nullable().default(null),
    error: z.string().nullable().default(null),
  })
);
/** One item of a swarm. */
export type SwarmItem = z.infer<ReturnType<typeof swarmItemSchema>>;

/** Item counts of a swarm, by state. */
const swarmCountsSchema = lazyValue(() =>
  z.object({
    pending: z.number().int(),
    running: z.number().int(),
    ok: z.number().int(),
    error: z.number().int(),
    cancelled: z.number().int(),
  })
);
/** Item counts of a swarm. */
export type SwarmCounts = z.infer<ReturnType<typeof swarmCountsSchema>>;

/** Payload schemas of every event, by type name. */
export const EventPayloadSchemas = lazyRecord({
  TurnBegin: () => z.object({ user_input: UserInputSchema }),
  SteerInput: () => z.object({ user_input: UserInputSchema }),
  TurnEnd: () => empty,
  StepBegin: () => z.object({ n: z.number().int() }),
  StepInterrupted: () => empty,
  StepRetry: () =>
    z.object({
      n: z.number().int(),
      next_attempt: z.number().int(),
      max_attempts: z.number().int(),
      wait_s: z.number(),
      error_type: z.string(),
      status_code: z.number().int().nullable().default(null),
    }),
  CompactionBegin: () => empty,
  CompactionEnd: () => empty,
  MCPLoadingBegin: () => empty,
  MCPLoadingEnd: () => empty,
  StatusUpdate: () =>
    z.object({
      context_usage: z.number().nullable().default(null),
      context_tokens: z.number().int().nullable().default(null),
      max_context_tokens: z.number().int().nullable().default(null),
      token_usage: TokenUsageSchema.nullable().default(null),
      message_id: z.string().nullable().default(null),
      plan_mode: z.boolean().nullable().default(null),
      mcp_status: mcpStatusSchema().nullable().default(null),
    }),
  Notification: () =>
    z.object({
      id: z.string(),
      category: z.string(),
      type: z.string(),
      source_kind: z.string(),
      source_id: z.string(),
      title: z.string(),
      body: z.string(),
      severity: z.string(),
      created_at: z.number(),
      payload: z.record(z.string(), z.unknown()),
    }),
  ContentPart: () => ContentPartSchema,
  ToolCall: () => ToolCallSchema,
  ToolCallPart: () => ToolCallPartSchema,
  ToolResult: () => z.object({ tool_call_id: z.string(), return_value: toolReturnValueSchema() }),
  ApprovalResponse: () =>
    z.object({
      request_id: z.string(),
      response: ApprovalResponseKindSchema,
      feedback: z.string().default(""),
    }),
  SubagentEvent: () =>
    z.object({
      parent_tool_call_id: z.string().nullable().default(null),
      agent_id: z.string().nullable().default(null),
      subagent_type: z.string().nullable().default(null),
      event: z.object({ type: z.string(), payload: z.unknown() }),
    }),
  PlanDisplay: () => z.object({ content: z.string(), file_path: z.string() }),
  BtwBegin: () => z.object({ id: z.string(), question: z.string() }),
  BtwEnd: () =>
    z.object({
      id: z.string(),
      response: z.string().nullable().default(null),
      error: z.string().nullable().default(null),
    }),
  GoalUpdate: () =>
    z.object({
      goal: GoalSchema.nullable(),
      queue: z.array(z.string()).default([]),
      outcome: GoalOutcomeSchema.nullable().default(null),
    }),
  SwarmUpdate: () =>
    z.object({
      swarm_id: z.string(),
      parent_tool_call_id: z.string(),
      description: z.string(),
      total: z.number().int(),
      concurrency: z.number().int(),
      counts: swarmCountsSchema(),
      item: swarmItemSchema().nullable().default(null),
      done: z.boolean().default(false),
    }),
  HookTriggered: () =>
    z.object({
      event: z.string(),
      target: z.string().default(""),
      hook_count: z.number().int().default(1),
    }),
  HookResolved: () =>
    z.object({
      event: z.string(),
      target: z.string().default(""),
      action: z.enum(["allow", "block"]).default("allow"),
      reason: z.string().default(""),
      duration_ms: z.number().default(0),
    }),
});

/** Question option. */
const questionOptionSchema = lazyValue(() =>
  z.object({
    label: z.string(),
    description: z.string().default(""),
  })
);
/** One question of a QuestionRequest. */
const questionSchema = lazyValue(() =>
  z.object({
    question: z.string(),
    header: z.string().default(""),
    options: z.array(questionOptionSchema()),
    multi_select: z.boolean().default(false),
    body: z.string().default(""),
    other_label: z.string().default(""),
    other_description: z.string().default(""),
  })
);
/** One question. */
export type Question = z.infer<ReturnType<typeof questionSchema>>;

/** Payload schemas of every server → client request, by type name. */
export const RequestPayloadSchemas = lazyRecord({
  ApprovalRequest: () =>
    z.object({
      id: z.string(),
      tool_call_id: z.string(),
      sender: z.string(),
      action: z.string(),
      description: z.string(),
      source_kind: z.string().nullable().default(null),
      source_id: z.string().nullable().default(null),
      agent_id: z.string().nullable().default(null),
      subagent_type: z.string().nullable().default(null),
      source_description: z.string().nullable().default(null),
      display: z.array(displaySchemas().block).default([]),
      grant_patterns: z.array(z.string()).default([]),
      rule_file: z.string().nullable().default(null),
      options: z.array(approvalOptionSchema()).default([]),
    }),
  ToolCallRequest: () =>
    z.object({
      id: z.string(),
      name: z.string(),
      arguments: z.string().nullable().default(null),
    }),
  QuestionRequest: () =>
    z.object({
      id: z.string(),
      tool_call_id: z.string(),
      questions: z.array(questionSchema()),
    }),
  HookRequest: () =>
    z.object({
      id: z.string(),
      subscription_id: z.string(),
      event: z.string(),
      target: z.string(),
      input_data: z.record(z.string(), z.unknown()),
    }),
});

/** Results the client sends back for each request type. */
export const RequestResultSchemas = lazyRecord({
  ApprovalRequest: () =>
    z.object({
      request_id: z.string(),
      response: ApprovalResponseKindSchema,
      feedback: z.string().default(""),
    }),
  ToolCallRequest: () =>
    z.object({ tool_call_id: z.string(), return_value: toolReturnValueSchema() }),
  QuestionRequest: () =>
    z.object({
      request_id: z.string(),
      answers: z.record(z.string(), z.string()),
    }),
  HookRequest: () =>
    z.object({
      request_id: z.string(),
      action: z.enum(["allow", "block"]),
      reason: z.string().default(""),
    }),
});

/** Names of event types. */
export type EventType = keyof typeof EventPayloadSchemas;
/** Names of request types. */
export type RequestType = keyof typeof RequestPayloadSchemas;
/** Payload type of an event. */
export type EventPayload<T extends EventType> = z.infer<(typeof EventPayloadSchemas)[T]>;
/** Payload type of a request. */
export type RequestPayload<T extends RequestType> = z.infer<(typeof RequestPayloadSchemas)[T]>;
/** Result type of a request. */
export type RequestResult<T extends RequestType> = z.infer<(typeof RequestResultSchemas)[T]>;

/** A typed event. */
export type WireEvent = { [T in EventType]: { type: T; payload: EventPayload<T> } }[EventType];

/** A request travelling to the UI, with the means to answer it. */
export class PendingRequest<T extends RequestType = RequestType> {
  /** Request type. */
  readonly type: T;
  /** Request payload. */
  readonly payload: RequestPayload<T>;
  #resolve!: (r: RequestResult<T>) => void;
  #settled = false;
  /** Resolves with the client's answer. */
  readonly result: Promise<RequestResult<T>>;

  /** Create a pending request. */
  constructor(type: T, payload: RequestPayload<T>) {
    this.type = type;
    this.payload = payload;
    this.result = new Promise((res) => (this.#resolve = res));
  }

  /** Whether an answer was given. */
  get settled(): boolean {
    return this.#settled;
  }

  /** Answer the request; later answers are ignored. Returns whether this answer was taken. */
  resolve(result: RequestResult<T>): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#resolve(result);
    return true;
  }
}

/** Anything that travels on the wire. */
export type WireMessage = WireEvent | PendingRequest;

/** Whether a wire message is a request. */
export function isRequest(msg: WireMessage): msg is PendingRequest {
  return msg instanceof PendingRequest;
}

/** Top-level payload fields of `T` that its schema defaults (null, "", 0, …) when absent. */
type DefaultedKeys<T extends EventType, In = z.input<(typeof EventPayloadSchemas)[T]>> = {
  [K in keyof EventPayload<T>]-?: K extends keyof In
    ? undefined extends In[K] ? undefined extends EventPayload<T>[K] ? never : K : never
    : never;
}[keyof EventPayload<T>];

/** An event payload as callers write it: top-level fields with a schema default may be left out. */
export type EventInput<T extends EventType> =
  & Omit<EventPayload<T>, DefaultedKeys<T>>
  & Partial<Pick<EventPayload<T>, DefaultedKeys<T>>>;

const defaultedFields = new Map<string, readonly [string, z.ZodDefault][]>();

/** The top-level fields of an event type's payload schema that have a default. */
function defaultsOf(type: EventType): readonly [string, z.ZodDefault][] {
  let fields = defaultedFields.get(type);
  if (!fields) {
    const schema: z.ZodType = EventPayloadSchemas[type];
    fields = schema instanceof z.ZodObject
      ? Object.entries(schema.shape as Record<string, z.ZodType>).filter((e): e is [
        string,
        z.ZodDefault,
      ] => e[1] instanceof z.ZodDefault)
      : [];
    defaultedFields.set(type, fields);
  }
  return fields;
}

/** Build an event with a typed payload, filling absent defaulted fields from the schema. */
export function event<T extends EventType>(type: T, payload: EventInput<T>): WireEvent {
  let full = payload as Record<string, unknown>;
  for (const [key, schema] of defaultsOf(type)) {
    if (full[key] !== undefined) continue;
    if (full === payload) full = { ...full };
    full[key] = schema.def.defaultValue;
  }
  return { type, payload: full } as WireEvent;
}

/**
 * A `StatusUpdate` event carrying only the given fields; every other field is null (what a
 * client reads as "unchanged").
 */
export function statusUpdate(fields: EventInput<"StatusUpdate">): WireEvent {
  return event("StatusUpdate", fields);
}

/** Wrap a streamed part as its wire event. */
export function partEvent(part: ContentPart | ToolCall | ToolCallPart): WireEvent {
  if ("function" in part) return { type: "ToolCall", payload: part };
  if ("arguments_part" in part) return { type: "ToolCallPart", payload: part };
  return { type: "ContentPart", payload: part };
}

/** Legacy envelope names accepted on input. */
const LEGACY_TYPE_NAMES: Record<string, string> = {
  ApprovalRequestResolved: "ApprovalResponse",
};

/** The `{type, payload}` envelope of a message. */
export interface Envelope {
  /** Type name. */
  type: string;
  /** Payload object. */
  payload: Record<string, unknown>;
}

/** Serialize a message to its envelope. Payloads are always objects. */
export function toEnvelope(msg: WireMessage): Envelope {
  return { type: msg.type, payload: (msg.payload ?? {}) as Record<string, unknown> };
}

/** A parsed envelope: an event, a request payload, or an unknown type kept verbatim. */
export type ParsedEnvelope =
  | { kind: "event"; event: WireEvent }
  | { kind: "request"; type: RequestType; payload: RequestPayload<RequestType> }
  | { kind: "unknown"; type: string; payload: unknown };

/**
 * Parse an envelope (from `wire.jsonl` or a client), accepting legacy names and fields.
 * Throws a zod error when the payload does not fit its schema.
 */
export function fromEnvelope(env: { type: string; payload?: unknown }): ParsedEnvelope {
  const type = LEGACY_TYPE_NAMES[env.type] ?? env.type;
  let payload: unknown = env.payload ?? {};
  if (type === "SubagentEvent" && payload && typeof payload === "object") {
    const p = payload as Record<string, unknown>;
    if (!("parent_tool_call_id" in p) && "task_tool_call_id" in p) {
      const { task_tool_call_id, ...rest } = p;
      payload = { parent_tool_call_id: task_tool_call_id, ...rest };
    }
  }
  if (type in EventPayloadSchemas) {
    const schema = EventPayloadSchemas[type as EventType];
    return { kind: "event", event: { type, payload: schema.parse(payload) } as WireEvent };
  }
  if (type in RequestPayloadSchemas) {
    const schema = RequestPayloadSchemas[type as RequestType];
    return { kind: "request", type: type as RequestType, payload: schema.parse(payload) };
  }
  return { kind: "unknown", type, payload };
}

/** Content part schemas re-exported for wire consumers. */
export {
  AudioURLPartSchema,
  ImageURLPartSchema,
  TextPartSchema,
  ThinkPartSchema,
  VideoURLPartSchema,
};
