/**
 * Public API of kimi for Deno, for embedding: a typed client of the `kimi --wire` JSON-RPC
 * server and the wire message types it streams.
 *
 * @example
 * ```ts
 * import { KimiWireClient } from "./mod.ts";
 *
 * const client = KimiWireClient.spawn({ onApproval: () => ({ response: "approve" }) });
 * await client.initialize({ client: { name: "my-app", version: "1.0.0" } });
 * const turn = client.prompt("Say hello");
 * for await (const msg of turn) {
 *   if (msg.type === "ContentPart" && msg.payload.type === "text") console.log(msg.payload.text);
 * }
 * console.log(await turn.result);
 * await client.close();
 * ```
 *
 * @module
 */
export {
  type ApprovalAnswer,
  type ExternalToolHandler,
  type InitializeOptions,
  type InitializeResult,
  KimiWireClient,
  type KimiWireClientOptions,
  type PromptHandle,
  type PromptResult,
  type WireRequestItem,
  WireRpcError,
  type WireStreamItem,
} from "./lib/wire/client.ts";
export {
  type ApprovalOption,
  type ApprovalResponseKind,
  type Envelope,
  type EventPayload,
  type EventType,
  fromEnvelope,
  type ParsedEnvelope,
  type Question,
  type RequestPayload,
  type RequestResult,
  type RequestType,
  toEnvelope,
  type ToolReturnValue,
  type UserInput,
  type WireEvent,
} from "./lib/wire/messages.ts";
export type { DisplayBlock } from "./lib/wire/display.ts";
export {
  type ApprovalChoice,
  approvalChoices,
  type ApprovalOptionKind,
  describeGrant,
} from "./lib/wire/approval_options.ts";
export { WIRE_PROTOCOL_VERSION, WIRE_SERVER_PROTOCOL_VERSION } from "./lib/version.ts";
