/**
 * `/changelog` (`/release-notes`): the release notes of recent versions, newest first (this
 * version's first), shipped with the program; `/changelog all` shows every shipped version.
 *
 * @module
 */
import { recentReleaseNotes, RELEASE_NOTES } from "../../../release_notes.ts";
import { VERSION } from "../../../version.ts";
import { style } from "../theme.ts";
import type { ShellCommand } from "./command.ts";

/** How many versions `/changelog` shows. */
const RECENT_VERSIONS = 5;

/** `/changelog`. */
export const changelogCommand: ShellCommand = {
  name: "changelog",
  aliases: ["release-notes"],
  description: "Show the release notes of recent versions (/changelog all: every version)",
  run(ctx, args) {
    const shown = args.trim() === "all" ? RELEASE_NOTES : recentReleaseNotes(RECENT_VERSIONS);
    if (shown.length === 0) {
      ctx.print(`No release notes are shipped for kimi ${VERSION}.`);
      return Promise.resolve();
    }
    const lines: string[] = [];
    for (const r of shown) {
      if (lines.length > 0) lines.push("");
      lines.push(
        style.bold(r.version === VERSION ? `What's new in kimi ${r.version}` : `kimi ${r.version}`),
      );
      lines.push(...r.notes.map((n) => `  • ${n}`));
    }
    const more = RELEASE_NOTES.length - shown.length;
    if (more > 0) lines.push("", style.dim(`${more} older versions: /changelog all`));
    ctx.print(lines.join("\n"));
    return Promise.resolve();
  },
};
