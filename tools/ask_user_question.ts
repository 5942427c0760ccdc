/**
 * AskUserQuestion: put multiple-choice questions to the user and return the answers.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolFactory } from "../lib/tooling/tool.ts";
import type { Question } from "../lib/wire/messages.ts";
import { pyJsonDumps } from "../lib/wire/py_json.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** One option of a question. */
export const questionOptionParamSchema = lazyValue(() =>
  z.object({
    label: z.string().describe("Short text of the option (1-5 words)."),
    description: z.string().default("").describe("What picking this option implies."),
  })
);

/** One question. */
export const questionParamSchema = lazyValue(() =>
  z.object({
    question: z.string().describe("The question itself, ending with '?'."),
    header: z.string().default("").describe("Short tag for the question (12 characters at most)."),
    options: z.array(questionOptionParamSchema()).min(2).max(4).describe(
      "Two to four distinct choices; an 'Other' choice is added automatically.",
    ),
    multi_select: z.boolean().default(false).describe("Whether several options may be chosen."),
  })
);

/** AskUserQuestion parameters. */
export const askUserQuestionParamsSchema = lazyValue(() =>
  z.object({
    questions: z.array(questionParamSchema()).min(1).max(4).describe(
      "The questions to ask (one to four).",
    ),
  })
);
/** AskUserQuestion parameters. */
export type AskUserQuestionParams = z.infer<ReturnType<typeof askUserQuestionParamsSchema>>;

/** Output when afk mode dismisses the questions. */
export const AFK_OUTPUT =
  '{"answers": {}, "note": "Running in afk mode. No user is present. Make your own decision."}';
/** Output when the user dismisses the questions. */
export const DISMISSED_OUTPUT =
  '{"answers": {}, "note": "User dismissed the question without answering."}';
/** Error when the client cannot show questions. */
export const UNSUPPORTED_MESSAGE = "The connected client does not support interactive questions. " +
  "Do NOT call this tool again. Ask the user directly in your text response instead.";

const PLAN_MODE_NOTE = "\n\nIn plan mode: ask only to clarify requirements or to choose between " +
  "approaches. The user cannot see your plan until you call ExitPlanMode, so do not ask them " +
  "to approve it or refer to it here.";

/** Builds the AskUserQuestion tool. */
export const askUserQuestionTool: ToolFactory = (env): Tool<AskUserQuestionParams> => {
  const base = readAsset("tools/ask_user_question.md");
  return {
    name: "AskUserQuestion",
    /** The description, with a plan-mode note while plan mode is on. */
    get description(): string {
      return env.planMode().active ? base + PLAN_MODE_NOTE : base;
    },
    get parameters() {
      return askUserQuestionParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.AskUserQuestion,
    resolve: (params) => ({
      execute: async (ctx) => {
        if (env.isAfk()) {
          return toolOk({
            output: AFK_OUTPUT,
            message: "Afk mode, auto-dismissed.",
            brief: "Auto-dismissed (afk)",
          });
        }
        const questions: Question[] = params.questions.map((q) => ({
          question: q.question,
          header: q.header,
          options: q.options.map((o) => ({ label: o.label, description: o.description })),
          multi_select: q.multi_select,
          body: "",
          other_label: "",
          other_description: "",
        }));
        let answers: Record<string, string> | null;
        try {
          answers = await env.askQuestions(ctx.toolCallId, questions);
        } catch (e) {
          if (ctx.signal.aborted) throw e;
          return toolError({ message: "Failed to get user response.", brief: "Question failed" });
        }
        if (answers === null) {
          return toolError({ message: UNSUPPORTED_MESSAGE, brief: "Client unsupported" });
        }
        if (Object.keys(answers).length === 0) {
          return toolOk({
            output: DISMISSED_OUTPUT,
            message: "User dismissed the question without answering.",
            brief: "User dismissed",
          });
        }
        return toolOk({
          output: pyJsonDumps({ answers }),
          message: "User has answered.",
          brief: "User answered",
        });
      },
    }),
  };
};
