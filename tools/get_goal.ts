/**
 * GetGoal: read the session goal, its budget, usage, notes and queue (root agent only).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { describeGoal } from "../lib/session/goal_state.ts";
import { toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import type { GoalService } from "../lib/tooling/goal_service.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** GetGoal parameters (none). */
export const getGoalParamsSchema = lazyValue(() => z.object({}));
/** GetGoal parameters. */
export type GetGoalParams = z.infer<ReturnType<typeof getGoalParamsSchema>>;

function getGoal(goals: GoalService): Tool<GetGoalParams> {
  return {
    name: "GetGoal",
    description: readAsset("tools/get_goal.md"),
    get parameters() {
      return getGoalParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.GetGoal,
    resolve: () => ({
      execute: () => {
        return Promise.resolve(toolOk({
          output: describeGoal(goals.current(), goals.queue()),
          message: "",
        }));
      },
    }),
  };
}

/** Builds GetGoal (root agent with a session only). */
export const getGoalTool: ToolFactory = (env: ToolEnv) => env.goals ? getGoal(env.goals) : null;
