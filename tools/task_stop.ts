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
import { toolError, toolOk, toolRejected } from "../lib/tooling/result.ts";
import type {
  Tool,
  ToolCallContext,
  ToolEnv,
  ToolFactory,
  ToolReturnValue,
} from "../lib/tooling/tool.ts";
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

class TaskStopTool implements Tool<TaskStopParams> {
  readonly name = "TaskStop";
  readonly description = readAsset("tools/task_stop.md");
  get parameters() {
    return taskStopParamsSchema();
  }
  readonly jsonSchema = PARAM_JSON_SCHEMAS.TaskStop;
  readonly #env: ToolEnv;

  constructor(env: ToolEnv) {
    this.#env = env;
  }

  async call(params: TaskStopParams, ctx: ToolCallContext): Promise<ToolReturnValue> {
    const denied = rootOnlyError(this.#env);
    if (denied) return denied;
    if (this.#env.planMode().active) {
      return toolError({
        message: "TaskStop is not available in plan mode.",
        brief: "Blocked in plan mode",
      });
    }
    const manager = this.#env.run.tasks;
    const task = await manager.get(params.task_id);
    if (!task) {
      return toolError({ message: `Task not found: ${params.task_id}`, brief: "Task not found" });
    }
    const approval = await ctx.requestApproval({
      action: "stop background task",
      description: `Stop background task \`${params.task_id}\``,
      display: [taskDisplayBlock(task)],
    });
    if (!approval.approved) {
      return toolRejected(approval.feedback, { isRoot: this.#env.isRoot, denial: approval.denial });
    }
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
  }
}

/** Builds the TaskStop tool. */
export const taskStopTool: ToolFactory = (env) => new TaskStopTool(env);
