/**
 * `/vis` in the interactive shell: the shell ends and `kimi vis` serves the current session's
 * trace, its banner naming the session's URL with the token in the fragment.
 *
 * @module
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { TmuxKimi } from "../helpers/tmux.ts";

function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

Deno.test({
  name: "/vis in the shell ends it and serves the current session in kimi vis",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: traced answer"]);
    const t = await TmuxKimi.start(sb, ["--config-file", config], { width: 250, height: 50 });
    try {
      await t.waitFor(promptReady);
      await t.type("trace me");
      await t.keys("Enter");
      await t.waitFor("traced answer");
      await t.type("/vis");
      await t.keys("Enter");
      const screen = await t.waitFor(/Local:\s+http:\/\/\S+#token=\S+/);
      const m = /Local:\s+(http:\/\/127\.0\.0\.1:\d+)\/vis\/sessions\/(\S+)\/(\S+)#token=(\S+)/
        .exec(screen);
      assert(m, screen);
      const [, base, hash, id, token] = m;
      const res = await fetch(`${base}/api/vis/sessions/${hash}/${id}/summary`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const summary = await res.json();
      assertEquals([summary.turns, summary.steps], [1, 1]);
      const wire = await fetch(`${base}/api/vis/sessions/${hash}/${id}/wire`, {
        headers: { authorization: `Bearer ${token}` },
      }).then((r) => r.json());
      assertEquals(wire.events[0].payload.user_input, "trace me");
      await t.keys("C-c");
      await t.waitFor("[exit 0]");
    } finally {
      await t.close();
      await sb.cleanup();
    }
  },
});
