/**
 * Goals and swarms in the interactive shell (`main.ts` in a real PTY under tmux): the line a
 * goal run ends with, and `/swarm` listing every item of a swarm.
 */
import { assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { TmuxKimi } from "../helpers/tmux.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

const LONG = "I checked the item I was given, read what was relevant, verified the " +
  "result and changed nothing else, so there is nothing left open for the parent agent " +
  "to follow up on once it reads this report of mine.";

Deno.test(
  "shell: a goal run ends with its outcome line; /swarm lists every item",
  opts,
  async () => {
    const sb = await kimiSandbox();
    try {
      const config = await sb.scriptedConfig([
        "text: tidied part one",
        "text: tidied part two",
        toolCallLine("sw", "AgentSwarm", {
          description: "check dirs",
          prompt_template: "Check {{item}}",
          items: ["alpha", "beta", "gamma"],
          concurrency: 2,
        }),
        `text: ALPHA-ish ${LONG}`,
        `text: BETA-ish ${LONG}`,
        "error: 400 gamma refused",
        "text: Swarm reviewed.",
      ], { loop_control: { max_retries_per_step: 1 } });
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        await t.type("/goal --max-turns 2 Tidy the repo");
        await t.keys("Enter");
        let screen = await t.waitFor((s) => s.includes("◎ Goal") && promptReady(s));
        assertStringIncludes(screen, "◎ Goal budget exhausted (budget: turns 2/2): Tidy the repo");

        await t.type("check the dirs");
        await t.keys("Enter");
        screen = await t.waitFor((s) => s.includes("Swarm reviewed.") && promptReady(s));
        assertStringIncludes(screen, "Used AgentSwarm");

        await t.type("/swarm");
        await t.keys("Enter");
        screen = await t.waitFor((s) => s.includes("#3 [") && promptReady(s));
        assertStringIncludes(
          screen,
          "check dirs: 3 items, concurrency 2; ok 2, error 1, cancelled 0",
        );
        for (const item of ["alpha", "beta", "gamma"]) assertStringIncludes(screen, ` ${item}`);
        assertStringIncludes(screen, "gamma refused");
      } finally {
        await t.close();
      }
    } finally {
      await sb.cleanup();
    }
  },
);
