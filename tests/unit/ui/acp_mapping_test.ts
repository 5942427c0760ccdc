import { assertEquals, assertThrows } from "../../helpers/assert.ts";
import { promptToUserInput, UnsupportedPromptContent } from "../../../lib/ui/acp/prompt.ts";
import { toolKind, toolTitle, TurnMapper } from "../../../lib/ui/acp/updates.ts";
import { modelChoices, parseModelId } from "../../../lib/ui/acp/session_config.ts";
import { ConfigSchema } from "../../../lib/config/schema.ts";
import { event } from "../../../lib/wire/messages.ts";
import { toolError, toolOk } from "../../../lib/tooling/result.ts";

Deno.test("acp prompt: text, image, embedded resources and links; audio refused", () => {
  assertEquals(
    promptToUserInput([
      { type: "text", text: "look" },
      { type: "image", mimeType: "image/png", data: "iVBOR" },
      { type: "resource", resource: { uri: "file:///a.ts", text: "let x = 1;" } },
      { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA", mimeType: "x/y" } },
      { type: "resource_link", uri: "file:///c.md", name: "c'.md" },
    ]),
    [
      { type: "text", text: "look" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR", id: null } },
      { type: "text", text: "<resource uri='file:///a.ts'>\nlet x = 1;\n</resource>" },
      { type: "text", text: "<resource uri='file:///b.bin' mime_type='x/y' />" },
      { type: "text", text: "<resource_link uri='file:///c.md' name='c&#39;.md' />" },
    ],
  );
  assertThrows(
    () => promptToUserInput([{ type: "audio", data: "AA", mimeType: "audio/wav" }]),
    UnsupportedPromptContent,
  );
  assertThrows(() => promptToUserInput([]), UnsupportedPromptContent);
});

Deno.test("acp updates: titles and kinds from the key argument", () => {
  assertEquals(toolTitle("Shell", '{"command":"ls -la"}'), "Shell: ls -la");
  assertEquals(toolTitle("Think", "not json"), "Think");
  assertEquals(toolKind("StrReplaceFile"), "edit");
  assertEquals(toolKind("Grep"), "search");
  assertEquals(toolKind("my_mcp_tool"), "other");
});

Deno.test("acp updates: streamed tool call arguments, diff and error results, notifications", () => {
  const m = new TurnMapper({ turnId: "T", workDir: "/w" });
  assertEquals(
    m.map(event("ToolCall", {
      type: "function",
      id: "c1",
      function: { name: "StrReplaceFile", arguments: '{"path": "src/' },
      extras: null,
    })),
    [{
      sessionUpdate: "tool_call",
      toolCallId: "T/c1",
      title: "StrReplaceFile",
      kind: "edit",
      status: "in_progress",
      // partial argument JSON is not shown (issue 32 item 17)
      content: [],
      locations: [],
    }],
  );
  const part = m.map(event("ToolCallPart", { arguments_part: 'a.ts", "line_offset": 3}' }));
  assertEquals(part, [{
    sessionUpdate: "tool_call_update",
    toolCallId: "T/c1",
    title: "StrReplaceFile: src/a.ts",
    content: [{
      type: "content",
      content: { type: "text", text: '{"path": "src/a.ts", "line_offset": 3}' },
    }],
    locations: [{ path: "/w/src/a.ts", line: 3 }],
    rawInput: { path: "src/a.ts", line_offset: 3 },
  }]);
  assertEquals(
    m.map(event("ToolResult", {
      tool_call_id: "c1",
      return_value: toolOk({
        message: "File successfully edited.",
        display: [{
          type: "diff",
          path: "/w/src/a.ts",
          old_text: "a",
          new_text: "b",
          old_start: 1,
          new_start: 1,
          is_summary: false,
        }],
      }),
    })),
    [{
      sessionUpdate: "tool_call_update",
      toolCallId: "T/c1",
      status: "completed",
      content: [{ type: "diff", path: "/w/src/a.ts", oldText: "a", newText: "b" }],
    }],
  );
  assertEquals(
    m.map(event("ToolResult", {
      tool_call_id: "zz",
      return_value: toolError({ message: "boom", brief: "Failed" }),
    })),
    [{
      sessionUpdate: "tool_call_update",
      toolCallId: "T/zz",
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "boom" } }],
    }],
  );
  assertEquals(
    m.map(event("Notification", {
      id: "n",
      category: "task",
      type: "done",
      source_kind: "task",
      source_id: "t",
      title: "Task done",
      body: "exit 0",
      severity: "info",
      created_at: 0,
      payload: {},
    })),
    [{
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "[Notification] Task done\nexit 0" },
    }],
  );
  assertEquals(m.map(event("StepBegin", { n: 1 })), []);
  assertEquals(
    m.map(event("StatusUpdate", { context_tokens: 1200, max_context_tokens: 100000 })),
    [{ sessionUpdate: "usage_update", used: 1200, size: 100000 }],
  );
  assertEquals(m.map(event("StatusUpdate", { plan_mode: true })), []);
});

Deno.test("acp models: thinking variants; always-thinking only with thinking", () => {
  const config = ConfigSchema.parse({
    models: {
      plain: { provider: "p", model: "m1", max_context_size: 1 },
      think: { provider: "p", model: "m2", max_context_size: 1, capabilities: ["thinking"] },
      always: {
        provider: "p",
        model: "m3",
        max_context_size: 1,
        capabilities: ["always_thinking"],
      },
    },
    providers: { p: { type: "kimi", base_url: "http://x", api_key: "k" } },
  });
  assertEquals(modelChoices(config).map((c) => c.id), [
    "plain",
    "think",
    "think,thinking",
    "always,thinking",
  ]);
  assertEquals(parseModelId("always", config), null);
  assertEquals(parseModelId("think,thinking", config)?.thinking, true);
});
