/**
 * End-to-end tests of the shell for issue 32 ("A day with kimi"): what a new user meets in a
 * day of use. `main.ts` runs in a real PTY under tmux with the scripted provider or the mock
 * OpenAI-compatible server; every wait polls the screen (no fixed sleeps).
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import { TmuxKimi } from "../helpers/tmux.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

async function withSandbox(fn: (sb: KimiSandbox) => Promise<void>): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

/** The parsed `state.json` of the only session in the sandbox. */
async function onlySessionState(sb: KimiSandbox): Promise<Record<string, unknown>> {
  const dirs = await sb.sessionDirs();
  assertEquals(dirs.length, 1, dirs.join("\n"));
  return JSON.parse(await Deno.readTextFile(`${dirs[0]}/state.json`));
}

Deno.test(
  "shell (issue 32 item 1): /title persists to state.json, before and after the first turn, and a continued session shows it",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig(["text: hi there", "text: again"]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        await t.type("/title Before any turn");
        await t.keys("Enter");
        await t.waitFor((s) =>
          s.includes("Session title set to: Before any turn") && promptReady(s)
        );
        assertEquals((await onlySessionState(sb)).custom_title, "Before any turn");
        await t.type("hello");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("hi there") && promptReady(s));
        await t.type("/title Renamed later");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Session title set to: Renamed later") && promptReady(s));
        assertEquals((await onlySessionState(sb)).custom_title, "Renamed later");
        await t.type("/exit");
        await t.keys("Enter");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
      const again = await TmuxKimi.start(sb, ["--config-file", config, "-C"]);
      try {
        await again.waitFor(promptReady);
        await again.type("/title");
        await again.keys("Enter");
        const s = await again.waitFor((x) => x.includes("Title: ") && promptReady(x));
        assertStringIncludes(s, "Title: Renamed later");
      } finally {
        await again.close();
      }
    }),
);
