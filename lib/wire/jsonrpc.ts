/**
 * JSON-RPC 2.0 framing of the wire protocol (reference §4.1, §4.2): error codes and exact
 * messages, zod schemas of inbound messages and method params, classification of one inbound
 * line, and builders of outbound messages.
 *
 * @module
 */
import * as z from "zod";
import { UserInputSchema } from "./messages.ts";

/** JSON-RPC error codes used by the wire server. */
export const ErrorCodes = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  INVALID_STATE: -32000,
  LLM_NOT_SET: -32001,
  LLM_NOT_SUPPORTED: -32002,
  CHAT_PROVIDER_ERROR: -32003,
  AUTH_EXPIRED: -32004,
} as const;

/** Exact error messages of the protocol. */
export const ErrorMessages = {
  INVALID_JSON: "Invalid JSON format",
  INVALID_REQUEST: "Invalid request",
  INVALID_RESPONSE: "Invalid response",
  TURN_IN_PROGRESS: "An agent turn is already in progress",
  NO_TURN: "No agent turn is in progress",
  PLAN_MODE_UNSUPPORTED: "Plan mode is not supported",
  REPLAY_FAILED: "Replay failed",
} as const;

/** Methods a client may call. */
export const INBOUND_METHODS = [
  "initialize",
  "prompt",
  "steer",
  "replay",
  "set_plan_mode",
  "cancel",
] as const;
/** A method a client may call. */
export type InboundMethod = (typeof INBOUND_METHODS)[number];

/** An external tool declared at `initialize`. */
export const ExternalToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
});
/** An external tool declaration. */
export type ExternalToolDecl = z.infer<typeof ExternalToolSchema>;

/** `initialize` params. */
export const InitializeParamsSchema = z.object({
  protocol_version: z.string(),
  client: z.object({ name: z.string(), version: z.string().nullish() }).nullish(),
  external_tools: z.array(ExternalToolSchema).nullish(),
  capabilities: z.object({
    supports_question: z.boolean().default(false),
    supports_plan_mode: z.boolean().default(false),
  }).nullish(),
  hooks: z.array(z.object({
    id: z.string(),
    event: z.string(),
    matcher: z.string().default(""),
    timeout: z.number().default(30),
  })).nullish(),
});
/** `initialize` params. */
export type InitializeParams = z.infer<typeof InitializeParamsSchema>;

/** `prompt` and `steer` params. */
export const UserInputParamsSchema = z.object({ user_input: UserInputSchema });
/** `set_plan_mode` params. */
export const SetPlanModeParamsSchema = z.object({ enabled: z.boolean() });
/** `cancel` / `replay` params: absent, null or any object. */
export const NoParamsSchema = z.union([z.record(z.string(), z.unknown()), z.null(), z.undefined()]);

/** `initialize` result. */
export const InitializeResultSchema = z.object({
  protocol_version: z.string(),
  server: z.object({ name: z.string(), version: z.string() }),
  slash_commands: z.array(
    z.object({ name: z.string(), description: z.string(), aliases: z.array(z.string()) }),
  ),
  /** External tool registration outcome (only when tools were submitted). */
  external_tools: z.object({
    accepted: z.array(z.string()),
    rejected: z.array(z.object({ name: z.string(), reason: z.string() })),
  }).optional(),
  hooks: z.object({
    supported_events: z.array(z.string()),
    configured: z.record(z.string(), z.number()),
  }).optional(),
  capabilities: z.object({ supports_question: z.boolean().optional() }).optional(),
});
/** `prompt` result. */
export const PromptResultSchema = z.object({
  status: z.enum(["finished", "cancelled", "max_steps_reached"]),
  /** Steps taken, for `max_steps_reached`. */
  steps: z.number().int().optional(),
});
/** `steer` result. */
export const SteerResultSchema = z.object({ status: z.literal("steered") });
/** `set_plan_mode` result. */
export const SetPlanModeResultSchema = z.object({
  status: z.literal("ok"),
  plan_mode: z.boolean(),
});
/** `cancel` result (an empty object). */
export const CancelResultSchema = z.object({});
/** `replay` result. */
export const ReplayResultSchema = z.object({
  status: z.enum(["finished", "cancelled"]),
  events: z.number().int(),
  requests: z.number().int(),
});

/** Params and result schema of each inbound method: the one definition of the protocol's calls. */
export const WireMethods = {
  initialize: { params: InitializeParamsSchema, result: InitializeResultSchema },
  prompt: { params: UserInputParamsSchema, result: PromptResultSchema },
  steer: { params: UserInputParamsSchema, result: SteerResultSchema },
  set_plan_mode: { params: SetPlanModeParamsSchema, result: SetPlanModeResultSchema },
  cancel: { params: NoParamsSchema.optional(), result: CancelResultSchema },
  replay: { params: NoParamsSchema.optional(), result: ReplayResultSchema },
} as const satisfies Record<InboundMethod, { params: z.ZodType; result: z.ZodType }>;

/** Params of `M` as the server sees them (defaults applied). */
export type MethodParams<M extends InboundMethod> = z.output<(typeof WireMethods)[M]["params"]>;
/** Params of `M` as a client may send them (defaulted fields optional). */
export type MethodParamsInput<M extends InboundMethod> = z.input<
  (typeof WireMethods)[M]["params"]
>;
/** Result of `M`. */
export type MethodResult<M extends InboundMethod> = z.output<(typeof WireMethods)[M]["result"]>;
/** `initialize` result. */
export type InitializeResult = MethodResult<"initialize">;
/** `prompt` result. */
export type PromptResult = MethodResult<"prompt">;
/** `replay` result. */
export type ReplayResult = MethodResult<"replay">;

const InboundRequestSchema = z.discriminatedUnion("method", [
  z.object({ method: z.literal("initialize"), params: WireMethods.initialize.params }),
  z.object({ method: z.literal("prompt"), params: WireMethods.prompt.params }),
  z.object({ method: z.literal("steer"), params: WireMethods.steer.params }),
  z.object({ method: z.literal("set_plan_mode"), params: WireMethods.set_plan_mode.params }),
  z.object({ method: z.literal("cancel"), params: WireMethods.cancel.params }),
  z.object({ method: z.literal("replay"), params: WireMethods.replay.params }),
]);
/** A validated inbound request: one member per method, its params typed. */
export type InboundRequest = z.output<typeof InboundRequestSchema>;

/** The error object of an error response. */
export const ErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
/** An error object. */
export type ErrorObject = z.infer<typeof ErrorObjectSchema>;

const GenericMessageSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.string().optional(),
  id: z.union([z.string(), z.null()]).optional(),
  params: z.unknown().optional(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});

const ResponseSchema = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: z.string(), result: z.unknown() }).refine((m) =>
    "result" in m
  ),
  z.object({ jsonrpc: z.literal("2.0"), id: z.string(), error: ErrorObjectSchema }),
]);

/** What one inbound line is. */
export type Inbound =
  | { kind: "request"; id: string; request: InboundRequest }
  | { kind: "response"; id: string; result: unknown; error: ErrorObject | null }
  | { kind: "ignore" }
  | { kind: "reply"; message: OutboundMessage };

/** Classify one inbound line; protocol errors become a ready reply. */
export function parseInbound(line: string): Inbound {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return {
      kind: "reply",
      message: errorResponse(null, ErrorCodes.PARSE_ERROR, ErrorMessages.INVALID_JSON),
    };
  }
  const generic = GenericMessageSchema.safeParse(json);
  if (!generic.success) {
    return {
      kind: "reply",
      message: errorResponse(null, ErrorCodes.INVALID_REQUEST, ErrorMessages.INVALID_REQUEST),
    };
  }
  const msg = generic.data;
  const raw = json as Record<string, unknown>;
  if (msg.method === undefined) {
    if (!("result" in raw) && !("error" in raw)) {
      return {
        kind: "reply",
        message: errorResponse(null, ErrorCodes.INVALID_REQUEST, ErrorMessages.INVALID_REQUEST),
      };
    }
    const resp = ResponseSchema.safeParse(json);
    if (!resp.success) {
      return {
        kind: "reply",
        message: errorResponse(null, ErrorCodes.INVALID_REQUEST, ErrorMessages.INVALID_RESPONSE),
      };
    }
    const r = resp.data as { id: string; result?: unknown; error?: ErrorObject };
    return { kind: "response", id: r.id, result: r.result, error: "error" in r ? r.error! : null };
  }
  const id = msg.id;
  if (!(INBOUND_METHODS as readonly string[]).includes(msg.method)) {
    if (id === undefined || id === null) return { kind: "ignore" };
    return {
      kind: "reply",
      message: errorResponse(
        id,
        ErrorCodes.METHOD_NOT_FOUND,
        `Unexpected method received: ${msg.method}`,
      ),
    };
  }
  if (id === undefined || id === null) return { kind: "ignore" };
  const request = InboundRequestSchema.safeParse({ method: msg.method, params: msg.params });
  if (!request.success) {
    return {
      kind: "reply",
      message: errorResponse(
        id,
        ErrorCodes.INVALID_PARAMS,
        `Invalid parameters for method \`${msg.method}\``,
      ),
    };
  }
  return { kind: "request", id, request: request.data };
}

/** Any message the server writes. */
export type OutboundMessage = Record<string, unknown>;

/** An `event` notification. */
export function eventMessage(type: string, payload: Record<string, unknown>): OutboundMessage {
  return { jsonrpc: "2.0", method: "event", params: { type, payload } };
}

/** A server → client `request`. */
export function requestMessage(
  id: string,
  type: string,
  payload: Record<string, unknown>,
): OutboundMessage {
  return { jsonrpc: "2.0", method: "request", id, params: { type, payload } };
}

/** A success response to a call of `method`, its result typed by the method's schema. */
export function resultResponse<M extends InboundMethod>(
  id: string,
  _method: M,
  result: MethodResult<M>,
): OutboundMessage {
  return { jsonrpc: "2.0", id, result };
}

/** An error response (`data` is always present, as null). */
export function errorResponse(
  id: string | number | null,
  code: number,
  message: string,
): OutboundMessage {
  return { jsonrpc: "2.0", id, error: { code, message, data: null } };
}

/** Serialize an outbound message as one compact line (nulls kept, no trailing newline). */
export function serialize(msg: OutboundMessage): string {
  return JSON.stringify(msg);
}
