import { assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, MAIN_TS, sandboxEnv, toolCallLine } from "../helpers/kimi_process.ts";
import { createExternalTool, createSession } from "@moonshot-ai/kimi-agent-sdk";
import * as z from "zod";

Deno.test({
  name:
    "kimi-agent-sdk 0.1.8 drives the wire server: approval, external tool, two turns, no errors",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const sb = await kimiSandbox();
    try {
      const config = await sb.scriptedConfig([
        toolCallLine("tc-1", "Shell", { command: "echo ok" }),
        toolCallLine("tc-2", "open_in_ide", { path: "README.md" }),
        "text: first done",
        "text: second done",
      ]);
      const launcher = `${sb.root}/kimi`;
      await Deno.writeTextFile(
        launcher,
        `#!/bin/sh\nexec '${Deno.execPath()}' run --no-prompt -A '${MAIN_TS}' --config-file '${config}' "$@"\n`,
      );
      await Deno.chmod(launcher, 0o755);
      const opened: unknown[] = [];
      const session = createSession({
        workDir: sb.workDir,
        executable: launcher,
        env: sandboxEnv(sb),
        externalTools: [
          createExternalTool({
            name: "open_in_ide",
            description: "Open a file",
            parameters: z.object({ path: z.string() }),
            handler: (args: { path: string }) => {
              opened.push(args);
              return Promise.resolve({ output: "Opened", message: "ok" });
            },
          }),
        ],
      } as any);
      const errors: unknown[] = [];
      const turn = session.prompt("go");
      const seen: string[] = [];
      for await (const ev of turn as AsyncIterable<any>) {
        seen.push(ev.type);
        if (ev.type === "error") errors.push(ev);
        if (ev.type === "ApprovalRequest") await turn.approve(ev.payload.id, "approve");
      }
      assertEquals(errors, []);
      assertEquals((await turn.result).status, "finished");
      assertEquals(opened, [{ path: "README.md" }]);
      assertEquals(seen.filter((t) => t === "ApprovalRequest").length, 1);
      assertEquals(seen.at(-1), "TurnEnd");

      const second = session.prompt("again");
      const seen2: string[] = [];
      for await (const ev of second as AsyncIterable<any>) {
        seen2.push(ev.type);
        if (ev.type === "error") errors.push(ev);
      }
      assertEquals(errors, []);
      assertEquals((await second.result).status, "finished");
      assertEquals(seen2, ["TurnBegin", "StepBegin", "ContentPart", "StatusUpdate", "TurnEnd"]);
      await session.close();
    } finally {
      await sb.cleanup();
    }
  },
});
