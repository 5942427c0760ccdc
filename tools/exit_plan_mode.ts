/**
 * ExitPlanMode: show the written plan to the user and ask for approval to carry it out.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolError, toolOk, toolRejected } from "../lib/tooling/result.ts";
import type {
  PlanControl,
  Tool,
  ToolEnv,
  ToolFactory,
  ToolReturnValue,
} from "../lib/tooling/tool.ts";
import type { Question } from "../lib/wire/messages.ts";
import { PLAN_UNSUPPORTED_MESSAGE } from "./enter_plan_mode.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Labels the tool adds itself and options may not use (compared case-insensitively). */
export const RESERVED_PLAN_LABELS: readonly string[] = [
  "approve",
  "reject",
  "reject and exit",
  "revise",
];

/** One approach the user may pick. */
export const planOptionParamSchema = lazyValue(() =>
  z.object({
    label: z.string().describe(
      "Short name of the approach (1-8 words); add '(Recommended)' to the one you recommend.",
    ).refine((v) => !RESERVED_PLAN_LABELS.includes(v.trim().toLowerCase()), {
      message: "Option labels 'Approve', 'Reject', 'Reject And Exit' and 'Revise' are reserved.",
    }),
    description: z.string().default("").describe("What this approach does and its trade-offs."),
  })
);

/** ExitPlanMode parameters. */
export const exitPlanModeParamsSchema = lazyValue(() =>
  z.object({
    options: z.array(planOptionParamSchema()).max(3).nullable().default(null).describe(
      "The two or three alternative approaches the plan describes, so the user can choose which " +
        "one to carry out. Leave it out when the plan has a single approach. Do not use " +
        "'Approve', 'Reject', 'Revise' or 'Reject and Exit' as labels.",
    ).refine(
      (opts) => opts === null || new Set(opts.map((o) => o.label)).size === opts.length,
      { message: "Option labels must be unique. Found duplicate label(s)." },
    ),
  })
);
/** ExitPlanMode parameters. */
export type ExitPlanModeParams = z.infer<ReturnType<typeof exitPlanModeParamsSchema>>;

type QuestionOption = Question["options"][number];

const REJECT_OPTIONS: QuestionOption[] = [
  { label: "Reject", description: "Reject and stay in plan mode" },
  { label: "Reject and Exit", description: "Reject and exit plan mode" },
];

/** The approval question for a plan (with the model's options, or Approve). */
export function approvalQuestion(options: ExitPlanModeParams["options"]): Question {
  const choices: QuestionOption[] = options && options.length >= 2
    ? options.map((o) => ({ label: o.label, description: o.description }))
    : [{ label: "Approve", description: "Exit plan mode and start execution" }];
  return {
    question: "Approve this plan",
    header: "Plan",
    options: [...choices, ...REJECT_OPTIONS],
    multi_select: false,
    body: "",
    other_label: "Revise",
    other_description: "Stay in plan mode and provide feedback",
  };
}

function exitPlanMode(env: ToolEnv, plan: PlanControl): Tool<ExitPlanModeParams> {
  return {
    name: "ExitPlanMode",
    description: readAsset("tools/exit_plan_mode.md"),
    get parameters() {
      return exitPlanModeParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.ExitPlanMode,
    resolve: (params) => ({
      execute: async (ctx) => {
        const view = env.planMode();
        if (!view.active) {
          return toolError({
            message: "Not in plan mode. ExitPlanMode is only available during plan mode.",
            brief: "Not in plan mode",
          });
        }
        const planFile = view.planFile;
        const content = await plan.readPlan();
        if (!content) {
          return toolError({
            message:
              `No plan file found. Write your plan to ${planFile} first, then call ExitPlanMode.`,
            brief: "No plan file",
          });
        }
        const approved = (head: string) =>
          `${head}\nPlan mode deactivated. All tools are now available.\nPlan saved to: ${planFile}`;

        if (env.isAfk()) {
          await plan.set(false);
          return toolOk({
            output: `${approved("Plan approved (auto-approved by policy).")}\n\n` +
              `## Approved Plan:\n${content}`,
            message: "Plan approved (auto)",
            brief: "Plan approved (auto)",
          });
        }

        const hasOptions = params.options !== null && params.options.length >= 2;
        env.emit({ type: "PlanDisplay", payload: { content, file_path: planFile ?? "" } });
        let answers: Record<string, string> | null;
        try {
          answers = await env.askQuestions(ctx.toolCallId, [approvalQuestion(params.options)]);
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          return toolError({ message: "Failed to get user response.", brief: "Question failed" });
        }
        if (answers === null) {
          return toolError({ message: PLAN_UNSUPPORTED_MESSAGE, brief: "Client unsupported" });
        }
        const values = Object.values(answers);
        if (values.length === 0) {
          return toolOk({
            output: "User dismissed without choosing. Plan mode remains active. Continue working " +
              "on your plan or call ExitPlanMode again when ready.",
            message: "Dismissed",
            brief: "Dismissed",
          });
        }
        if (values.includes("Reject and Exit")) {
          await plan.set(false);
          return rejected(
            "Plan rejected by user. Plan mode deactivated. All tools are now available. " +
              "Wait for the user's next message.",
            "Plan rejected, exited plan mode",
          );
        }
        if (values.includes("Reject")) {
          return rejected(
            "Plan rejected by user. Stay in plan mode. The user will provide feedback via " +
              "conversation. Wait for the user's next message before revising.",
            "Plan rejected",
          );
        }
        if (hasOptions) {
          const labels = new Set(params.options!.map((o) => o.label));
          const chosen = values.find((v) => labels.has(v));
          if (chosen !== undefined) {
            await plan.set(false);
            return toolOk({
              output: `${approved(`Plan approved by user. Selected approach: "${chosen}"`)}\n\n` +
                `IMPORTANT: Execute ONLY the selected approach "${chosen}". Ignore other ` +
                `approaches in the plan.\n\n## Approved Plan:\n${content}`,
              message: `Plan approved: ${chosen}`,
              brief: `Plan approved: ${chosen}`,
            });
          }
        } else if (values.includes("Approve")) {
          await plan.set(false);
          return toolOk({
            output: `${approved("Plan approved by user.")}\n\n## Approved Plan:\n${content}`,
            message: "Plan approved",
            brief: "Plan approved",
          });
        }
        const feedback = values.filter((v) => !["Approve", "Reject", "Reject and Exit"].includes(v))
          .at(-1) ?? "";
        return toolOk({
          output: feedback
            ? "User wants to revise the plan. Stay in plan mode. Revise based on the feedback " +
              `below.\n\nUser feedback: ${feedback}`
            : "User wants to revise the plan. Stay in plan mode. Wait for the user's next message " +
              "with feedback before revising.",
          message: "Plan revision requested",
          brief: "Plan revision requested",
        });
      },
    }),
  };
}

/** A rejection (stops the root turn like any rejection without feedback) with its own text. */
function rejected(message: string, brief: string): ToolReturnValue {
  const rv = toolRejected();
  rv.message = message;
  rv.display = [{ type: "brief", text: brief }];
  return rv;
}

/** Builds ExitPlanMode (root agent with plan mode only). */
export const exitPlanModeTool: ToolFactory = (env) =>
  env.planControl ? exitPlanMode(env, env.planControl) : null;
