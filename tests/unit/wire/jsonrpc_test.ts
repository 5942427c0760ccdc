import {
  INBOUND_METHODS,
  parseInbound,
  PromptResultSchema,
  ReplayResultSchema,
  WireMethods,
} from "../../../lib/wire/jsonrpc.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";

Deno.test("jsonrpc: every inbound method has a params and a result schema", () => {
  assertEquals(Object.keys(WireMethods).sort(), [...INBOUND_METHODS].sort());
});

Deno.test("jsonrpc: a request parses into its method's typed params (defaults applied)", () => {
  const init = parseInbound(JSON.stringify({
    jsonrpc: "2.0",
    id: "1",
    method: "initialize",
    params: { protocol_version: "1.10", capabilities: {}, hooks: [{ id: "h", event: "Stop" }] },
  }));
  assert(init.kind === "request" && init.request.method === "initialize");
  assertEquals(init.request.params.capabilities, {
    supports_question: false,
    supports_plan_mode: false,
  });
  assertEquals(init.request.params.hooks, [{ id: "h", event: "Stop", matcher: "", timeout: 30 }]);

  const cancel = parseInbound(JSON.stringify({ jsonrpc: "2.0", id: "2", method: "cancel" }));
  assertEquals(cancel, {
    kind: "request",
    id: "2",
    request: { method: "cancel", params: undefined },
  });

  const plan = parseInbound(
    JSON.stringify({ jsonrpc: "2.0", id: "3", method: "set_plan_mode", params: { enabled: 1 } }),
  );
  assertEquals(plan, {
    kind: "reply",
    message: {
      jsonrpc: "2.0",
      id: "3",
      error: { code: -32602, message: "Invalid parameters for method `set_plan_mode`", data: null },
    },
  });
});

Deno.test("jsonrpc: result schemas accept what the server answers and reject other shapes", () => {
  assert(PromptResultSchema.safeParse({ status: "max_steps_reached", steps: 3 }).success);
  assert(!PromptResultSchema.safeParse({ status: "done" }).success);
  assert(ReplayResultSchema.safeParse({ status: "finished", events: 2, requests: 0 }).success);
  assert(!ReplayResultSchema.safeParse({ status: "finished" }).success);
});
