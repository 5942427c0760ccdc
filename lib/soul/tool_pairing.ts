/**
 * Every assistant tool call must be answered by a `tool` message before the next request:
 * providers that check the pairing (OpenAI does) reject the whole request otherwise. A call
 * loses its result when kimi is killed or crashes during the step, or when the disk is full
 * while the results are written. On resume the missing results are added to the context as
 * errors ({@link closeDanglingToolCalls}); every request is built from a history with each
 * call answered ({@link withToolResults}).
 *
 * @module
 */
import type { NormalizedMessage } from "../llm/message.ts";
import { toolError } from "../tooling/result.ts";
import type { Context } from "./context.ts";
import { toolResultToMessage } from "./tool_result_message.ts";

/** What the model is told about a call whose result was never recorded. */
export const INTERRUPTED_TOOL_CALL =
  "This tool call was interrupted before its result was recorded (kimi stopped, crashed or " +
  "could not write the session). Whether it took effect is unknown: check before repeating it.";

/** The error result standing in for a call whose result was never recorded. */
export function interruptedToolResult(toolCallId: string): NormalizedMessage {
  return toolResultToMessage(
    toolCallId,
    toolError({ message: INTERRUPTED_TOOL_CALL, brief: "Interrupted" }),
  );
}

/** Ids of `calls` (an assistant message's tool calls) without a result in `answers`. */
function missingIds(assistant: NormalizedMessage, answers: readonly NormalizedMessage[]): string[] {
  const answered = new Set(answers.map((m) => m.tool_call_id));
  return (assistant.tool_calls ?? []).map((c) => c.id).filter((id) => !answered.has(id));
}

/**
 * `history` with an error result added for every tool call that has none; the results go
 * right after the call's existing results. Returns `history` itself when nothing is missing.
 */
export function withToolResults(history: readonly NormalizedMessage[]): NormalizedMessage[] {
  const out: NormalizedMessage[] = [];
  let changed = false;
  for (let i = 0; i < history.length;) {
    const m = history[i++];
    out.push(m);
    if (m.role !== "assistant" || !m.tool_calls?.length) continue;
    const first = i;
    while (i < history.length && history[i].role === "tool") out.push(history[i++]);
    const missing = missingIds(m, history.slice(first, i));
    if (missing.length > 0) {
      changed = true;
      out.push(...missing.map(interruptedToolResult));
    }
  }
  return changed ? out : [...history];
}

/**
 * On resume: when the context ends with tool calls that have no result, append error results
 * for them (to the file too), so the session continues with a valid history. Returns how many
 * were added.
 */
export async function closeDanglingToolCalls(context: Context): Promise<number> {
  const history = context.history;
  let i = history.length - 1;
  while (i >= 0 && history[i].role === "tool") i--;
  const last = history[i];
  if (!last || last.role !== "assistant" || !last.tool_calls?.length) return 0;
  const missing = missingIds(last, history.slice(i + 1));
  if (missing.length === 0) return 0;
  await context.append(...missing.map(interruptedToolResult));
  return missing.length;
}
