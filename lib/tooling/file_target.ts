/**
 * The checks every file-changing tool runs before touching a path: non-empty, the workspace
 * rule, plan-mode restrictions and the permission scope (read and write).
 *
 * @module
 */
import type { ToolEnv, ToolReturnValue } from "./tool.ts";
import { toolError } from "./result.ts";
import { inspectPlanTarget } from "./plan_target.ts";
import { resolveToolPath } from "./workspace.ts";

/** A path a tool may change, or the error to return instead. */
export type FileTarget =
  | { ok: true; path: string; inside: boolean; isPlanFile: boolean }
  | { ok: false; error: ToolReturnValue };

/** Resolve and check the target of WriteFile (`write`) or StrReplaceFile (`edit`). */
export function resolveFileTarget(rawPath: string, env: ToolEnv, op: "write" | "edit"): FileTarget {
  if (!rawPath) {
    return {
      ok: false,
      error: toolError({ message: "File path cannot be empty.", brief: "Empty file path" }),
    };
  }
  const resolved = resolveToolPath(rawPath, env, op);
  if (!resolved.ok) return { ok: false, error: resolved.error };
  const path = resolved.path;
  const plan = inspectPlanTarget(path, env);
  if (!plan.ok) return { ok: false, error: plan.error };
  const kinds = op === "write" ? (["write", "read"] as const) : (["read", "write"] as const);
  for (const kind of kinds) {
    const decision = env.scope.check(kind, path);
    if (!decision.allowed) {
      return {
        ok: false,
        error: toolError({ message: decision.message, brief: "Sandbox denied" }),
      };
    }
  }
  return { ok: true, path, inside: resolved.inside, isPlanFile: plan.isPlanFile };
}
