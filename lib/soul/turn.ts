/**
 * How a turn of the soul ends: the result types shared by the soul, slash commands, flows and
 * the turn runner (kept apart so none of them imports the soul for its types).
 *
 * @module
 */
import type { NormalizedMessage } from "../llm/message.ts";

/** Why a turn stopped. */
export type StopReason = "no_tool_calls" | "tool_rejected" | "tool_call_repeat" | "goal_stopped";

/** How a finished turn ended. */
export interface TurnResult {
  /**
   * Stop reason of the last step, `command` for slash commands, `prompt_blocked` when a
   * UserPromptSubmit hook refused the input.
   */
  reason: StopReason | "command" | "prompt_blocked";
  /** The final assistant message, when the turn ended with text. */
  finalMessage: NormalizedMessage | null;
  /** Steps taken. */
  steps: number;
}
