/**
 * The earlier conversation of a resumed session, redrawn before the prompt as it looked live:
 * built from the session's `wire.jsonl` records (what the user typed, the assistant's text as
 * markdown, each tool call as its result line and brief — `✗` for a failed or rejected one —
 * with its output collapsed, notifications and goal outcomes). Internal
 * text the model saw (system reminders, a skill's SKILL.md, the interruption marker) is not
 * shown as if the user had typed it. A session without wire records (an imported context) falls
 * back to its context history, with the same internal text left out.
 *
 * @module
 */
import { extractText, type NormalizedMessage } from "../../llm/message.ts";
import type { Envelope, EventPayload } from "../../wire/messages.ts";
import type { MarkdownRenderer } from "./markdown.ts";
import { goalOutcomeLine } from "./progress_lines.ts";
import { notificationLine } from "./side_lines.ts";
import { style } from "./theme.ts";
import { keyArgument } from "../tool_key_argument.ts";
import { toolResultLines } from "./turn_renderer.ts";

/** How many entries (inputs, answers, tool calls) are redrawn at most (older ones are counted). */
const MAX_ENTRIES = 40;

/** The user's words of a context message's text: system blocks and the interruption marker removed. */
export function userWords(text: string): string {
  return text
    .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, "")
    .replace(/<system>[\s\S]*?<\/system>/g, "")
    .replace(/\[Request interrupted by user\]/g, "")
    .trim();
}

function userLine(text: string): string {
  return style.prompt("✨ ", false) + text.replace(/\n/g, "\n   ");
}

function finish(entries: string[], skipped: number): string {
  const total = skipped + entries.length;
  const cut = Math.max(0, entries.length - MAX_ENTRIES);
  const out = entries.slice(cut);
  if (total - out.length > 0) out.unshift(style.dim(`… ${total - out.length} earlier messages`));
  return out.join("\n");
}

/** The transcript of the recorded wire messages of a session (root events only). */
export function formatWireTranscript(
  messages: readonly Envelope[],
  md: MarkdownRenderer,
  width: number,
): string {
  const entries: string[] = [];
  const calls = new Map<string, { name: string; args: string }>();
  let lastCall: { name: string; args: string } | null = null;
  let text = "";
  const flush = () => {
    if (text.trim()) entries.push(md(text, Math.max(20, width - 1)).replace(/^\n+/, ""));
    text = "";
  };
  for (const m of messages) {
    const p = m.payload as Record<string, unknown>;
    switch (m.type) {
      case "TurnBegin":
      case "SteerInput": {
        flush();
        const input = p.user_input as EventPayload<"TurnBegin">["user_input"];
        const typed = typeof input === "string" ? input : extractText(input, " ");
        if (typed.trim()) entries.push(userLine(typed.trim()));
        break;
      }
      case "ContentPart":
        if (p.type === "text" && typeof p.text === "string") text += p.text;
        break;
      case "StepBegin":
      case "TurnEnd":
        flush();
        break;
      case "ToolCall": {
        flush();
        const fn = p.function as { name?: string; arguments?: string | null } | undefined;
        lastCall = { name: fn?.name ?? "tool", args: fn?.arguments ?? "" };
        calls.set(String(p.id), lastCall);
        break;
      }
      case "ToolCallPart":
        if (lastCall && typeof p.arguments_part === "string") lastCall.args += p.arguments_part;
        break;
      case "ToolResult": {
        flush();
        const r = m.payload as EventPayload<"ToolResult">;
        const call = calls.get(r.tool_call_id) ?? null;
        calls.delete(r.tool_call_id);
        // collapsed: the tool's output is not repeated
        entries.push(toolResultLines(call, r.return_value, false, { collapsed: true }).join("\n"));
        break;
      }
      case "Notification":
        flush();
        entries.push(notificationLine(m.payload as EventPayload<"Notification">));
        break;
      case "GoalUpdate": {
        const line = goalOutcomeLine(m.payload as EventPayload<"GoalUpdate">);
        if (line) {
          flush();
          entries.push(line);
        }
        break;
      }
    }
  }
  flush();
  return finish(entries, 0);
}

/** The transcript of `history` (system and internal messages skipped). */
export function formatTranscript(
  history: readonly NormalizedMessage[],
  md: MarkdownRenderer,
  width: number,
): string {
  const entries: string[] = [];
  for (const m of history) {
    if (m.role === "user") {
      // tool results, system reminders and markers the soul adds are not the user's words
      const words = userWords(extractText(m.content, " "));
      if (words) entries.push(userLine(words));
    } else if (m.role === "assistant") {
      const text = extractText(m.content, " ").trim();
      if (text) entries.push(md(text, Math.max(20, width - 1)).replace(/^\n+/, ""));
      for (const call of m.tool_calls ?? []) {
        const arg = keyArgument(call.function.name, call.function.arguments ?? "");
        entries.push(
          `${style.ok("•")} Used ${style.accent(call.function.name)}${arg ? ` (${arg})` : ""}`,
        );
      }
    }
  }
  return finish(entries, 0);
}
