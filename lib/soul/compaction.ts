/**
 * Context compaction (reference §6.5, SimpleCompaction): the older part of the history is
 * summarised by the model into one message; the last two user/assistant exchanges are kept
 * verbatim.
 *
 * @module
 */
import { generate } from "../llm/generate.ts";
import type { ContentPart, NormalizedMessage, TokenUsage } from "../llm/message.ts";
import type { ChatProvider } from "../llm/provider.ts";
import { systemPart } from "./tool_result_message.ts";

/** Messages kept verbatim after compaction (counted as user/assistant messages). */
export const MAX_PRESERVED_MESSAGES = 2;

/** System prompt of the compaction call. */
export const COMPACTION_SYSTEM_PROMPT =
  "You are a helpful assistant that compacts conversation context.";

/** Instructions appended to the history being compacted (our own words, same output sections). */
export const COMPACT_PROMPT = `---

The messages above are an earlier part of a coding session that no longer fits in the context
window. Compress them into a summary that lets the work continue without loss of direction.

Keep, in this order of priority:
1. The current task and exactly where it stands.
2. Errors hit and how each was fixed (or that it is still open).
3. The latest version of code that matters; condense anything over 20 lines to its signatures and
   the key logic.
4. Facts about the system and environment that were learned the hard way.
5. Design decisions and the reasons for them.
6. Open TODOs.

Rules: keep every error with its solution; merge repeated or similar points; drop attempts that
failed and were abandoned (keep the lesson, not the transcript); do not invent anything.

Answer with exactly this structure:

<current_focus>
What is being worked on right now and the immediate next step.
</current_focus>

<environment>
Working directory, languages, tools, commands and configuration that matter.
</environment>

<completed_tasks>
What has been done, one line each.
</completed_tasks>

<active_issues>
Problems still open, with what is known about them.
</active_issues>

<code_state>
<file>
name: path of the file
summary: what it does and what changed
key elements: functions, types, settings
latest version: the relevant code (condensed)
</file>
</code_state>

<important_context>
Anything else the next steps depend on: user preferences, constraints, decisions.
</important_context>`;

/** How the history splits for compaction. */
export interface CompactionPlan {
  /** Messages to summarise. */
  toCompact: NormalizedMessage[];
  /** Messages kept verbatim. */
  preserved: NormalizedMessage[];
}

/**
 * Split the history: the preserved tail starts at the second user/assistant message from the
 * end (tool messages after it stay with it). Nothing to compact when fewer exist.
 */
export function planCompaction(history: readonly NormalizedMessage[]): CompactionPlan {
  let seen = 0;
  let start = history.length;
  for (let i = history.length - 1; i >= 0; i--) {
    const role = history[i].role;
    if (role === "user" || role === "assistant") {
      seen++;
      if (seen === MAX_PRESERVED_MESSAGES) {
        start = i;
        break;
      }
    }
  }
  if (seen < MAX_PRESERVED_MESSAGES || start === 0) {
    return { toCompact: [], preserved: [...history] };
  }
  return { toCompact: history.slice(0, start), preserved: history.slice(start) };
}

/** Build the single user message that asks the model for the summary. */
export function compactionRequest(
  toCompact: readonly NormalizedMessage[],
  instruction = "",
): NormalizedMessage {
  const parts: ContentPart[] = [];
  toCompact.forEach((m, i) => {
    parts.push({ type: "text", text: `## Message ${i + 1}\nRole: ${m.role}\nContent:\n` });
    for (const p of m.content) if (p.type === "text") parts.push(p);
  });
  let tail = "\n" + COMPACT_PROMPT;
  if (instruction.trim()) {
    tail += "\n\n**User's Custom Compaction Instruction:**\nThe user asked for this compaction " +
      "with the following instruction. You MUST prioritize it over the defaults above:\n" +
      instruction.trim();
  }
  parts.push({ type: "text", text: tail });
  return { role: "user", content: parts };
}

/** The outcome of a compaction. */
export interface CompactionResult {
  /** The new history. */
  messages: NormalizedMessage[];
  /** Usage of the summary call, if any call was made. */
  usage: TokenUsage | null;
}

/** Compact a history with `provider`; returns it unchanged when there is nothing to compact. */
export async function compactHistory(
  provider: ChatProvider,
  history: readonly NormalizedMessage[],
  opts: { instruction?: string; signal?: AbortSignal; extraNotes?: readonly string[] } = {},
): Promise<CompactionResult> {
  const plan = planCompaction(history);
  if (plan.toCompact.length === 0) return { messages: [...history], usage: null };
  const result = await generate(provider, {
    systemPrompt: COMPACTION_SYSTEM_PROMPT,
    tools: [],
    history: [compactionRequest(plan.toCompact, opts.instruction)],
    signal: opts.signal,
  });
  const summary = result.message.content.filter((p) => p.type !== "think");
  const content: ContentPart[] = [
    systemPart("Previous context has been compacted. Here is the compaction output:"),
    ...summary,
  ];
  for (const note of opts.extraNotes ?? []) content.push({ type: "text", text: note });
  return {
    messages: [{ role: "user", content }, ...plan.preserved],
    usage: result.usage,
  };
}
