/**
 * `/init`: a throwaway agent explores the project and writes `AGENTS.md`; the real
 * conversation then gets the result.
 *
 * @module
 */
import { loadAgentsMd } from "../../agent/agents_md.ts";
import { Context } from "../context.ts";
import type { SoulCommand } from "../slash_commands.ts";

/** The task given to the throwaway agent. */
export const INIT_PROMPT =
  `Explore this project and write (or overwrite) \`AGENTS.md\` in the working directory: the
guide a coding agent reads before working here. Look at the build files, the directory layout,
the test setup and a few representative source files first. Then write concise sections on:

- what the project is and how it is laid out (the directories that matter and what they hold);
- how to build, run, lint and test it (exact commands);
- code style and conventions actually used (naming, formatting, error handling, imports);
- testing conventions (where tests live, how to run one test);
- anything surprising a newcomer would trip over (generated files, required env vars, gotchas).

Keep it factual and specific to this repository; do not invent commands you did not see evidence
for. Write the file with the WriteFile tool.`;

/** The `/init` command. */
export const initCommand: SoulCommand = {
  name: "init",
  description: "Analyze the codebase and generate an `AGENTS.md` file",
  aliases: [],
  async run({ soul, services, say }) {
    const tmp = await Deno.makeTempDir({ prefix: "kimi-init-" });
    try {
      const context = await Context.restore(`${tmp}/context.jsonl`);
      await context.writeSystemPrompt(soul.context.systemPrompt ?? "");
      await soul.runWithContext(context, INIT_PROMPT);
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    const workDir = services?.workDir ?? Deno.cwd();
    const merged = await loadAgentsMd(workDir, services?.controlPaths?.() ?? []);
    await soul.context.append({
      role: "user",
      content: [{
        type: "text",
        text: "<system>The user just ran /init, which explored the project and wrote AGENTS.md. " +
          `Latest AGENTS.md file content:\n${merged}</system>`,
      }],
    });
    say(merged ? "AGENTS.md has been written." : "No AGENTS.md was written.");
  },
};
