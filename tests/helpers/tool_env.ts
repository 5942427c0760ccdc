/**
 * Test doubles for the tool contract: a {@link ToolEnv} and a {@link ToolCallContext} with
 * harmless defaults, every field overridable, and recorders for what a tool did (approval
 * requests, wire events, todo writes).
 *
 * ```ts
 * const env = makeToolEnv({ workDir });                  // full scope, no plan mode, no caps
 * const ctx = makeCallContext();                          // approves everything, records asks
 * const tool = (await readFileTool(env))!;
 * const rv = await runTool(tool, { path: "a.txt" }, ctx); // validates args like the toolset
 * ctx.approvals;                                          // the ApprovalAsks seen
 * ```
 *
 * @module
 */
import * as z from "zod";
import { FULL_SCOPE, type PermissionScope } from "../../lib/tooling/scope.ts";
import type {
  ApprovalAsk,
  ApprovalOutcome,
  BackgroundSettings,
  PlanModeView,
  TodoStore,
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolReturnValue,
} from "../../lib/tooling/tool.ts";
import type { ModelCapability } from "../../lib/llm/provider.ts";
import { BackgroundTaskManager } from "../../lib/background/task_manager.ts";
import { type CommandWrapper, PASSTHROUGH_WRAPPER } from "../../lib/process/command_wrapper.ts";
import { type ControlPath, ControlPathSet } from "../../lib/tooling/control_paths.ts";
import { ToolOutputFeed } from "../../lib/tooling/live_output.ts";
import type { SessionRun } from "../../lib/tooling/session_run.ts";
import type { TodoItem } from "../../lib/wire/display.ts";
import type { WireEvent } from "../../lib/wire/messages.ts";
import { runToolPipeline, type ToolPipelineSite } from "../../lib/soul/tool_pipeline.ts";

/** A {@link ToolEnv} whose side channels are recorded. */
export interface TestToolEnv extends ToolEnv {
  /** Events the tool emitted, in order. */
  readonly events: WireEvent[];
}

/** Overrides of {@link makeToolEnv}: any ToolEnv field, plus shortcuts. */
export type ToolEnvOverrides = Partial<Omit<ToolEnv, "additionalDirs" | "planMode">> & {
  /** Additional dirs (a list, or a function read on each call). */
  additionalDirs?: readonly string[] | (() => readonly string[]);
  /** Plan mode (a fixed view, or a function read on each call). */
  planMode?: PlanModeView | (() => PlanModeView);
  /** Model capabilities as a list (instead of `modelCapabilities`). */
  capabilities?: readonly ModelCapability[];
};

/** Background settings matching the reference defaults. */
export const DEFAULT_BACKGROUND: BackgroundSettings = {
  maxRunningTasks: 4,
  readMaxBytes: 30_000,
  notificationTailLines: 20,
  notificationTailChars: 3_000,
  killGracePeriodMs: 2_000,
};

/** Options of {@link makeSessionRun}. */
export interface SessionRunOptions {
  /** The share dir (its control entries are part of the session's control paths). */
  readonly shareDir: string;
  /** The session dir (background tasks live under it). */
  readonly sessionDir: string;
  /** Background settings (default {@link DEFAULT_BACKGROUND}). */
  readonly background?: BackgroundSettings;
  /** Command wrapper (default: the passthrough, an unconfined session). */
  readonly commands?: CommandWrapper;
  /** Control paths registered beyond the share dir's, by source. */
  readonly controls?: Readonly<Record<string, readonly ControlPath[]>>;
}

/** A session's run state for tests: its own control paths, output feed and task manager. */
export function makeSessionRun(opts: SessionRunOptions): SessionRun {
  return {
    commands: opts.commands ?? PASSTHROUGH_WRAPPER,
    controlPaths: new ControlPathSet(opts.shareDir, opts.controls),
    toolOutput: new ToolOutputFeed(),
    tasks: new BackgroundTaskManager(opts.sessionDir, opts.background ?? DEFAULT_BACKGROUND),
  };
}

/** An in-memory todo store. */
export function memoryTodos(initial: TodoItem[] = []): TodoStore & { items: TodoItem[] } {
  const store = {
    items: [...initial],
    get: () => store.items,
    set: (items: TodoItem[]) => {
      store.items = [...items];
      return Promise.resolve();
    },
  };
  return store;
}

/**
 * A ToolEnv for tests. Defaults: `workDir` = the process cwd (pass a temp dir!), share and
 * session dirs under it (`.kimi-share`, `.kimi-session`, not created), session id
 * `test-session`, no model capabilities, root agent, full permission scope, no web services,
 * reference background settings, empty child env, plan mode off, in-memory todos, questions
 * unsupported (`null`), afk off, and `request` throwing (no wire).
 */
export function makeToolEnv(overrides: ToolEnvOverrides = {}): TestToolEnv {
  const { additionalDirs, planMode, capabilities, ...rest } = overrides;
  const workDir = rest.workDir ?? Deno.cwd();
  const events: WireEvent[] = [];
  const dirs = typeof additionalDirs === "function" ? additionalDirs : () => additionalDirs ?? [];
  const plan = typeof planMode === "function"
    ? planMode
    : () => planMode ?? { active: false, planFile: null };
  const scope: PermissionScope = rest.scope ?? FULL_SCOPE;
  const shareDir = rest.shareDir ?? `${workDir}/.kimi-share`;
  const sessionDir = rest.sessionDir ?? `${workDir}/.kimi-session`;
  return {
    shareDir,
    sessionDir,
    run: makeSessionRun({ shareDir, sessionDir, background: rest.background }),
    sessionId: "test-session",
    modelCapabilities: new Set(capabilities ?? []),
    isRoot: true,
    services: { moonshotSearch: null, moonshotFetch: null },
    background: DEFAULT_BACKGROUND,
    childEnv: () => ({}),
    todos: memoryTodos(),
    emit: (event: WireEvent) => {
      events.push(event);
    },
    askQuestions: () => Promise.resolve(null),
    isAfk: () => false,
    ...rest,
    workDir,
    scope,
    additionalDirs: dirs,
    planMode: plan,
    events,
  };
}

/** A {@link ToolCallContext} that records approval requests. */
export interface TestCallContext extends ToolCallContext {
  /** Approval requests seen, in order. */
  readonly approvals: ApprovalAsk[];
  /** The controller behind `signal` (abort it to cancel the call). */
  readonly controller: AbortController;
}

/** Overrides of {@link makeCallContext}. */
export interface CallContextOverrides {
  /** Tool call id (default `call-1`). */
  toolCallId?: string;
  /**
   * The answer to approval requests: `true` approves (default), `false` rejects without
   * feedback, a string rejects with that feedback, a function decides per request.
   */
  approve?: boolean | string | ((ask: ApprovalAsk) => ApprovalOutcome | Promise<ApprovalOutcome>);
  /** Use this signal instead of a fresh controller's. */
  signal?: AbortSignal;
}

/** A ToolCallContext for tests: auto-approves by default and records every request. */
export function makeCallContext(overrides: CallContextOverrides = {}): TestCallContext {
  const approvals: ApprovalAsk[] = [];
  const controller = new AbortController();
  const approve = overrides.approve ?? true;
  return {
    toolCallId: overrides.toolCallId ?? "call-1",
    signal: overrides.signal ?? controller.signal,
    controller,
    approvals,
    requestApproval(ask: ApprovalAsk): Promise<ApprovalOutcome> {
      approvals.push(ask);
      if (typeof approve === "function") return Promise.resolve(approve(ask));
      if (approve === true) return Promise.resolve({ approved: true });
      return Promise.resolve({ approved: false, feedback: approve === false ? "" : approve });
    },
  };
}

/**
 * Validate raw arguments with the tool's schema and run the call through the toolset's
 * pipeline (resolution, approval, execution; no hooks, no undo). Invalid arguments throw the
 * zod error.
 */
export async function runTool<P>(
  tool: Tool<P>,
  args: unknown,
  ctx: ToolCallContext = makeCallContext(),
  site: ToolPipelineSite = {},
): Promise<ToolReturnValue> {
  tool.parameters.parse(args);
  const call = {
    type: "function" as const,
    id: ctx.toolCallId,
    function: { name: tool.name, arguments: JSON.stringify(args ?? {}) },
    extras: null,
  };
  return await runToolPipeline(tool, call, args, ctx, site);
}

/** The JSON Schema the model sees for a tool (`io: "input"`, `$schema` removed, JSON-clean). */
export function modelSchema(tool: Tool): Record<string, unknown> {
  const schema = z.toJSONSchema(tool.parameters, { io: "input" }) as Record<string, unknown>;
  delete schema.$schema;
  return JSON.parse(JSON.stringify(schema));
}
