/**
 * How a turn's error maps to an outcome (`lib/soul/turn_outcome.ts`), decided once for print,
 * wire, ACP and the shell: each error class lands in its own kind, in the order the front ends
 * relied on (a login that ran out is not a plain provider error; an abort wins over whatever
 * the provider threw).
 *
 * @module
 */
import { assertEquals } from "../../helpers/assert.ts";
import {
  APIConnectionError,
  APIStatusError,
  AUTH_EXPIRED_MESSAGE,
  AuthExpiredError,
  ChatProviderError,
} from "../../../lib/llm/errors.ts";
import { SessionWriteError } from "../../../lib/session/jsonl.ts";
import {
  LLMNotSet,
  LLMNotSupported,
  MaxStepsReached,
  RunCancelled,
} from "../../../lib/soul/errors.ts";
import { turnOutcome } from "../../../lib/soul/turn_outcome.ts";

Deno.test("turn outcome: each error class has its own kind and message", () => {
  assertEquals(turnOutcome(new RunCancelled()), { kind: "cancelled" });
  assertEquals(turnOutcome(new MaxStepsReached(7)), {
    kind: "max_steps",
    steps: 7,
    message: "Max number of steps reached: 7",
  });
  assertEquals(turnOutcome(new LLMNotSet()), { kind: "llm_not_set", message: "LLM not set" });
  assertEquals(turnOutcome(new LLMNotSupported("m", ["image_in"])), {
    kind: "llm_not_supported",
    message: "LLM model 'm' does not support required capability: image_in.",
  });
  const expired = new AuthExpiredError();
  assertEquals(turnOutcome(expired), {
    kind: "auth_expired",
    message: AUTH_EXPIRED_MESSAGE,
    error: expired,
  });
  const write = new SessionWriteError("/s/context.jsonl", new Error("disk full"), true);
  assertEquals(turnOutcome(write), { kind: "session_write", message: write.message });
  const bug = new TypeError("x is undefined");
  assertEquals(turnOutcome(bug), { kind: "unexpected", message: "x is undefined", error: bug });
  assertEquals(turnOutcome("plain string"), {
    kind: "unexpected",
    message: "plain string",
    error: "plain string",
  });
});

Deno.test("turn outcome: provider errors say whether they are retryable or unauthorized", () => {
  const conn = new APIConnectionError();
  assertEquals(turnOutcome(conn), {
    kind: "provider",
    message: "Connection error.",
    error: conn,
    retryable: true,
    unauthorized: false,
    status: null,
  });
  const s429 = new APIStatusError(429, "slow down");
  assertEquals(turnOutcome(s429).kind === "provider" && turnOutcome(s429), {
    kind: "provider",
    message: "slow down",
    error: s429,
    retryable: true,
    unauthorized: false,
    status: 429,
  });
  const s401 = new APIStatusError(401, "bad key");
  const o401 = turnOutcome(s401);
  assertEquals(o401.kind === "provider" && [o401.retryable, o401.unauthorized, o401.status], [
    false,
    true,
    401,
  ]);
  const other = new ChatProviderError("odd");
  const oOther = turnOutcome(other);
  assertEquals(oOther.kind === "provider" && [oOther.retryable, oOther.unauthorized], [
    false,
    false,
  ]);
});

Deno.test("turn outcome: an aborted turn is cancelled whatever the provider threw", () => {
  assertEquals(turnOutcome(new APIConnectionError(), { aborted: true }), { kind: "cancelled" });
  assertEquals(turnOutcome(new Error("aborted"), { aborted: true }), { kind: "cancelled" });
  assertEquals(turnOutcome(new Error("aborted"), { aborted: false }).kind, "unexpected");
});
