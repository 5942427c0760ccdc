/**
 * The contract between every tool (built-in, MCP, custom module, wire client tool) and the
 * soul's toolset.
 *
 * A tool module under `tools/` exports a {@link ToolFactory}. The toolset calls it once per
 * agent with a {@link ToolEnv} (the only services a tool may reach) and gets back a
 * {@link Tool}, or `null` when the tool does not apply to this run (e.g. ReadMediaFile for a
 * model without image input). For each validated call the tool's `resolve` checks what the
 * call names and returns a {@link ToolInvocation} (what it touches, its approval, its
 * execution) or the result to return at once; the toolset runs the rest in one fixed order
 * (`lib/soul/tool_pipeline.ts`). The execution gets a {@link ToolCallContext}.
 *
 * @module
 */
import type * as z from "zod";
import type { ModelCapability } from "../llm/provider.ts";
import type { DisplayBlock, TodoItem } from "../wire/display.ts";
import type { Question, RequestResult, ToolReturnValue, WireEvent } from "../wire/messages.ts";
import type { PermissionScope } from "./scope.ts";
import type { GoalService } from "./goal_service.ts";
import type { SubagentService } from "./subagent_service.ts";
import type { FileBackend } from "./file_backend.ts";
import type { TerminalBackend } from "./terminal_backend.ts";
import type { BackgroundSettings } from "./background_settings.ts";
import type { SessionRun } from "./session_run.ts";

export type { ToolReturnValue };
export type { BackgroundSettings, WorkerLaunch } from "./background_settings.ts";
export type { SessionRun } from "./session_run.ts";

/**
 * What an approval is about, in the form approval rules match: a shell command line, a file
 * change (resolved absolute path), an MCP server's tool, a plugin's tool, or just the calling
 * tool.
 */
export type ApprovalSubject =
  | { kind: "shell"; command: string }
  | {
    kind: "file";
    /** Resolved absolute path. */
    path: string;
    /** Whether the file is read or changed (default: write). */
    access?: "read" | "write";
  }
  | { kind: "mcp"; server: string; tool: string }
  /** A plugin's tool: rules and session grants name it `plugin:<tool>`. */
  | { kind: "plugin"; tool: string }
  | { kind: "tool" };

/** What a tool asks the user to approve. */
export interface ApprovalAsk {
  /** Approval action, e.g. `run command`, `edit file` (shown to the user and on the wire). */
  action: string;
  /** One line describing exactly what will happen. */
  description: string;
  /** Blocks shown above the question (diff, shell command). */
  display: DisplayBlock[];
  /**
   * Ask even in yolo mode and when the action was approved for the session; refused when no
   * user is present (afk, print mode). For changes to kimi's own control files.
   */
  mustAsk?: boolean;
  /** What approval rules are matched against (default: the calling tool). */
  subject?: ApprovalSubject;
  /**
   * What happens when no rule decides: `ask` (default), or `allow` for calls that only need
   * checking against rules (reads: approved unless a deny or ask rule matches).
   */
  unruled?: "ask" | "allow";
}

/** A refusal by a permission rule. */
export interface RuleDenial {
  /** The message for the model. */
  message: string;
  /** The refusing rule's pattern, or null when no rule could be checked. */
  rule: string | null;
}

/** The user's answer to an approval request. */
export type ApprovalOutcome =
  | { approved: true }
  | {
    approved: false;
    feedback: string;
    /** Set when a permission rule refused the call without asking. */
    denial?: RuleDenial;
  };

/**
 * What one call touches, as its tool resolved it (absolute real paths, after the tool's own
 * permission-floor checks). The toolset checks path, program and host accesses against the
 * permission scope once more, takes undo snapshots of written paths, and runs calls of one step
 * that touch the same path one after the other.
 */
export type ToolAccess =
  | { kind: "read"; path: string }
  | {
    kind: "write";
    path: string;
    /** Whether the file's content is snapshotted for undo around the call (default true). */
    snapshot?: boolean;
  }
  | {
    kind: "run";
    /** The program started (checked against the scope). */
    program: string;
    /** The command line, for display and approval rules. */
    command: string;
  }
  | { kind: "net"; host: string };

/**
 * A validated, resolved call ready to run (gemini-cli's `ToolInvocation`). The toolset runs
 * it: approval ({@link ToolInvocation.approval}), PreToolUse hooks, undo snapshots of the
 * written paths, {@link ToolInvocation.execute}, PostToolUse hooks.
 */
export interface ToolInvocation {
  /** What the call touches (none when absent). */
  readonly accesses?: readonly ToolAccess[];
  /**
   * What to ask the user, checked against the approval rules first; `null` or absent: nothing
   * to approve. Runs once the call holds its accesses (a diff reads the file then). Returning a
   * result ends the call with it (e.g. nothing to change).
   */
  approval?(): ApprovalAsk | ToolReturnValue | null | Promise<ApprovalAsk | ToolReturnValue | null>;
  /** Do what the call does. Throwing is allowed: the toolset turns it into a "Tool runtime error". */
  execute(ctx: ToolCallContext): Promise<ToolReturnValue>;
}

/** What a tool makes of a validated call: an invocation, or the result to return instead. */
export type ToolResolution = ToolInvocation | ToolReturnValue;

/** Whether a resolution is an invocation (else it is the result to return). */
export function isInvocation(r: ToolResolution): r is ToolInvocation {
  return typeof (r as Partial<ToolInvocation>).execute === "function";
}

/** A built-in or loaded tool, ready to be offered to the model (gemini-cli's `DeclarativeTool`). */
export interface Tool<P = any> {
  /** Name the model calls. */
  readonly name: string;
  /** Description for the model (already rendered). */
  readonly description: string;
  /** Parameter schema; exported to the model as JSON Schema (`io: "input"`). */
  readonly parameters: z.ZodType<P>;
  /**
   * JSON Schema to send instead of deriving one from `parameters`: MCP and external tools,
   * whose schema comes from elsewhere, and built-in tools, whose schema is derived at build
   * time (`tools/param_schemas.gen.ts`). When set, arguments are still validated by `parameters`.
   */
  readonly jsonSchema?: Record<string, unknown>;
  /**
   * Whether the tool serves the root agent (default true): a subagent's rejected call tells
   * the model to try another way instead of stopping.
   */
  readonly isRoot?: boolean;
  /**
   * Resolve a validated call without side effects: the permission floor on what it names
   * (workspace rule, real paths, control paths, scope), what it touches, its approval and its
   * execution; or the result to return instead (a refused path never reaches approval).
   * Throwing is allowed: the toolset turns it into a "Tool runtime error".
   */
  resolve(params: P): ToolResolution | Promise<ToolResolution>;
}

/** Per-call context. */
export interface ToolCallContext {
  /** Id of the tool call being answered. */
  readonly toolCallId: string;
  /**
   * The model's argument string for this call, byte for byte as it streamed (null when the
   * model sent none). Tools that forward a call elsewhere (wire client tools) pass this on.
   */
  readonly rawArguments?: string | null;
  /** Aborted when the turn is cancelled; tools must stop and kill children. */
  readonly signal: AbortSignal;
  /**
   * Ask the user to approve an action (auto-approved in yolo/afk or when a rule allows it).
   * The toolset asks for an invocation's own approval; this is for call-style custom tools
   * that ask in the middle of their work.
   */
  requestApproval(ask: ApprovalAsk): Promise<ApprovalOutcome>;
}

/** Plan mode as seen by tools. */
export interface PlanModeView {
  /** Whether plan mode is on. */
  readonly active: boolean;
  /** Absolute path of the current plan file, when plan mode is on. */
  readonly planFile: string | null;
}

/** Plan mode switches for EnterPlanMode / ExitPlanMode (root agent only). */
export interface PlanControl {
  /** Turn plan mode on or off on a tool's behalf (persisted); resolves with the new state. */
  set(enabled: boolean): Promise<boolean>;
  /** Whether entering plan mode needs no confirmation (yolo or afk). */
  autoApprove(): boolean;
  /** The current plan file's content, or null when there is none. */
  readPlan(): Promise<string | null>;
}

/** Todo list storage (state.json for the root agent, the subagent's own state otherwise). */
export interface TodoStore {
  /** Current todos. */
  get(): TodoItem[];
  /** Replace the todos (persisted). */
  set(items: TodoItem[]): Promise<void>;
}

/** Services the toolset hands a tool factory. Tools reach nothing else of the soul. */
export interface ToolEnv {
  /** Absolute, canonical working directory. */
  readonly workDir: string;
  /** Extra workspace directories (`--add-dir`), read on each call because they can change. */
  additionalDirs(): readonly string[];
  /** Share dir (`~/.kimi` or `KIMI_SHARE_DIR`). */
  readonly shareDir: string;
  /** This session's directory (tasks and snapshots live under it). */
  readonly sessionDir: string;
  /** Session id. */
  readonly sessionId: string;
  /** Capabilities of the current model. */
  readonly modelCapabilities: ReadonlySet<ModelCapability>;
  /** Whether this tool set belongs to the root agent (false for subagents). */
  readonly isRoot: boolean;
  /** What this run may touch (Deno permissions); check before any effect. */
  readonly scope: PermissionScope;
  /** Web services from config (`services.moonshot_search`, `services.moonshot_fetch`). */
  readonly services: {
    readonly moonshotSearch: WebServiceConfig | null;
    readonly moonshotFetch: WebServiceConfig | null;
  };
  /** Background task settings (`[background]` in config). */
  readonly background: BackgroundSettings;
  /** Environment for child processes: the user's variables without the agent's secrets. */
  childEnv(): Record<string, string>;
  /**
   * How Shell commands are confined (bubblewrap) in this run: `description` is shown in the
   * approval and the tool result; `refusal`, when set, is the error Shell returns instead of
   * running anything (confinement required but unavailable). `null`/absent: not confined.
   */
  readonly shellConfinement?: {
    readonly description: string;
    readonly refusal?: string;
  } | null;
  /** Plan mode state. */
  planMode(): PlanModeView;
  /** Plan mode switches (root agent with a session only; plan tools are left out without it). */
  readonly planControl?: PlanControl;
  /** Todo storage. */
  readonly todos: TodoStore;
  /** Send an event on the current turn's wire (e.g. PlanDisplay). */
  emit(event: WireEvent): void;
  /**
   * Ask the user questions. Resolves with the answers, `{}` when dismissed, or `null` when
   * the client cannot show questions (the tool then tells the model to ask in text).
   */
  askQuestions(
    toolCallId: string,
    questions: Question[],
  ): Promise<RequestResult<"QuestionRequest">["answers"] | null>;
  /** Whether runtime afk is on (no user present: questions auto-dismissed). */
  isAfk(): boolean;
  /** D-Mail delivery (agents with SendDMail): queue a message; returns an error or null. */
  readonly dmail?: {
    send(checkpointId: number, message: string, opts?: { restoreFiles?: boolean }): string | null;
  };
  /** Subagent launching for the `Agent` tool (root agents only; absent in subagents). */
  readonly subagents?: SubagentService;
  /**
   * Where file tools read and write text after their path checks (absent: the local disk; an
   * ACP client's editor buffers when it offers `fs/*`).
   */
  readonly files?: FileBackend;
  /** Where Shell runs foreground commands (absent: a local process; an ACP client terminal). */
  readonly terminal?: TerminalBackend;
  /** The session goal for the goal tools (root agent with a session only). */
  readonly goals?: GoalService;
  /**
   * This session's run state: its command wrapper (sandbox), control paths, live tool output
   * and background tasks. Subagents share their session's; another session never sees it.
   */
  readonly run: SessionRun;
}

/** Connection details of a web service. */
export interface WebServiceConfig {
  /** Endpoint URL. */
  readonly baseUrl: string;
  /** Bearer key (never logged). */
  readonly apiKey: string;
  /** Extra headers. */
  readonly customHeaders: Readonly<Record<string, string>>;
  /** Current OAuth access token, when the service uses a login (it then wins over `apiKey`). */
  readonly accessToken?: () => Promise<string>;
}

/** Builds a tool for one agent, or returns `null` when it does not apply. */
export type ToolFactory = (env: ToolEnv) => Tool | null | Promise<Tool | null>;
