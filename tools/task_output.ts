/**
 * TaskOutput: status and output tail of one background task.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { rootOnlyError } from "../lib/background/root_guard.ts";
import { formatTaskOutput, taskDisplayBlock } from "../lib/background/task_format.ts";
import { TaskNotFoundError } from "../lib/background/task_manager.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Bytes of output tail shown after `[output]`. */
export const TASK_OUTPUT_PREVIEW_BYTES = 32 * 1024;

/** TaskOutput parameters. */
export const taskOutputParamsSchema = lazyValue(() =>
  z.object({
    task_id: z.string().describe("Id of the background task to look at."),
    block: z.boolean().default(false).describe(
      "Wait for the task to finish before answering.",
    ),
    timeout: z.number().int().min(0).max(3600).default(30).describe(
      "Longest wait in seconds when block is true.",
    ),
  })
);
/** TaskOutput parameters. */
export type TaskOutputParams = z.infer<ReturnType<typeof taskOutputParamsSchema>>;

function taskOutput(env: ToolEnv): Tool<TaskOutputParams> {
  return {
    name: "TaskOutput",
    description: readAsset("tools/task_output.md"),
    get parameters() {
      return taskOutputParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.TaskOutput,
    resolve: (params) => ({
      execute: async (ctx) => {
        const denied = rootOnlyError(env);
        if (denied) return denied;
        const manager = env.run.tasks;
        try {
          const snap = await manager.output(params.task_id, {
            block: params.block,
            timeoutS: params.timeout,
            maxBytes: TASK_OUTPUT_PREVIEW_BYTES,
            signal: ctx.signal,
          });
          return toolOk({
            output: formatTaskOutput(snap),
            message: "Task output retrieved.",
            display: [taskDisplayBlock(snap.task)],
          });
        } catch (e) {
          if (e instanceof TaskNotFoundError) {
            return toolError({ message: e.message, brief: "Task not found" });
          }
          throw e;
        }
      },
    }),
  };
}

/** Builds the TaskOutput tool. */
export const taskOutputTool: ToolFactory = (env) => taskOutput(env);
