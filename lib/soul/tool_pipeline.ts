/**
 * The one order every tool call runs in, whatever the tool (built-in, MCP, custom TS module,
 * wire client tool): argument validation → the tool's resolution (the permission floor on what
 * the call names: workspace rule, real paths, control paths, scope) → the scope once more on
 * every declared access → the call's turn among the calls of its step that touch the same
 * paths ({@link ToolPipelineSite.schedule}) → approval (rules, then the request) → PreToolUse
 * hooks → undo snapshots of the written paths → execution → the snapshots' after-state →
 * PostToolUse hooks. A refused path never reaches approval; a hook's block never reaches
 * execution. The ToolResult wire event follows when the toolset hands the result back.
 *
 * @module
 */
import * as z from "zod";
import type { ToolCall } from "../llm/message.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import { toolError, toolRejected } from "../tooling/result.ts";
import {
  isInvocation,
  type Tool,
  type ToolAccess,
  type ToolCallContext,
  type ToolInvocation,
  type ToolReturnValue,
} from "../tooling/tool.ts";

/** Hook run before a tool call; returning a reason blocks the call. */
export type BeforeToolCall = (
  call: ToolCall,
  args: Record<string, unknown>,
) => Promise<{ block: true; reason: string } | { block: false }>;

/** Hook told after a tool ran (PostToolUse / PostToolUseFailure); not awaited. */
export type AfterToolCall = (
  call: ToolCall,
  args: Record<string, unknown>,
  outcome: { result: ToolReturnValue } | { error: string },
) => void;

/**
 * File undo: the toolset calls `beforeChange` for every written path after approval and the
 * PreToolUse hooks, right before execution, and `afterChange` right after (also when it failed).
 */
export interface FileHistory {
  /** Record a path's content before a change. */
  beforeChange(path: string): Promise<void>;
  /** Record a path's content after a change. */
  afterChange(path: string): Promise<void>;
}

/** Releases a call's turn (its accesses and its slot among the parallel calls). */
export type ReleaseTurn = () => void;

/**
 * A call's place among the calls of its step (taken in call order when the call arrives; see
 * `ToolScheduler`). The pipeline either acquires it once or skips it.
 */
export interface CallTurn {
  /**
   * Wait until the call may run: after the earlier calls of the step that touch its paths (a
   * write conflicts with any other access to the same path) and within the bound on parallel
   * calls. Resolves with the release.
   */
  acquire(accesses: readonly ToolAccess[]): Promise<ReleaseTurn>;
  /** Give the turn up: the call ended before it needed to run. */
  skip(): void;
}

/** What the pipeline runs a call against (the toolset's services). */
export interface ToolPipelineSite {
  /** The permission scope every declared access is checked against (absent: not checked). */
  readonly scope?: PermissionScope;
  /** Undo snapshots (absent: changes are not tracked). */
  readonly fileHistory?: FileHistory | null;
  /** PreToolUse. */
  readonly beforeCall?: BeforeToolCall | null;
  /** PostToolUse / PostToolUseFailure. */
  readonly afterCall?: AfterToolCall | null;
  /** The call's turn among the calls of its step (absent: it runs at once). */
  readonly turn?: CallTurn;
}

/** The error for arguments the tool's schema refuses (reference §6.10). */
export function validationError(error: z.ZodError): ToolReturnValue {
  return toolError({
    message: `Error validating JSON arguments: ${z.prettifyError(error)}`,
    brief: "Invalid arguments",
  });
}

/**
 * Run one call of `tool` with the model's parsed JSON `args` through every stage. Resolves with
 * the result; rejects only when the tool (or a stage) threw, after PostToolUseFailure when the
 * tool had started.
 */
export async function runToolPipeline(
  tool: Tool,
  call: ToolCall,
  args: unknown,
  ctx: ToolCallContext,
  site: ToolPipelineSite = {},
): Promise<ToolReturnValue> {
  let release: ReleaseTurn | null = null;
  try {
    const parsed = tool.parameters.safeParse(args);
    if (!parsed.success) return validationError(parsed.error);
    const resolution = await tool.resolve(parsed.data);
    if (!isInvocation(resolution)) return resolution;
    const accesses = resolution.accesses ?? [];
    const denied = scopeDenial(accesses, site.scope);
    if (denied) return denied;
    release = site.turn ? await site.turn.acquire(accesses) : () => {};
    // A call that waited for its turn does not start once the turn was cancelled.
    ctx.signal.throwIfAborted();
    return await runInvocation(tool, resolution, { call, args: plainArgs(args), ctx, site });
  } finally {
    if (release) release();
    else site.turn?.skip();
  }
}

async function runInvocation(
  tool: Tool,
  inv: ToolInvocation,
  run: {
    call: ToolCall;
    args: Record<string, unknown>;
    ctx: ToolCallContext;
    site: ToolPipelineSite;
  },
): Promise<ToolReturnValue> {
  const { call, args, ctx, site } = run;
  const ask = inv.approval ? await inv.approval() : null;
  if (ask && "is_error" in ask) return ask;
  if (ask) {
    const outcome = await ctx.requestApproval(ask);
    if (!outcome.approved) {
      return toolRejected(outcome.feedback, {
        isRoot: tool.isRoot !== false,
        denial: outcome.denial,
      });
    }
  }
  if (site.beforeCall) {
    const verdict = await site.beforeCall(call, args);
    if (verdict.block) {
      return toolError({
        message: verdict.reason || "Blocked by PreToolUse hook",
        brief: "Hook blocked",
      });
    }
  }
  const history = site.fileHistory;
  const changed = history
    ? (inv.accesses ?? []).flatMap((a) =>
      a.kind === "write" && a.snapshot !== false ? [a.path] : []
    )
    : [];
  for (const path of changed) await history!.beforeChange(path);
  let rv: ToolReturnValue;
  try {
    rv = await inv.execute(ctx);
  } catch (err) {
    if (!ctx.signal.aborted) {
      site.afterCall?.(call, args, { error: (err as Error)?.message ?? String(err) });
    }
    throw err;
  } finally {
    for (const path of changed) await history!.afterChange(path);
  }
  site.afterCall?.(call, args, { result: rv });
  return rv;
}

/** The scope's refusal of a declared access, or null when every one is allowed. */
function scopeDenial(
  accesses: readonly ToolAccess[],
  scope: PermissionScope | undefined,
): ToolReturnValue | null {
  if (!scope) return null;
  for (const a of accesses) {
    const d = a.kind === "run"
      ? scope.check("run", a.program)
      : a.kind === "net"
      ? scope.check("net", a.host)
      : scope.check(a.kind, a.path);
    if (!d.allowed) return toolError({ message: d.message, brief: "Sandbox denied" });
  }
  return null;
}

function plainArgs(args: unknown): Record<string, unknown> {
  return args && typeof args === "object" && !Array.isArray(args)
    ? args as Record<string, unknown>
    : {};
}
