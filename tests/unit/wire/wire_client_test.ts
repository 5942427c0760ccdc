import { assertEquals } from "../../helpers/assert.ts";
import { denoDir, kimiSandbox, toolCallLine } from "../../helpers/kimi_process.ts";
import { KimiWireClient, type WireStreamItem } from "../../../mod.ts";

Deno.test("KimiWireClient: initialize, approval callback, external tool, two turns", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("tc-1", "Shell", { command: "echo ok" }),
      toolCallLine("tc-2", "open_in_ide", { path: "README.md" }),
      "text: all done",
    ]);
    const agent = `${sb.root}/agent.yaml`;
    await Deno.writeTextFile(agent, 'version: 1\nagent:\n  extend: default\n  tools: ["Shell"]\n');
    const approvals: string[] = [];
    const opened: unknown[] = [];
    const client = KimiWireClient.spawn({
      args: ["--config-file", config, "--agent-file", agent, "--work-dir", sb.workDir],
      env: { HOME: sb.home, KIMI_SHARE_DIR: sb.shareDir, DENO_DIR: denoDir() },
      stderr: "null",
      onApproval: (req) => {
        approvals.push(req.description);
        return { response: "approve" };
      },
      externalTools: [{
        name: "open_in_ide",
        description: "Open a file",
        parameters: { type: "object", properties: { path: { type: "string" } } },
        call: (args) => {
          opened.push(args);
          return { is_error: false, output: "Opened", message: "", display: [], extras: null };
        },
      }],
    });
    const init = await client.initialize({ client: { name: "test", version: "1" } });
    assertEquals(init.external_tools, { accepted: ["open_in_ide"], rejected: [] });

    const turn = client.prompt("go");
    const seen: WireStreamItem[] = [];
    for await (const item of turn) seen.push(item);
    assertEquals(await turn.result, { status: "finished" });
    assertEquals(approvals, ["Run command `echo ok`"]);
    assertEquals(opened, [{ path: "README.md" }]);
    assertEquals(seen[0], { type: "TurnBegin", payload: { user_input: "go" } });
    assertEquals(seen.at(-1), { type: "TurnEnd", payload: {} });
    assertEquals(seen.filter((s) => s.type === "ToolResult").length, 2);

    const second = client.prompt("again");
    for await (const _ of second) { /* drain */ }
    await second.result.then(
      () => {
        throw new Error("expected a provider error");
      },
      (err) => assertEquals(err.code, -32003),
    );
    assertEquals((await client.close()).code, 0);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("KimiWireClient: onNotification hears a background task finish between prompts", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      toolCallLine("bg", "Shell", {
        command: "while [ ! -f go ]; do sleep 0.05; done; echo done-here",
        run_in_background: true,
        description: "waiter",
      }),
      "text: started",
    ]);
    const heard = Promise.withResolvers<{ title: string; type: string; body: string }>();
    const client = KimiWireClient.spawn({
      args: ["--config-file", config, "--work-dir", sb.workDir, "--yolo"],
      env: { HOME: sb.home, KIMI_SHARE_DIR: sb.shareDir, DENO_DIR: denoDir() },
      stderr: "null",
      onNotification: (n) => heard.resolve(n),
    });
    const init = await client.initialize({});
    assertEquals(init.protocol_version, "1.12");
    const turn = client.prompt("start");
    for await (const _ of turn) { /* drain */ }
    assertEquals(await turn.result, { status: "finished" });
    await Deno.writeTextFile(`${sb.workDir}/go`, "");
    const n = await heard.promise;
    assertEquals(n.title, "Background task completed: waiter");
    assertEquals(n.type, "task.completed");
    assertEquals(n.body.includes("done-here"), true);
    assertEquals((await client.close()).code, 0);
  } finally {
    await sb.cleanup();
  }
});
