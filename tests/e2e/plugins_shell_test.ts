/**
 * Plugins in the interactive shell (tmux): a plugin tool answers a turn, and `/plugins` lists,
 * disables, enables and removes plugins.
 */
import { join } from "node:path";
import { assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { TmuxKimi } from "../helpers/tmux.ts";
import { writeToolPlugin } from "../helpers/plugin_fixtures.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

Deno.test(
  "shell: a plugin tool answers a turn; /plugins lists, disables, enables and removes",
  opts,
  async () => {
    const sb = await kimiSandbox();
    try {
      await writeToolPlugin(join(sb.root, "hello"), {
        name: "hello",
        tools: [{ name: "hello_tool", script: 'echo "plugin says hi"\n' }],
      });
      const inst = await sb.run(["plugin", "install", join(sb.root, "hello")]);
      assertStringIncludes(inst.stdout, "Installed plugin 'hello' v0.1.0");
      const config = await sb.scriptedConfig([toolCallLine("tc_1", "hello_tool", {}), "text: ok"]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"]);
      try {
        await t.waitFor(promptReady);
        await t.type("hi");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Used hello_tool") && promptReady(s));
        let context = "";
        for (const d of await sb.sessionDirs()) {
          context += await Deno.readTextFile(`${d}/context.jsonl`).catch(() => "");
        }
        assertStringIncludes(context, "plugin says hi");
        const run = async (line: string, expect: RegExp) => {
          await t.type(line);
          await t.keys("Enter");
          await t.waitFor((s) => expect.test(s) && promptReady(s));
        };
        await run("/plugins", /Plugins:\n\s+hello v0\.1\.0 \(installed\)\n/);
        await run(
          "/plugins disable hello",
          /Disabled plugin 'hello'\. Run \/reload or \/new to apply\./,
        );
        await run("/plugins list", /hello v0\.1\.0 \(installed\) \[disabled\]/);
        await run(
          "/plugins enable hello",
          /Enabled plugin 'hello'\. Run \/reload or \/new to apply\./,
        );
        await run(
          "/plugins remove hello",
          /Removed plugin 'hello'\. Run \/reload or \/new to apply\./,
        );
        await run("/plugins", /No plugins installed\./);
        await run("/plugins frobnicate x", /Usage: \/plugins \[list \| enable <name>/);
        assertMatch(await t.screen(), /Usage: \/plugins/);
        await t.keys("C-d");
      } finally {
        await t.close();
      }
    } finally {
      await sb.cleanup();
    }
  },
);
