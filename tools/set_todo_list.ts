/**
 * SetTodoList: replace or read the agent's todo list.
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import { TodoStatusSchema } from "../lib/wire/display.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** One todo as the model sends it. */
export const todoParamSchema = lazyValue(() =>
  z.object({
    title: z.string().min(1).describe("What the item is about."),
    status: TodoStatusSchema.describe("Where the item stands."),
  })
);

/** SetTodoList parameters. */
export const setTodoListParamsSchema = lazyValue(() =>
  z.object({
    todos: z.array(todoParamSchema()).nullable().default(null).describe(
      "The complete new todo list. Leave it out to read the current list unchanged.",
    ),
  })
);
/** SetTodoList parameters. */
export type SetTodoListParams = z.infer<ReturnType<typeof setTodoListParamsSchema>>;

function setTodoList(env: ToolEnv): Tool<SetTodoListParams> {
  return {
    name: "SetTodoList",
    description: readAsset("tools/set_todo_list.md"),
    get parameters() {
      return setTodoListParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.SetTodoList,
    resolve: (params) => ({
      execute: async () => {
        if (params.todos === null) {
          const todos = env.todos.get();
          const output = todos.length === 0
            ? "Todo list is empty."
            : ["Current todo list:", ...todos.map((t) => `- [${t.status}] ${t.title}`)].join("\n");
          return toolOk({ output, message: "" });
        }
        const items = params.todos.map((t) => ({ title: t.title, status: t.status }));
        await env.todos.set(items);
        return toolOk({
          output: "Todo list updated",
          message: "Todo list updated",
          display: [{ type: "todo", items }],
        });
      },
    }),
  };
}

/** Builds the SetTodoList tool. */
export const setTodoListTool: ToolFactory = (env) => setTodoList(env);
