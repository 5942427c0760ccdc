/**
 * TaskStop: stop one background task (with approval; not in plan mode).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { rootOnlyError } from "../lib/background/root_guard.ts";
import { formatTask, taskDisplayBlock } from "../lib/background/task_format.ts";
import { TaskNotFoundError } from "../lib/background/task_manager.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolFactory } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Reason recorded when none is given. */
export const DEFAULT_STOP_REASON = "Stopped by TaskStop";

/** TaskStop parameters. */
export const taskStopParamsSchema = lazyValue(() =>
  z.object({
    task_id: z.string().describe("Id of the background task to stop."),
    reason: z.string().default(DEFAULT_STOP_REASON).describe(
      "Short reason stored with the stopped task.",
    ),
  })
);
/** TaskStop parameters. */
export type TaskStopParams = z.infer<ReturnType<typeof taskStopParamsSchema>>;

/** Builds the TaskStop tool. */
export const taskStopTool: ToolFactory = (env): Tool<TaskStopParams> => ({
  name: "TaskStop",
  description: readAsset("tools/task_stop.md"),
  get parameters() {
    return taskStopParamsSchema();
  },
  jsonSchema: PARAM_JSON_SCHEMAS.TaskStop,
  isRoot: env.isRoot,
  resolve(params) {
    const denied = rootOnlyError(env);
    if (denied) return denied;
    if (env.planMode().active) {
      return toolError({
        message: "TaskStop is not available in plan mode.",
        brief: "Blocked in plan mode",
      });
    }
    const manager = env.run.tasks;
    return {
      async approval() {
        const task = await manager.get(params.task_id);
        if (!task) {
          return toolError({
            message: `Task not found: ${params.task_id}`,
            brief: "Task not found",
          });
        }
        return {
          action: "stop background task",
          description: `Stop background task \`${params.task_id}\``,
          display: [taskDisplayBlock(task)],
        };
      },
      async execute() {
        try {
          const stopped = await manager.stop(
            params.task_id,
            params.reason.trim() || DEFAULT_STOP_REASON,
          );
          return toolOk({
            output: formatTask(stopped, { includeCommand: true }),
            message: "Task stop requested.",
            display: [taskDisplayBlock(stopped)],
          });
        } catch (e) {
          if (e instanceof TaskNotFoundError) {
            return toolError({ message: e.message, brief: "Task not found" });
          }
          throw e;
        }
      },
    };
  },
});
