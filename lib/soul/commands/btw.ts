/**
 * `/btw <question>`: a side question answered from what the conversation already holds, without
 * entering the main context (reference §6.11; wire `BtwBegin` / `BtwEnd`). The request carries the
 * same system prompt, history and tool definitions as the main agent (so the provider can reuse
 * its prompt cache), but every tool call is refused; the model gets one more chance to answer in
 * text after a refused call.
 *
 * @module
 */
import { generate } from "../../llm/generate.ts";
import { extractText, type NormalizedMessage } from "../../llm/message.ts";
import { event } from "../../wire/messages.ts";
import type { CommandHost, SoulCommand } from "../slash_commands.ts";
import { mergeAdjacentUserMessages } from "../request_history.ts";
import { systemReminder } from "../tool_result_message.ts";

/** Steps a side question may take (the second only after a refused tool call). */
const MAX_STEPS = 2;

/** The reminder that frames the side question for the model. */
export const SIDE_QUESTION_REMINDER =
  `This is a side question from the user. Answer directly in a single response.

IMPORTANT:
- You are a separate, lightweight instance answering one question.
- The main agent continues independently; do NOT reference being interrupted.
- Do NOT call any tools. All tool calls are disabled and will be rejected.
  Tool definitions are visible only for technical reasons (prompt cache).
- Respond ONLY with text based on what you already know from the conversation.
- This is a one-off response: no follow-up turns.
- If you don't know the answer, say so directly.`;

/** What the refused tool calls of a side question return. */
export const SIDE_QUESTION_TOOL_REFUSAL =
  "Tool calls are disabled for side questions. Answer with text only.";

/** What a side question needs from the soul. */
export type SideQuestionHost = Pick<CommandHost, "llm" | "context" | "toolSpecs">;

/** A side question's outcome: the answer, or why there is none. */
export type SideAnswer = { response: string; error: null } | { response: null; error: string };

/**
 * Answer `question` from the conversation so far without changing it: same system prompt,
 * history and tool definitions as the agent, every tool call refused (one retry). Rejects only
 * when `signal` aborts.
 */
export async function answerSideQuestion(
  host: SideQuestionHost,
  question: string,
  signal?: AbortSignal,
): Promise<SideAnswer> {
  try {
    const llm = host.llm;
    if (!llm) throw new Error("No model is configured. Run /setup (or /login) to choose one.");
    let history: NormalizedMessage[] = [
      ...mergeAdjacentUserMessages(host.context.history),
      {
        role: "user",
        content: [{
          type: "text",
          text: `${systemReminder(SIDE_QUESTION_REMINDER)}\n\n${question}`,
        }],
      },
    ];
    for (let step = 0; step < MAX_STEPS; step++) {
      const result = await generate(llm.provider, {
        systemPrompt: host.context.systemPrompt ?? "",
        tools: host.toolSpecs(),
        history,
        signal,
      });
      const text = extractText(result.message.content).trim();
      const calls = result.message.tool_calls ?? [];
      if (text) return { response: text, error: null };
      if (calls.length === 0) break;
      if (step + 1 === MAX_STEPS) {
        return {
          response: null,
          error: `The side question tried to call tools (${
            calls.map((c) => c.function.name).join(", ")
          }) instead of answering. Rephrase it, or ask in the main conversation.`,
        };
      }
      history = [
        ...history,
        result.message,
        ...calls.map((c): NormalizedMessage => ({
          role: "tool",
          content: [{ type: "text", text: SIDE_QUESTION_TOOL_REFUSAL }],
          tool_call_id: c.id,
        })),
      ];
    }
    return { response: null, error: "No response received." };
  } catch (err) {
    if (signal?.aborted) throw err;
    return { response: null, error: (err as Error).message || String(err) };
  }
}

/** A new side question id (12 hex digits, as the reference). */
export function sideQuestionId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

/** The `/btw` command. */
export const btwCommand: SoulCommand = {
  name: "btw",
  description: "Ask a side question (no tools, not added to the conversation)",
  aliases: [],
  async run({ soul, args, say }) {
    const question = args.trim();
    if (!question) {
      say("Usage: /btw <question>. The answer does not enter the conversation.");
      return;
    }
    const id = sideQuestionId();
    soul.emit(event("BtwBegin", { id, question }));
    const answer = await answerSideQuestion(soul, question, soul.turnSignal ?? undefined);
    soul.emit(event("BtwEnd", { id, ...answer }));
  },
};
