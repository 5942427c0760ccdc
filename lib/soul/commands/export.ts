/**
 * `/export [path]`: write the conversation as a Markdown transcript.
 *
 * @module
 */
import type { NormalizedMessage } from "../../llm/message.ts";
import type { SoulCommand } from "../slash_commands.ts";

/** Render a history as Markdown. */
export function transcriptMarkdown(
  history: readonly NormalizedMessage[],
  meta: { sessionId: string; workDir: string; exportedAt: Date },
): string {
  const out = [
    `# Kimi session ${meta.sessionId}`,
    "",
    `- Working directory: \`${meta.workDir}\``,
    `- Exported: ${meta.exportedAt.toISOString()}`,
    "",
  ];
  for (const m of history) {
    const heading = m.role === "user"
      ? "## User"
      : m.role === "assistant"
      ? "## Assistant"
      : m.role === "tool"
      ? `### Tool result \`${m.tool_call_id ?? ""}\``
      : `## ${m.role}`;
    out.push(heading, "");
    for (const p of m.content) {
      if (p.type === "text") out.push(p.text, "");
      else if (p.type === "think") out.push("> " + p.think.split("\n").join("\n> "), "");
      else out.push(`[${p.type}]`, "");
    }
    for (const tc of m.tool_calls ?? []) {
      out.push(`### Tool call \`${tc.function.name}\` (\`${tc.id}\`)`, "", "```json");
      out.push(tc.function.arguments ?? "{}", "```", "");
    }
  }
  return out.join("\n");
}

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${
    p(d.getMinutes())
  }${p(d.getSeconds())}`;
}

/** The `/export` command. */
export const exportCommand: SoulCommand = {
  name: "export",
  description: "Export the conversation to a Markdown file",
  aliases: [],
  async run({ soul, args, services, say }) {
    const now = new Date();
    const sessionId = services?.sessionId ?? "session";
    const workDir = services?.workDir ?? Deno.cwd();
    let path = args || `kimi-export-${sessionId.slice(0, 8)}-${stamp(now)}.md`;
    if (!path.startsWith("/")) path = `${workDir}/${path}`;
    const text = transcriptMarkdown(soul.context.history, { sessionId, workDir, exportedAt: now });
    try {
      await Deno.writeTextFile(path, text);
    } catch (err) {
      say(`Could not export to \`${path}\`: ${(err as Error).message}`);
      return;
    }
    say(`Exported the conversation to \`${path}\`.`);
  },
};
