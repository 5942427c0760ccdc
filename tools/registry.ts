/**
 * Built-in tools by name. Each entry imports its module lazily, so a run loads only the tools
 * its agent uses.
 *
 * @module
 */
import type { ToolFactory } from "../lib/tooling/tool.ts";

/** Loader of a built-in tool's factory. */
export type ToolLoader = () => Promise<ToolFactory>;

/** Built-in tools, by the name the model calls. */
export const BUILTIN_TOOLS: Readonly<Record<string, ToolLoader>> = {
  Agent: async () => (await import("./agent.ts")).agentTool,
  AskUserQuestion: async () => (await import("./ask_user_question.ts")).askUserQuestionTool,
  SetTodoList: async () => (await import("./set_todo_list.ts")).setTodoListTool,
  Shell: async () => (await import("./shell.ts")).shellTool,
  TaskList: async () => (await import("./task_list.ts")).taskListTool,
  TaskOutput: async () => (await import("./task_output.ts")).taskOutputTool,
  TaskStop: async () => (await import("./task_stop.ts")).taskStopTool,
  ReadFile: async () => (await import("./read_file.ts")).readFileTool,
  ReadMediaFile: async () => (await import("./read_media_file.ts")).readMediaFileTool,
  Glob: async () => (await import("./glob.ts")).globTool,
  Grep: async () => (await import("./grep.ts")).grepTool,
  WriteFile: async () => (await import("./write_file.ts")).writeFileTool,
  StrReplaceFile: async () => (await import("./str_replace_file.ts")).strReplaceFileTool,
  SearchWeb: async () => (await import("./search_web.ts")).searchWebTool,
  FetchURL: async () => (await import("./fetch_url.ts")).fetchUrlTool,
  Think: async () => (await import("./think.ts")).thinkTool,
  SendDMail: async () => (await import("./send_dmail.ts")).sendDMailTool,
  EnterPlanMode: async () => (await import("./enter_plan_mode.ts")).enterPlanModeTool,
  ExitPlanMode: async () => (await import("./exit_plan_mode.ts")).exitPlanModeTool,
};
