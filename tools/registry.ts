/**
 * Built-in tools by name. The tool modules load together, on the first use of any built-in
 * tool (`tools/builtin_factories.ts`), so a run that uses none (e.g. `kimi --help`, `kimi mcp`)
 * loads none.
 *
 * @module
 */
import type { ToolFactory } from "../lib/tooling/tool.ts";

/** Loader of a built-in tool's factory. */
export type ToolLoader = () => Promise<ToolFactory>;

let factories: Promise<typeof import("./builtin_factories.ts")> | null = null;

function builtinFactory(name: string): ToolLoader {
  return async () => {
    factories ??= import("./builtin_factories.ts");
    return (await factories).BUILTIN_FACTORIES[name];
  };
}

/** Built-in tools, by the name the model calls. */
export const BUILTIN_TOOLS: Readonly<Record<string, ToolLoader>> = {
  Agent: builtinFactory("Agent"),
  AskUserQuestion: builtinFactory("AskUserQuestion"),
  SetTodoList: builtinFactory("SetTodoList"),
  Shell: builtinFactory("Shell"),
  TaskList: builtinFactory("TaskList"),
  TaskOutput: builtinFactory("TaskOutput"),
  TaskStop: builtinFactory("TaskStop"),
  ReadFile: builtinFactory("ReadFile"),
  ReadMediaFile: builtinFactory("ReadMediaFile"),
  Glob: builtinFactory("Glob"),
  Grep: builtinFactory("Grep"),
  WriteFile: builtinFactory("WriteFile"),
  StrReplaceFile: builtinFactory("StrReplaceFile"),
  SearchWeb: builtinFactory("SearchWeb"),
  FetchURL: builtinFactory("FetchURL"),
  Think: builtinFactory("Think"),
  SendDMail: builtinFactory("SendDMail"),
  EnterPlanMode: builtinFactory("EnterPlanMode"),
  ExitPlanMode: builtinFactory("ExitPlanMode"),
  CreateGoal: builtinFactory("CreateGoal"),
  GetGoal: builtinFactory("GetGoal"),
  UpdateGoal: builtinFactory("UpdateGoal"),
  SetGoalBudget: builtinFactory("SetGoalBudget"),
  AgentSwarm: builtinFactory("AgentSwarm"),
};
