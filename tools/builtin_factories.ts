/**
 * Every built-in tool's factory, by the name the model calls. The registry
 * (`tools/registry.ts`) loads this module once, on the first use of any built-in tool: the
 * tool modules then load as one module graph, which costs a fraction of loading each with its
 * own dynamic import (an agent uses most of them, and every one is small: heavy helpers such
 * as the web extractors and the pure-TS grep load on first call).
 *
 * @module
 */
import type { ToolFactory } from "../lib/tooling/tool.ts";
import { agentSwarmTool } from "./agent_swarm.ts";
import { agentTool } from "./agent.ts";
import { askUserQuestionTool } from "./ask_user_question.ts";
import { createGoalTool } from "./create_goal.ts";
import { enterPlanModeTool } from "./enter_plan_mode.ts";
import { exitPlanModeTool } from "./exit_plan_mode.ts";
import { fetchUrlTool } from "./fetch_url.ts";
import { getGoalTool } from "./get_goal.ts";
import { globTool } from "./glob.ts";
import { grepTool } from "./grep.ts";
import { readFileTool } from "./read_file.ts";
import { readMediaFileTool } from "./read_media_file.ts";
import { searchWebTool } from "./search_web.ts";
import { sendDMailTool } from "./send_dmail.ts";
import { setGoalBudgetTool } from "./set_goal_budget.ts";
import { setTodoListTool } from "./set_todo_list.ts";
import { shellTool } from "./shell.ts";
import { strReplaceFileTool } from "./str_replace_file.ts";
import { taskListTool } from "./task_list.ts";
import { taskOutputTool } from "./task_output.ts";
import { taskStopTool } from "./task_stop.ts";
import { thinkTool } from "./think.ts";
import { updateGoalTool } from "./update_goal.ts";
import { writeFileTool } from "./write_file.ts";

/** Built-in tool factories, by tool name. */
export const BUILTIN_FACTORIES: Readonly<Record<string, ToolFactory>> = {
  Agent: agentTool,
  AskUserQuestion: askUserQuestionTool,
  SetTodoList: setTodoListTool,
  Shell: shellTool,
  TaskList: taskListTool,
  TaskOutput: taskOutputTool,
  TaskStop: taskStopTool,
  ReadFile: readFileTool,
  ReadMediaFile: readMediaFileTool,
  Glob: globTool,
  Grep: grepTool,
  WriteFile: writeFileTool,
  StrReplaceFile: strReplaceFileTool,
  SearchWeb: searchWebTool,
  FetchURL: fetchUrlTool,
  Think: thinkTool,
  SendDMail: sendDMailTool,
  EnterPlanMode: enterPlanModeTool,
  ExitPlanMode: exitPlanModeTool,
  CreateGoal: createGoalTool,
  GetGoal: getGoalTool,
  UpdateGoal: updateGoalTool,
  SetGoalBudget: setGoalBudgetTool,
  AgentSwarm: agentSwarmTool,
};
