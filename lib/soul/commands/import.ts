/**
 * `/import <file | session id>`: add a file's text, or another session's conversation, to the
 * context as reference material.
 *
 * @module
 */
import { extractText } from "../../llm/message.ts";
import { Context } from "../context.ts";
import type { SoulCommand } from "../slash_commands.ts";

/** Largest import, in characters. */
export const MAX_IMPORT_CHARS = 200_000;

/** The `/import` command. */
export const importCommand: SoulCommand = {
  name: "import",
  description: "Import a file or another session's conversation as reference context",
  aliases: [],
  async run({ soul, args, services, say }) {
    if (!args) {
      say("Usage: /import <file path | session id>");
      return;
    }
    const workDir = services?.workDir ?? Deno.cwd();
    const path = args.startsWith("/") ? args : `${workDir}/${args}`;
    let label: string;
    let body: string;
    try {
      body = await Deno.readTextFile(path);
      label = `the file \`${path}\``;
    } catch {
      const sessionFile = services
        ? `${
          services.sessionDir.slice(0, services.sessionDir.lastIndexOf("/"))
        }/${args}/context.jsonl`
        : null;
      let other: Context | null = null;
      if (sessionFile && /^[A-Za-z0-9._-]+$/.test(args)) {
        try {
          await Deno.stat(sessionFile);
          other = await Context.restore(sessionFile);
        } catch {
          other = null;
        }
      }
      if (!other) {
        say(
          `Nothing to import: \`${args}\` is neither a readable file nor a session of this directory.`,
        );
        return;
      }
      body = other.history
        .filter((m) => m.role === "user" || m.role === "assistant")
        .map((m) => `${m.role}: ${extractText(m.content)}`)
        .join("\n\n");
      label = `the conversation of session \`${args}\``;
    }
    const truncated = body.length > MAX_IMPORT_CHARS;
    if (truncated) body = body.slice(0, MAX_IMPORT_CHARS);
    await soul.context.append({
      role: "user",
      content: [{
        type: "text",
        text: `<system>The user imported ${label} as reference context${
          truncated ? " (truncated)" : ""
        }:</system>\n${body}`,
      }],
    });
    say(`Imported ${label} (${body.length} characters${truncated ? ", truncated" : ""}).`);
  },
};
