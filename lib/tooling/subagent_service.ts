/**
 * What the `Agent` tool sees of the subagent machinery (the `ToolEnv.subagents` field). Pure
 * types: the implementation lives in `lib/subagents/service.ts`, wired by `lib/app/`.
 *
 * @module
 */
import type { ToolReturnValue } from "../wire/messages.ts";

/** A subagent type as listed in the Agent tool's description. */
export interface SubagentTypeInfo {
  /** Type name (`coder`, `explore`, `plan`, or a custom one). */
  readonly name: string;
  /** What the type is good at. */
  readonly description: string;
  /** Tool names the type may use, or null when it inherits the parent's tool policy. */
  readonly tools: readonly string[] | null;
  /** Default model alias, or null (inherits the parent's model). */
  readonly model: string | null;
  /** Whether the type can run in the background. */
  readonly background: boolean;
  /** When the parent should pick it. */
  readonly whenToUse: string | null;
}

/** One Agent tool call. */
export interface AgentRunRequest {
  /** Short (3–5 word) task description. */
  readonly description: string;
  /** The task. */
  readonly prompt: string;
  /** Requested subagent type. */
  readonly subagentType: string;
  /** Model alias override. */
  readonly model: string | null;
  /** Id of an instance to continue. */
  readonly resume: string | null;
  /** Seconds before the run is stopped (null: no limit). */
  readonly timeoutS: number | null;
}

/** Where a run comes from. */
export interface AgentRunContext {
  /** Id of the Agent tool call (the `parent_tool_call_id` of forwarded events). */
  readonly toolCallId: string;
  /** Aborted when the parent turn is cancelled. */
  readonly signal: AbortSignal;
}

/** Subagent launching, available to root agents only. */
export interface SubagentService {
  /** The subagent types the root agent declares, in declaration order. */
  types(): Promise<SubagentTypeInfo[]>;
  /** Whether `alias` is a configured model. */
  hasModel(alias: string): boolean;
  /** Run a subagent in the foreground and format the tool result (§7.10). */
  runForeground(req: AgentRunRequest, ctx: AgentRunContext): Promise<ToolReturnValue>;
  /** Start a subagent as a background task of kind `agent` and return at once (§7.10). */
  runBackground(req: AgentRunRequest, ctx: AgentRunContext): Promise<ToolReturnValue>;
}
