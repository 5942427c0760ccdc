/**
 * UpdateGoal: record a progress note and/or set the status of the session goal (root agent
 * only). A status other than `active` ends the turn after this step.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import type { GoalService } from "../lib/tooling/goal_service.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** UpdateGoal parameters. */
export const updateGoalParamsSchema = lazyValue(() =>
  z.object({
    status: z.enum(["active", "complete", "paused", "blocked"]).nullable().default(null),
    note: z.string().nullable().default(null).describe("Short progress note."),
    reason: z.string().nullable().default(null).describe("Why blocked or paused."),
  })
);
/** UpdateGoal parameters. */
export type UpdateGoalParams = z.infer<ReturnType<typeof updateGoalParamsSchema>>;

const DONE_TEXT: Record<string, string> = {
  active: "Goal resumed.",
  complete: "Goal marked complete.",
  paused: "Goal paused.",
  blocked: "Goal marked blocked.",
};

function updateGoal(goals: GoalService): Tool<UpdateGoalParams> {
  return {
    name: "UpdateGoal",
    description: readAsset("tools/update_goal.md"),
    get parameters() {
      return updateGoalParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.UpdateGoal,
    resolve: (params) => ({
      execute: async () => {
        if (params.status === null && params.note === null) {
          return toolError({
            message: "Give a `note`, a `status`, or both.",
            brief: "Nothing to update",
          });
        }
        const done: string[] = [];
        if (params.note !== null) {
          const r = await goals.addNote(params.note);
          if (!r.ok) return toolError({ message: r.error, brief: "Goal not updated" });
          done.push("Progress note recorded.");
        }
        if (params.status !== null) {
          const r = await goals.setStatus(params.status, params.reason?.trim() || null);
          if (!r.ok) return toolError({ message: r.error, brief: "Goal not updated" });
          done.push(DONE_TEXT[params.status]);
        }
        const text = done.join(" ");
        return toolOk({ output: text, message: text });
      },
    }),
  };
}

/** Builds UpdateGoal (root agent with a session only). */
export const updateGoalTool: ToolFactory = (env: ToolEnv) =>
  env.goals ? updateGoal(env.goals) : null;
