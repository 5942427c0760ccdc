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
import type {
  Tool,
  ToolEnv,
  ToolFactory,
  ToolInvocation,
  ToolReturnValue,
} from "../lib/tooling/tool.ts";
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

class SetGoalBudgetTool implements Tool<SetGoalBudgetParams> {
  readonly name = "SetGoalBudget";
  readonly description = readAsset("tools/set_goal_budget.md");
  get parameters() {
    return setGoalBudgetParamsSchema();
  }
  readonly jsonSchema = PARAM_JSON_SCHEMAS.SetGoalBudget;
  readonly #goals: GoalService;

  constructor(goals: GoalService) {
    this.#goals = goals;
  }

  resolve(params: SetGoalBudgetParams): ToolInvocation {
    return { execute: () => this.#run(params) };
  }

  async #run(params: SetGoalBudgetParams): Promise<ToolReturnValue> {
    const limit = budgetLimit(params.value, params.unit);
    if (typeof limit === "string") return toolError({ message: limit, brief: "Budget not set" });
    const r = await this.#goals.setBudget(limit);
    if (!r.ok || !r.goal) {
      return toolError({ message: r.ok ? "There is no goal." : r.error, brief: "Budget not set" });
    }
    const text = `Goal budget set: ${formatBudget(r.goal.budget)}.`;
    return toolOk({ output: text, message: text });
  }
}

/** Builds SetGoalBudget (root agent with a session only). */
export const setGoalBudgetTool: ToolFactory = (env: ToolEnv) =>
  env.goals ? new SetGoalBudgetTool(env.goals) : null;
