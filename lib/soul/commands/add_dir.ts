/**
 * `/add-dir [path]`: list the workspace directories, or add one (persisted in the session).
 *
 * @module
 */
import { listWorkDir } from "../../agent/work_dir_listing.ts";
import type { SoulCommand } from "../slash_commands.ts";

/** The `/add-dir` command. */
export const addDirCommand: SoulCommand = {
  name: "add-dir",
  description: "Add a directory to the workspace, or list the added ones",
  aliases: [],
  async run({ soul, args, services, say }) {
    if (!services) {
      say("This agent has no session: /add-dir is not available here.");
      return;
    }
    const dirs = services.additionalDirs();
    if (!args) {
      say(
        dirs.length === 0
          ? `Workspace: ${services.workDir}\n\nNo additional directories. Use /add-dir <path> to add one.`
          : `Workspace: ${services.workDir}\n\nAdditional directories:\n\n${
            dirs.map((d) => `- ${d}`).join("\n")
          }`,
      );
      return;
    }
    let path = args.startsWith("~/") ? (Deno.env.get("HOME") ?? "") + args.slice(1) : args;
    if (!path.startsWith("/")) path = `${services.workDir}/${path}`;
    let real: string;
    try {
      real = await Deno.realPath(path);
      if (!(await Deno.stat(real)).isDirectory) {
        say(`\`${args}\` is not a directory.`);
        return;
      }
    } catch {
      say(`\`${args}\` does not exist.`);
      return;
    }
    if (real === services.workDir || real.startsWith(services.workDir + "/")) {
      say(`\`${real}\` is already inside the working directory.`);
      return;
    }
    if (dirs.includes(real)) {
      say(`\`${real}\` is already in the workspace.`);
      return;
    }
    await services.addDir(real);
    const tree = await listWorkDir(real).catch(() => "");
    await soul.context.append({
      role: "user",
      content: [{
        type: "text",
        text: `<system>The user added \`${real}\` to the workspace. You may read and edit files ` +
          `there as in the working directory. Its contents:\n\`\`\`\n${tree}\n\`\`\`</system>`,
      }],
    });
    say(`Added \`${real}\` to the workspace.`);
  },
};
