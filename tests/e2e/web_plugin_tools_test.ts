/**
 * Plugin tools in `kimi web`: a session the server hosts offers the installed plugin's tools
 * after the agent's own, and a call over the socket runs the plugin with its arguments on stdin
 * (the same contract as the shell, print, wire and ACP front ends).
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { startWeb } from "../helpers/web_server.ts";
import { join } from "node:path";
import { writeToolPlugin } from "../helpers/plugin_fixtures.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "kimi web: a session calls an installed plugin's tool over the socket",
  ...opts,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig([
      toolCallLine("g1", "echo_args", { name: "Web" }),
      "text: greeted.",
    ]);
    const plugin = await writeToolPlugin(join(sb.root, "echoer"), {
      name: "echoer",
      tools: [{ name: "echo_args", script: 'printf "got: "; cat\n' }],
    });
    const installed = await sb.run(["--config-file", config, "plugin", "install", plugin]);
    assertEquals(installed.code, 0, installed.stderr);
    const web = await startWeb(sb, { config, rootArgs: ["--yolo"] });
    try {
      const created = await web.api("/api/sessions/", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ work_dir: sb.workDir }),
      });
      assertEquals(created.status, 200);
      const id = (await created.json()).session_id as string;
      const ws = await web.socket(id);
      await ws.waitFor((f) => f.method === "history_complete");
      const init = await ws.initialize();
      assert("result" in init, JSON.stringify(init));
      const from = ws.frames.length;
      ws.send({ jsonrpc: "2.0", id: "p1", method: "prompt", params: { user_input: "greet" } });
      const done = await ws.waitFor((f) => f.id === "p1" && ("result" in f || "error" in f), from);
      assertEquals(done.result, { status: "finished" });
      const results = ws.frames.slice(from).filter((f) =>
        f.method === "event" && (f.params as { type: string }).type === "ToolResult"
      ).map((f) =>
        (f.params as { payload: { return_value: { output: string; is_error: boolean } } })
          .payload.return_value
      );
      assertEquals(results.length, 1, JSON.stringify(ws.frames.slice(from)).slice(0, 2000));
      assertEquals(results[0].is_error, false);
      // the arguments arrived on the plugin's stdin as JSON
      assertStringIncludes(results[0].output, 'got: {"name":"Web"}');
    } finally {
      await web.stop();
      await sb.cleanup();
    }
  },
});
