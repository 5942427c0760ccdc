/**
 * Running a subagent's turns: each turn gets its own {@link Wire} whose merged stream is
 * recorded to the instance's `wire.jsonl` and forwarded to the parent as `SubagentEvent`s
 * (requests such as ToolCallRequest/QuestionRequest are forwarded unwrapped). A final answer
 * shorter than {@link SUMMARY_MIN_LENGTH} characters gets one continuation turn asking for a
 * fuller summary (reference §4.11, §7.10).
 *
 * @module
 */
import { extractText } from "../llm/message.ts";
import { RunCancelled } from "../soul/errors.ts";
import type { KimiSoul } from "../soul/soul.ts";
import { turnOutcome } from "../soul/turn_outcome.ts";
import { Wire } from "../wire/channel.ts";
import { event, isRequest, toEnvelope, type WireMessage } from "../wire/messages.ts";
import { recordWire, WireFile } from "../wire/recorder.ts";

/** Final answers shorter than this get one continuation turn. */
export const SUMMARY_MIN_LENGTH = 200;

/** The prompt of the continuation turn. */
export const SUMMARY_CONTINUATION_PROMPT =
  `Your previous response was too brief. Please provide a more comprehensive summary that includes:

1. Specific technical details and implementations
2. Detailed findings and analysis
3. All important information that the parent agent should know`;

/** Why a subagent run produced no usable answer. */
export interface SubagentFailure {
  /** Message for the model. */
  message: string;
  /** Short label for the UI. */
  brief: string;
}

/** Where the subagent's events go. */
export interface SubagentForwarding {
  /** Sends a message on the parent's wire. */
  emit: (msg: WireMessage) => void;
  /** Id of the Agent tool call. */
  parentToolCallId: string;
  /** Instance id. */
  agentId: string;
  /** Subagent type. */
  subagentType: string;
  /** The instance's `wire.jsonl`. */
  wirePath: string;
  /**
   * Whether events go to the parent as `SubagentEvent`s (default true). Background runs turn
   * this off: their events only reach `observe`; requests are still forwarded.
   */
  forwardEvents?: boolean;
  /** Sees every merged message of the child wire (e.g. to log it to a task's output). */
  observe?: (msg: WireMessage) => void;
}

/** Forward one merged message of the child wire to the parent. */
function forward(msg: WireMessage, to: SubagentForwarding): void {
  to.observe?.(msg);
  if (isRequest(msg)) {
    to.emit(msg);
    return;
  }
  if (to.forwardEvents === false) return;
  to.emit(event("SubagentEvent", {
    parent_tool_call_id: to.parentToolCallId,
    agent_id: to.agentId,
    subagent_type: to.subagentType,
    event: toEnvelope(msg),
  }));
}

async function pump(wire: Wire, to: SubagentForwarding): Promise<void> {
  for await (const msg of wire.subscribe({ merge: true })) forward(msg, to);
}

/**
 * Run one turn of `soul` and check that it ended with an assistant message. Cancellation
 * ({@link RunCancelled}) propagates; other errors become a {@link SubagentFailure}.
 */
export async function runCheckedTurn(
  soul: KimiSoul,
  prompt: string,
  opts: { signal: AbortSignal; forwarding: SubagentForwarding; phase: string },
): Promise<SubagentFailure | null> {
  const wire = new Wire();
  const recorder = recordWire(
    wire.subscribe({ merge: true }),
    new WireFile(opts.forwarding.wirePath),
  );
  const pumping = pump(wire, opts.forwarding);
  try {
    await soul.run(prompt, { wire, signal: opts.signal });
  } catch (err) {
    if (err instanceof RunCancelled || opts.signal.aborted) throw new RunCancelled();
    return failureOf(err, opts.phase);
  } finally {
    wire.shutdown();
    await recorder;
    await pumping;
  }
  const last = soul.context.history.at(-1);
  if (!last || last.role !== "assistant") {
    return {
      message: "The agent did not produce a valid assistant response.",
      brief: "Invalid agent result",
    };
  }
  return null;
}

function failureOf(err: unknown, phase: string): SubagentFailure {
  const outcome = turnOutcome(err);
  if (outcome.kind === "max_steps") {
    return {
      message: `Max steps ${outcome.steps} reached when ${phase}. ` +
        "Please try splitting the task into smaller subtasks.",
      brief: "Max steps reached",
    };
  }
  if (outcome.kind === "auth_expired" || (outcome.kind === "provider" && outcome.status !== null)) {
    const status = outcome.kind === "auth_expired" ? outcome.error.statusCode : outcome.status;
    return {
      message: `LLM API error (HTTP ${status}) when ${phase}: ${outcome.message}`,
      brief: `API error (${status})`,
    };
  }
  if (outcome.kind === "provider") {
    return {
      message: `LLM provider error when ${phase}: ${outcome.message}`,
      brief: "LLM provider error",
    };
  }
  const msg = err instanceof Error ? err.message : String(err);
  return { message: `Unexpected error when ${phase}: ${msg}`, brief: "Agent run error" };
}

/**
 * Run the subagent on `prompt`, then once more with {@link SUMMARY_CONTINUATION_PROMPT} when
 * its answer is shorter than {@link SUMMARY_MIN_LENGTH}. Resolves with the final answer text
 * or a failure; throws {@link RunCancelled} when cancelled.
 */
export async function runWithSummaryContinuation(
  soul: KimiSoul,
  prompt: string,
  opts: { signal: AbortSignal; forwarding: SubagentForwarding },
): Promise<{ text: string } | { failure: SubagentFailure }> {
  let failure = await runCheckedTurn(soul, prompt, { ...opts, phase: "running agent" });
  if (failure) return { failure };
  let text = lastText(soul);
  if (text.length < SUMMARY_MIN_LENGTH) {
    failure = await runCheckedTurn(soul, SUMMARY_CONTINUATION_PROMPT, {
      ...opts,
      phase: "continuing the agent summary",
    });
    if (failure) return { failure };
    text = lastText(soul);
  }
  return { text };
}

function lastText(soul: KimiSoul): string {
  const last = soul.context.history.at(-1);
  return last ? extractText(last.content, "\n") : "";
}
