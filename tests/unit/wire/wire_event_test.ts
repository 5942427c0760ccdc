import { event, statusUpdate } from "../../../lib/wire/messages.ts";
import { assertEquals } from "../../helpers/assert.ts";

Deno.test("event(): absent defaulted fields are filled from the schema, given ones kept", () => {
  assertEquals(statusUpdate({ plan_mode: true }), {
    type: "StatusUpdate",
    payload: {
      plan_mode: true,
      context_usage: null,
      context_tokens: null,
      max_context_tokens: null,
      token_usage: null,
      message_id: null,
      mcp_status: null,
    },
  });
  assertEquals(event("HookResolved", { event: "Stop", target: "x" }), {
    type: "HookResolved",
    payload: { event: "Stop", target: "x", action: "allow", reason: "", duration_ms: 0 },
  });
  const payload = { n: 3 };
  const step = event("StepBegin", payload);
  assertEquals(step, { type: "StepBegin", payload: { n: 3 } });
  assertEquals(step.payload === payload, true, "no copy when nothing is defaulted");
  // @ts-expect-error a field without a default stays required
  event("StepBegin", {});
});
