import { assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";

// The model's argument string with its own spacing, key order and escapes: a client that hashes
// or diffs `ToolCallRequest.arguments` must see these bytes, not a re-serialisation.
const RAW_ARGS = '{ "path" :  "README.md",\n  "line": 3, "note": "caf\\u00e9" }';

Deno.test("wire: ToolCallRequest.arguments is the model's raw argument string, byte for byte", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      `tool_call: ${JSON.stringify({ id: "tc-raw", name: "open_in_ide", arguments: RAW_ARGS })}`,
      "text: opened",
    ]);
    const wire = spawnWire(sb, ["--config-file", config]);
    await wire.call("init", "initialize", {
      protocol_version: "1.10",
      external_tools: [{
        name: "open_in_ide",
        description: "Open a file in the IDE",
        parameters: { type: "object", properties: { path: { type: "string" } } },
      }],
    });
    const requests: WireLine[] = [];
    const { response } = await wire.call("p1", "prompt", { user_input: "open" }, (msg) => {
      requests.push(msg);
      return {
        tool_call_id: msg.params.payload.id,
        return_value: { is_error: false, output: "ok", message: "", display: [] },
      };
    });
    assertEquals(response.result, { status: "finished" });
    assertEquals(requests.length, 1);
    assertEquals(requests[0].params.payload, {
      id: "tc-raw",
      name: "open_in_ide",
      arguments: RAW_ARGS,
    });
    assertEquals((await wire.finish()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
