/**
 * PTY test of approval rules in the interactive shell: the approval select offers the derived
 * command prefix for the session, `/permissions` lists, adds and removes rules.
 */
import { assert, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { TmuxKimi } from "../helpers/tmux.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

Deno.test(
  "shell: approval offers the command prefix for the session; /permissions lists, adds and removes rules",
  opts,
  async () => {
    const sb = await kimiSandbox();
    try {
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: "echo first-run-77" }),
        "text: First done.",
        toolCallLine("c2", "Shell", { command: "echo second-run-88" }),
        "text: Second done.",
        toolCallLine("c3", "Shell", { command: "ls -d ." }),
        "text: Third done.",
      ]);
      await Deno.mkdir(`${sb.workDir}/.kimi`);
      await Deno.writeTextFile(
        `${sb.workDir}/.kimi/config.toml`,
        '[[permission.rules]]\npattern = "Shell(git"\ndecision = "deny"\n',
      );
      const t = await TmuxKimi.start(sb, ["--config-file", config], { width: 160 });
      try {
        const start = await t.waitFor(promptReady);
        assertStringIncludes(
          start,
          `Approval rule problem in ${sb.workDir}/.kimi/config.toml:1: rule "Shell(git": ` +
            'missing closing ")" in "Shell(git"; ignored',
        );
        await t.type("run it");
        await t.keys("Enter");
        let screen = await t.waitFor("Allow this action?");
        assertStringIncludes(screen, "1. Approve once");
        assertStringIncludes(screen, "2. Approve `echo` commands for this session");
        assertStringIncludes(
          screen,
          `3. Always approve \`echo\` commands (save rule to ${config})`,
        );
        assertStringIncludes(screen, "4. Reject");
        await t.keys("2");
        screen = await t.waitFor((s) => s.includes("First done.") && promptReady(s));
        assertStringIncludes(screen, "✓ Approved `echo` commands for this session");

        await t.type("again");
        await t.keys("Enter");
        screen = await t.waitFor((s) => s.includes("Second done.") && promptReady(s));
        assertStringIncludes(screen, "second-run-88");
        assert(
          !screen.split("Second done.")[0].split("again").at(-1)!.includes("Allow this action?"),
        );

        await t.type("/permissions add deny Shell(ls *)");
        await t.keys("Enter");
        await t.waitFor(`Added deny Shell(ls *) to ${config}.`);
        await t.type("/permissions");
        await t.keys("Enter");
        screen = await t.waitFor("Approval rules (deny wins over ask, ask over allow):");
        assertStringIncludes(screen, `1. deny   Shell(ls *)    ${config}:`);
        assertStringIncludes(screen, "2. allow  Shell(echo *)  this session");

        await t.type("list it");
        await t.keys("Enter");
        screen = await t.waitFor((s) => s.includes("Third done.") && promptReady(s));
        assertStringIncludes(screen, "✗ Used Shell (ls -d .)\n  ↳ Denied by rule Shell(ls *)");

        await t.type("/permissions remove 2");
        await t.keys("Enter");
        await t.waitFor("Revoked the session grant Shell(echo *).");
        await t.type("/permissions remove 1");
        await t.keys("Enter");
        await t.waitFor(`Removed deny Shell(ls *) from ${config}.`);
        const saved = JSON.parse(await Deno.readTextFile(config));
        assert(Array.isArray(saved.permission.rules) && saved.permission.rules.length === 0);
      } finally {
        await t.close();
      }
    } finally {
      await sb.cleanup();
    }
  },
);
