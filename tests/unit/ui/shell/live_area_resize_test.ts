/**
 * The live area is erased exactly when the terminal narrows under it, in a real terminal
 * (tmux, which re-wraps rows at once): even a frame laid out for the old width, written before
 * the program learnt the new one, leaves nothing of the rows before it behind.
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import { kimiSandbox } from "../../../helpers/kimi_process.ts";
import { TmuxKimi } from "../../../helpers/tmux.ts";

const PROGRAM = new URL("./resize_race_program.ts", import.meta.url).pathname;

Deno.test(
  "shell live area: a frame laid out for the old width and read after the terminal narrowed leaves no rows of the last frame behind",
  { sanitizeResources: false, sanitizeOps: false },
  async () => {
    const sb = await kimiSandbox();
    try {
      const t = await TmuxKimi.start(sb, ["110", "5"], { main: PROGRAM, width: 110, height: 40 });
      try {
        await t.waitFor("status 1");
        // the terminal narrows and re-wraps the live rows; the program does not know yet
        await t.resize(64, 40);
        await t.type("f.");
        await t.waitFor("status 2");
        // the program learns the width (SIGWINCH) and redraws for it
        await t.type("w64.f.");
        await t.waitFor("status 3");
        await t.type("q.");
        await t.waitFor("[exit 0]");
        const lines = (await t.history()).split("\n").filter((l) => l.trim() !== "");
        const at = lines.indexOf("committed 1");
        assertEquals(
          lines.slice(at, at + 7),
          [
            "committed 1",
            "committed 2",
            "committed 3",
            "committed 4",
            "committed 5",
            "after",
            "[exit 0]",
          ],
          lines.join("\n"),
        );
        assertEquals(lines.filter((l) => /pending|status/.test(l)), [], lines.join("\n"));
      } finally {
        await t.close();
      }
    } finally {
      await sb.cleanup();
    }
  },
);

Deno.test(
  "shell live area: redrawn from the screen's top-left corner, it leaves no copy in the terminal's history",
  { sanitizeResources: false, sanitizeOps: false },
  async () => {
    const sb = await kimiSandbox();
    try {
      // nothing printed before it: the live area's top is the screen's first row
      const t = await TmuxKimi.start(sb, ["80", "0"], { main: PROGRAM, width: 80, height: 40 });
      try {
        await t.waitFor("status 1");
        await t.type("f.");
        await t.waitFor("status 2");
        await t.type("f.");
        await t.waitFor("status 3");
        await t.type("q.");
        await t.waitFor("[exit 0]");
        const lines = (await t.history()).split("\n").filter((l) => l.trim() !== "");
        assertEquals(lines, ["after", "[exit 0]"]);
      } finally {
        await t.close();
      }
    } finally {
      await sb.cleanup();
    }
  },
);
