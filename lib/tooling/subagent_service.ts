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
  /** Called with the instance id once the run has its instance (foreground runs). */
  readonly onStarted?: (agentId: string) => void;
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

/** Most items one AgentSwarm call may run. */
export const MAX_SWARM_ITEMS = 128;

/** One AgentSwarm call: a prompt template run over a list of items. */
export interface SwarmRequest {
  /** Short description of the whole swarm. */
  readonly description: string;
  /** The prompt of every item, `{{item}}` replaced by the item. */
  readonly promptTemplate: string;
  /** The items (at most {@link MAX_SWARM_ITEMS}). */
  readonly items: readonly string[];
  /** Subagent type of every item. */
  readonly subagentType: string;
  /** Subagents at once (null: the configured default); capped by the configured ceiling. */
  readonly concurrency: number | null;
}

/** How one swarm item ended. */
export interface SwarmItemResult {
  /** 1-based position of the item. */
  readonly index: number;
  /** The item. */
  readonly item: string;
  /** `ok`: finished with a summary; `error`: failed; `cancelled`: stopped or never started. */
  readonly status: "ok" | "error" | "cancelled";
  /** The subagent instance (null when the item never started). */
  readonly agentId: string | null;
  /** The summary (ok) or what went wrong (error, cancelled). */
  readonly output: string;
}

/** How a swarm ended. */
export interface SwarmRunResult {
  /** Swarm id. */
  readonly swarmId: string;
  /** Subagents that ran at once. */
  readonly concurrency: number;
  /** One result per item, in item order. */
  readonly results: readonly SwarmItemResult[];
}

/** A swarm as `/swarm` shows it. */
export interface SwarmSnapshot {
  /** Swarm id. */
  readonly swarmId: string;
  /** Description. */
  readonly description: string;
  /** Subagents at once. */
  readonly concurrency: number;
  /** Whether every item has ended. */
  readonly done: boolean;
  /** Items in order: state, instance and (for errors) the error. */
  readonly items: readonly {
    readonly index: number;
    readonly item: string;
    readonly state: "pending" | "running" | "ok" | "error" | "cancelled";
    readonly agentId: string | null;
    readonly error: string | null;
  }[];
}

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
  /**
   * Run a swarm: one foreground subagent per item, at most `concurrency` at once; cancelling
   * `ctx.signal` stops every running item and skips the rest. Never throws for item failures.
   */
  runSwarm(req: SwarmRequest, ctx: AgentRunContext): Promise<SwarmRunResult | AgentRunError>;
  /** The current and recent swarms of this session (this process), oldest first. */
  swarms(): readonly SwarmSnapshot[];
}
