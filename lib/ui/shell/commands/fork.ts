/**
 * `/fork [title]`: branch the conversation into a new session and continue there; the original
 * session is kept as it is (resume it with `/sessions` or `kimi -r <id>`).
 *
 * @module
 */
import { forkSession } from "../../../session/fork.ts";
import type { ShellCommand } from "./command.ts";

/** `/fork`. */
export const forkCommand: ShellCommand = {
  name: "fork",
  aliases: [],
  description: "Branch the conversation into a new session and continue there",
  async run(ctx, args) {
    const source = ctx.app.session;
    const title = args.trim();
    if (title.length > 200) {
      ctx.print(`The title is too long (${title.length} characters; at most 200).`);
      return;
    }
    const fork = await forkSession(source, title ? { title } : {});
    await ctx.replaceApp({ session: fork });
    ctx.print(
      `Forked into session ${fork.id}: ${await fork.title()}\n` +
        `The original is kept (resume it with kimi -r ${source.id}).`,
    );
  },
};
