/**
 * SetGoalBudget: record a user-stated limit of the session goal (root agent only).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { BUDGET_UNITS, budgetLimit, formatBudget } from "../lib/session/goal_state.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import type { GoalService } from "../lib/tooling/goal_service.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** SetGoalBudget parameters. */
export const setGoalBudgetParamsSchema = lazyValue(() =>
  z.object({
    value: z.number().positive(),
    unit: z.enum(BUDGET_UNITS),
  })
);
/** SetGoalBudget parameters. */
export type SetGoalBudgetParams = z.infer<ReturnType<typeof setGoalBudgetParamsSchema>>;

function setGoalBudget(goals: GoalService): Tool<SetGoalBudgetParams> {
  return {
    name: "SetGoalBudget",
    description: readAsset("tools/set_goal_budget.md"),
    get parameters() {
      return setGoalBudgetParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.SetGoalBudget,
    resolve: (params) => ({
      execute: async () => {
        const limit = budgetLimit(params.value, params.unit);
        if (typeof limit === "string") {
          return toolError({ message: limit, brief: "Budget not set" });
        }
        const r = await goals.setBudget(limit);
        if (!r.ok || !r.goal) {
          return toolError({
            message: r.ok ? "There is no goal." : r.error,
            brief: "Budget not set",
          });
        }
        const text = `Goal budget set: ${formatBudget(r.goal.budget)}.`;
        return toolOk({ output: text, message: text });
      },
    }),
  };
}

/** Builds SetGoalBudget (root agent with a session only). */
export const setGoalBudgetTool: ToolFactory = (env: ToolEnv) =>
  env.goals ? setGoalBudget(env.goals) : null;
