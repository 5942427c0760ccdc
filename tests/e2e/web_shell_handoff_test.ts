import { assert, assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { TmuxKimi } from "../helpers/tmux.ts";

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

Deno.test({
  name:
    "/web in the shell ends it and opens the current session in kimi web, token in the fragment",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const sb = await kimiSandbox();
    const config = await sb.scriptedConfig(["text: the shell answer"]);
    const t = await TmuxKimi.start(sb, ["--config-file", config], { width: 250, height: 50 });
    try {
      await t.waitFor(promptReady);
      await t.type("hello from the shell");
      await t.keys("Enter");
      await t.waitFor("the shell answer");
      await t.type("/web");
      await t.keys("Enter");
      const screen = await t.waitFor(/Opening session \S+: http:\/\/\S+/);
      const m = /Opening session (\S+): http:\/\/127\.0\.0\.1:(\d+)\/\?session=(\S+)#token=(\S+)/
        .exec(screen);
      assert(m, screen);
      const [, id, port, inUrl, token] = m;
      assertEquals(inUrl, id);
      const res = await fetch(`http://127.0.0.1:${port}/api/sessions/${id}`, {
        headers: { authorization: `Bearer ${decodeURIComponent(token)}` },
      });
      const info = await res.json();
      assertEquals(info.session_id, id);
      assertEquals(info.title, "hello from the shell");
      assertEquals(info.work_dir, sb.workDir);
      await t.keys("C-c");
      await t.waitFor("[exit 0]");
    } finally {
      await t.close();
      await sb.cleanup();
    }
  },
});
