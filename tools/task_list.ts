/**
 * TaskList: list this session's background tasks.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { rootOnlyError } from "../lib/background/root_guard.ts";
import { formatTaskList, taskDisplayBlock } from "../lib/background/task_format.ts";
import { toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** TaskList parameters. */
export const taskListParamsSchema = lazyValue(() =>
  z.object({
    active_only: z.boolean().default(true).describe(
      "List only tasks that have not finished yet.",
    ),
    limit: z.number().int().min(1).max(100).default(20).describe(
      "Largest number of tasks to list.",
    ),
  })
);
/** TaskList parameters. */
export type TaskListParams = z.infer<ReturnType<typeof taskListParamsSchema>>;

function taskList(env: ToolEnv): Tool<TaskListParams> {
  return {
    name: "TaskList",
    description: readAsset("tools/task_list.md"),
    get parameters() {
      return taskListParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.TaskList,
    resolve: (params) => ({
      execute: async () => {
        const denied = rootOnlyError(env);
        if (denied) return denied;
        const manager = env.run.tasks;
        const tasks = await manager.list({ activeOnly: params.active_only, limit: params.limit });
        return toolOk({
          output: formatTaskList(tasks, { activeOnly: params.active_only }),
          message: "Task list retrieved.",
          display: tasks.map(taskDisplayBlock),
        });
      },
    }),
  };
}

/** Builds the TaskList tool. */
export const taskListTool: ToolFactory = (env) => taskList(env);
