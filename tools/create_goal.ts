/**
 * CreateGoal: start a session goal on the user's behalf (root agent only).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { describeGoal } from "../lib/session/goal_state.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import type { GoalService } from "../lib/tooling/goal_service.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** CreateGoal parameters. */
export const createGoalParamsSchema = lazyValue(() =>
  z.object({
    objective: z.string(),
    replace: z.boolean().optional(),
  })
);
/** CreateGoal parameters. */
export type CreateGoalParams = z.infer<ReturnType<typeof createGoalParamsSchema>>;

function createGoal(goals: GoalService): Tool<CreateGoalParams> {
  return {
    name: "CreateGoal",
    description: readAsset("tools/create_goal.md"),
    get parameters() {
      return createGoalParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.CreateGoal,
    resolve: (params) => ({
      execute: async () => {
        const r = await goals.create(params.objective, { replace: params.replace ?? false });
        if (!r.ok) return toolError({ message: r.error, brief: "Goal not created" });
        return toolOk({
          output: `Goal created.\n${describeGoal(r.goal, goals.queue())}`,
          message: "Goal created",
        });
      },
    }),
  };
}

/** Builds CreateGoal (root agent with a session only). */
export const createGoalTool: ToolFactory = (env: ToolEnv) =>
  env.goals ? createGoal(env.goals) : null;
