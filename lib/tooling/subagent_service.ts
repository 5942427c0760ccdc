/**
 * What the `Agent` tool sees of the subagent machinery (the `ToolEnv.subagents` field). Pure
 * types: the implementation lives in `lib/subagents/service.ts`, wired by `lib/app/`.
 *
 * @module
 */
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

/** Why a run could not start or failed (the Agent tool returns it as a tool error). */
export interface AgentRunError {
  /** Always `error`. */
  readonly status: "error";
  /** Error text for the model. */
  readonly message: string;
  /** Short label for the user. */
  readonly brief: string;
}

/** How a foreground run ended. */
export type ForegroundRunResult =
  | {
    /** The run finished with a summary. */
    readonly status: "completed";
    /** Instance id (for `resume`). */
    readonly agentId: string;
    /** The instance's type (may differ from the requested one on resume). */
    readonly actualType: string;
    /** Whether an existing instance was continued. */
    readonly resumed: boolean;
    /** The subagent's final summary. */
    readonly summary: string;
  }
  | { readonly status: "timed_out"; readonly timeoutS: number }
  | { readonly status: "cancelled" }
  | AgentRunError;

/** A background run that was started, or why not. */
export type BackgroundStartResult =
  | {
    /** The task is running. */
    readonly status: "started";
    /** Instance id (for `resume`). */
    readonly agentId: string;
    /** The instance's type. */
    readonly actualType: string;
    /** The task running it. */
    readonly task: {
      readonly id: string;
      readonly kind: string;
      readonly status: string;
      readonly description: string;
    };
  }
  | AgentRunError;

/** Subagent launching, available to root agents only. */
export interface SubagentService {
  /** The subagent types the root agent declares, in declaration order. */
  types(): Promise<SubagentTypeInfo[]>;
  /** Whether `alias` is a configured model. */
  hasModel(alias: string): boolean;
  /** Run a subagent in the foreground (its events reach the parent's wire). */
  runForeground(req: AgentRunRequest, ctx: AgentRunContext): Promise<ForegroundRunResult>;
  /** Start a subagent as a background task of kind `agent` and return at once. */
  runBackground(req: AgentRunRequest, ctx: AgentRunContext): Promise<BackgroundStartResult>;
}
