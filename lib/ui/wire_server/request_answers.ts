/**
 * Turning what a wire client sent back (or did not) into the answer a pending server request
 * resolves with: validated client responses, safe fallbacks for malformed ones, and the
 * settlement of requests no client will answer (turn ended, connection closed, unsupported).
 *
 * @module
 */
import { toolError } from "../../tooling/result.ts";
import type { ErrorObject } from "../../wire/jsonrpc.ts";
import { log } from "../../log.ts";
import {
  type PendingRequest,
  RequestResultSchemas,
  type RequestType,
} from "../../wire/messages.ts";

/** Why still-pending requests are being settled. */
export type SettleReason = "turn_ended" | "wire_closed" | "dropped";

/** Resolve `req` with the client's response (`result`, or `error`), validated per request type. */
export function answerFromClient(
  req: PendingRequest,
  result: unknown,
  error: ErrorObject | null,
): void {
  const type = req.type as RequestType;
  const payloadId = req.payload.id;
  if (type === "ApprovalRequest") {
    const parsed = error ? null : RequestResultSchemas.ApprovalRequest.safeParse(result);
    if (!parsed?.success) {
      answer(req, { request_id: payloadId, response: "reject", feedback: "" });
      return;
    }
    if (parsed.data.request_id !== payloadId) {
      log(
        "WARNING",
        "wire",
        `approval answer for ${payloadId} names request ${parsed.data.request_id}`,
      );
    }
    answer(req, { ...parsed.data, request_id: payloadId });
  } else if (type === "ToolCallRequest") {
    if (error) {
      answer(req, {
        tool_call_id: payloadId,
        return_value: toolError({ message: error.message, brief: "External tool error" }),
      });
      return;
    }
    const parsed = RequestResultSchemas.ToolCallRequest.safeParse(result);
    answer(
      req,
      parsed.success ? parsed.data : {
        tool_call_id: payloadId,
        return_value: toolError({
          message: "Invalid tool result payload from client.",
          brief: "Invalid tool result",
        }),
      },
    );
  } else if (type === "QuestionRequest") {
    const parsed = error ? null : RequestResultSchemas.QuestionRequest.safeParse(result);
    answer(req, parsed?.success ? parsed.data : { request_id: payloadId, answers: {} });
  } else {
    const parsed = error ? null : RequestResultSchemas.HookRequest.safeParse(result);
    answer(
      req,
      parsed?.success ? parsed.data : { request_id: payloadId, action: "allow", reason: "" },
    );
  }
}

/** Settle a request the client will not answer. */
export function settleUnanswered(req: PendingRequest, reason: SettleReason): void {
  if (req.settled) return;
  const id = req.payload.id;
  switch (req.type as RequestType) {
    case "ApprovalRequest": {
      const p = req.payload as { source_kind?: string | null };
      if (reason !== "dropped" && p.source_kind === "background_agent") return;
      answer(req, { request_id: id, response: "reject", feedback: "" });
      return;
    }
    case "ToolCallRequest":
      answer(req, {
        tool_call_id: id,
        return_value: reason === "turn_ended"
          ? toolError({
            message: "Agent turn ended before tool result was received.",
            brief: "Turn ended",
          })
          : reason === "wire_closed"
          ? toolError({
            message: "Wire connection closed before tool result was received.",
            brief: "Wire closed",
          })
          : toolError({
            message: "The wire client does not support external tool calls.",
            brief: "Not supported",
          }),
      });
      return;
    case "QuestionRequest":
      answer(req, { request_id: id, answers: {} });
      return;
    case "HookRequest":
      answer(req, { request_id: id, action: "allow", reason: "" });
  }
}

function answer(req: PendingRequest, result: unknown): void {
  (req as PendingRequest<RequestType>).resolve(result as never);
}
