/**
 * Background tasks belong to the root agent; subagents get an error from the task tools.
 *
 * @module
 */
import { toolError } from "../tooling/result.ts";
import type { ToolEnv, ToolReturnValue } from "../tooling/tool.ts";

/** Message a subagent gets from TaskList, TaskOutput and TaskStop. */
export const ROOT_ONLY_MESSAGE = "Background tasks can only be managed by the root agent.";

/** The error result for a subagent, or `null` for the root agent. */
export function rootOnlyError(env: ToolEnv): ToolReturnValue | null {
  if (env.isRoot) return null;
  return toolError({ message: ROOT_ONLY_MESSAGE, brief: "Background task unavailable" });
}
