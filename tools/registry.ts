/**
 * Built-in tools by name. Each entry imports its module lazily, so a run loads only the tools
 * its agent uses.
 *
 * @module
 */
import { lazyImport } from "../lib/lazy_import.ts";
import type { ToolFactory } from "../lib/tooling/tool.ts";

/** Loader of a built-in tool's factory. */
export type ToolLoader = () => Promise<ToolFactory>;

/** Built-in tools, by the name the model calls. */
export const BUILTIN_TOOLS: Readonly<Record<string, ToolLoader>> = {
  Agent: async () =>
    (await lazyImport<typeof import("./agent.ts")>("./agent.ts", import.meta.url)).agentTool,
  AskUserQuestion: async () =>
    (await lazyImport<typeof import("./ask_user_question.ts")>(
      "./ask_user_question.ts",
      import.meta.url,
    )).askUserQuestionTool,
  SetTodoList: async () =>
    (await lazyImport<typeof import("./set_todo_list.ts")>("./set_todo_list.ts", import.meta.url))
      .setTodoListTool,
  Shell: async () =>
    (await lazyImport<typeof import("./shell.ts")>("./shell.ts", import.meta.url)).shellTool,
  TaskList: async () =>
    (await lazyImport<typeof import("./task_list.ts")>("./task_list.ts", import.meta.url))
      .taskListTool,
  TaskOutput: async () =>
    (await lazyImport<typeof import("./task_output.ts")>("./task_output.ts", import.meta.url))
      .taskOutputTool,
  TaskStop: async () =>
    (await lazyImport<typeof import("./task_stop.ts")>("./task_stop.ts", import.meta.url))
      .taskStopTool,
  ReadFile: async () =>
    (await lazyImport<typeof import("./read_file.ts")>("./read_file.ts", import.meta.url))
      .readFileTool,
  ReadMediaFile: async () =>
    (await lazyImport<typeof import("./read_media_file.ts")>(
      "./read_media_file.ts",
      import.meta.url,
    )).readMediaFileTool,
  Glob: async () =>
    (await lazyImport<typeof import("./glob.ts")>("./glob.ts", import.meta.url)).globTool,
  Grep: async () =>
    (await lazyImport<typeof import("./grep.ts")>("./grep.ts", import.meta.url)).grepTool,
  WriteFile: async () =>
    (await lazyImport<typeof import("./write_file.ts")>("./write_file.ts", import.meta.url))
      .writeFileTool,
  StrReplaceFile: async () =>
    (await lazyImport<typeof import("./str_replace_file.ts")>(
      "./str_replace_file.ts",
      import.meta.url,
    )).strReplaceFileTool,
  SearchWeb: async () =>
    (await lazyImport<typeof import("./search_web.ts")>("./search_web.ts", import.meta.url))
      .searchWebTool,
  FetchURL: async () =>
    (await lazyImport<typeof import("./fetch_url.ts")>("./fetch_url.ts", import.meta.url))
      .fetchUrlTool,
  Think: async () =>
    (await lazyImport<typeof import("./think.ts")>("./think.ts", import.meta.url)).thinkTool,
  SendDMail: async () =>
    (await lazyImport<typeof import("./send_dmail.ts")>("./send_dmail.ts", import.meta.url))
      .sendDMailTool,
  EnterPlanMode: async () =>
    (await lazyImport<typeof import("./enter_plan_mode.ts")>(
      "./enter_plan_mode.ts",
      import.meta.url,
    )).enterPlanModeTool,
  ExitPlanMode: async () =>
    (await lazyImport<typeof import("./exit_plan_mode.ts")>("./exit_plan_mode.ts", import.meta.url))
      .exitPlanModeTool,
  CreateGoal: async () =>
    (await lazyImport<typeof import("./create_goal.ts")>("./create_goal.ts", import.meta.url))
      .createGoalTool,
  GetGoal: async () =>
    (await lazyImport<typeof import("./get_goal.ts")>("./get_goal.ts", import.meta.url))
      .getGoalTool,
  UpdateGoal: async () =>
    (await lazyImport<typeof import("./update_goal.ts")>("./update_goal.ts", import.meta.url))
      .updateGoalTool,
  SetGoalBudget: async () =>
    (await lazyImport<typeof import("./set_goal_budget.ts")>(
      "./set_goal_budget.ts",
      import.meta.url,
    )).setGoalBudgetTool,
  AgentSwarm: async () =>
    (await lazyImport<typeof import("./agent_swarm.ts")>("./agent_swarm.ts", import.meta.url))
      .agentSwarmTool,
};
