/**
 * EnterPlanMode: ask to switch to plan mode (read-only planning that ends with ExitPlanMode).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { PlanControl, Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import type { Question } from "../lib/wire/messages.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** EnterPlanMode parameters (none). */
export const enterPlanModeParamsSchema = lazyValue(() => z.object({}));
/** EnterPlanMode parameters. */
export type EnterPlanModeParams = z.infer<ReturnType<typeof enterPlanModeParamsSchema>>;

/** The confirmation question. */
export const ENTER_QUESTION: Question = {
  question: "Enter plan mode?",
  header: "Plan Mode",
  options: [
    { label: "Yes", description: "Enter plan mode to explore and design an approach" },
    { label: "No", description: "Skip planning, start implementing now" },
  ],
  multi_select: false,
  body: "",
  other_label: "",
  other_description: "",
};

/** Error when the client cannot show the question. */
export const PLAN_UNSUPPORTED_MESSAGE =
  "The connected client does not support plan mode. Do NOT call this tool again.";

function activatedOutput(planFile: string | null, auto: boolean): string {
  const lines = [
    auto
      ? "Plan mode activated (auto-approved by policy)."
      : "Plan mode activated. You MUST NOT edit code files — only read and plan.",
    `Plan file: ${planFile}`,
    "Workflow: find the key questions about the codebase → investigate them with read-only " +
    "tools → design the approach → write the plan file with WriteFile (create it first) or " +
    "StrReplaceFile → call ExitPlanMode.",
  ];
  if (!auto) {
    lines.push(
      "Use AskUserQuestion only to clarify missing requirements or to choose between approaches.",
      "Do NOT use AskUserQuestion to ask about plan approval.",
    );
  }
  return lines.join("\n");
}

function enterPlanMode(env: ToolEnv, plan: PlanControl): Tool<EnterPlanModeParams> {
  return {
    name: "EnterPlanMode",
    description: readAsset("tools/enter_plan_mode.md"),
    get parameters() {
      return enterPlanModeParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.EnterPlanMode,
    resolve: () => ({
      execute: async (ctx) => {
        if (env.planMode().active) {
          return toolError({
            message: "Already in plan mode. Use ExitPlanMode when your plan is ready.",
            brief: "Already in plan mode",
          });
        }
        if (plan.autoApprove()) {
          await plan.set(true);
          return toolOk({
            output: activatedOutput(env.planMode().planFile, true),
            message: "Plan mode on (auto)",
            brief: "Plan mode on (auto)",
          });
        }
        let answers: Record<string, string> | null;
        try {
          answers = await env.askQuestions(ctx.toolCallId, [ENTER_QUESTION]);
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          return toolError({ message: "Failed to get user response.", brief: "Question failed" });
        }
        if (answers === null) {
          return toolError({ message: PLAN_UNSUPPORTED_MESSAGE, brief: "Client unsupported" });
        }
        if (Object.keys(answers).length === 0) {
          return toolOk({
            output: "User dismissed without choosing. Proceed with implementation directly.",
            message: "Dismissed",
            brief: "Dismissed",
          });
        }
        if (Object.values(answers).some((v) => v === "Yes")) {
          await plan.set(true);
          return toolOk({
            output: activatedOutput(env.planMode().planFile, false),
            message: "Plan mode on",
            brief: "Plan mode on",
          });
        }
        return toolOk({
          output: "User declined to enter plan mode. Please check with user whether to proceed " +
            "with implementation directly.",
          message: "Declined",
          brief: "Declined",
        });
      },
    }),
  };
}

/** Builds EnterPlanMode (root agent with plan mode only). */
export const enterPlanModeTool: ToolFactory = (env) =>
  env.planControl ? enterPlanMode(env, env.planControl) : null;
