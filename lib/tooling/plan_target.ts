/**
 * Plan mode as the editing tools apply it: while it is on, only the current plan file may be
 * written or edited.
 *
 * @module
 */
import { toolError } from "./result.ts";
import type { ToolEnv, ToolReturnValue } from "./tool.ts";
import { canonicalPath } from "./workspace.ts";

/** Where an edit lands with respect to plan mode. */
export interface PlanTarget {
  /** Always true. */
  ok: true;
  /** Whether plan mode is on. */
  active: boolean;
  /** Whether the edit targets the current plan file (only possible in plan mode). */
  isPlanFile: boolean;
  /** Canonical plan file path when plan mode is on. */
  planPath: string | null;
}

/** An edit plan mode forbids, with the error to return. */
export interface PlanRefusal {
  /** Always false. */
  ok: false;
  /** The tool result to return. */
  error: ToolReturnValue;
}

/** Check a canonical target path against plan mode. */
export function inspectPlanTarget(
  path: string,
  env: Pick<ToolEnv, "planMode" | "workDir">,
): PlanTarget | PlanRefusal {
  const plan = env.planMode();
  if (!plan.active) return { ok: true, active: false, isPlanFile: false, planPath: null };
  if (!plan.planFile) {
    return {
      ok: false,
      error: toolError({
        message: "Plan mode is active, but the current plan file is unavailable.",
        brief: "Plan file unavailable",
      }),
    };
  }
  const planPath = canonicalPath(plan.planFile, env.workDir);
  if (path !== planPath) {
    return {
      ok: false,
      error: toolError({
        message: `Plan mode is active. You may only edit the current plan file: \`${planPath}\`.`,
        brief: "Plan mode restriction",
      }),
    };
  }
  return { ok: true, active: true, isPlanFile: true, planPath };
}
