/**
 * `/changelog` (`/release-notes`): this version's release notes, shipped with the program.
 *
 * @module
 */
import { releaseNotesFor } from "../../../release_notes.ts";
import { VERSION } from "../../../version.ts";
import { style } from "../theme.ts";
import type { ShellCommand } from "./command.ts";

/** `/changelog`. */
export const changelogCommand: ShellCommand = {
  name: "changelog",
  aliases: ["release-notes"],
  description: "Show this version's release notes",
  run(ctx) {
    const r = releaseNotesFor(VERSION);
    if (!r) ctx.print(`No release notes are shipped for kimi ${VERSION}.`);
    else {
      ctx.print(
        [style.bold(`What's new in kimi ${r.version}`), ...r.notes.map((n) => `  • ${n}`)].join(
          "\n",
        ),
      );
    }
    return Promise.resolve();
  },
};
