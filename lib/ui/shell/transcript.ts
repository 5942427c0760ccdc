/**
 * The earlier conversation of a resumed session, redrawn before the prompt: user inputs,
 * assistant text as markdown, and each tool call collapsed to one line (its output is not
 * repeated).
 *
 * @module
 */
import { extractText, type NormalizedMessage } from "../../llm/message.ts";
import type { MarkdownRenderer } from "./markdown.ts";
import { style } from "./theme.ts";
import { keyArgument } from "../tool_key_argument.ts";

/** How many messages of the history are redrawn at most (older ones are counted). */
const MAX_MESSAGES = 40;

/** The transcript of `history` (system and internal messages skipped). */
export function formatTranscript(
  history: readonly NormalizedMessage[],
  md: MarkdownRenderer,
  width: number,
): string {
  const shown = history.filter((m) => m.role === "user" || m.role === "assistant");
  const out: string[] = [];
  const skipped = Math.max(0, shown.length - MAX_MESSAGES);
  if (skipped > 0) out.push(style.dim(`… ${skipped} earlier messages`));
  for (const m of shown.slice(skipped)) {
    const text = extractText(m.content, " ").trim();
    if (m.role === "user") {
      // tool results and system reminders the soul adds are not the user's words
      if (!text || text.startsWith("<system")) continue;
      out.push(style.prompt("✨ ", false) + text.replace(/\n/g, "\n   "));
    } else if (m.role === "assistant") {
      if (text) out.push(md(text, Math.max(20, width - 1)).replace(/^\n+/, ""));
      for (const call of m.tool_calls ?? []) {
        const arg = keyArgument(call.function.name, call.function.arguments ?? "");
        out.push(
          `${style.ok("•")} Used ${style.accent(call.function.name)}${arg ? ` (${arg})` : ""}`,
        );
      }
    }
  }
  return out.join("\n");
}
