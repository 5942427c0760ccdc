/**
 * Agent: delegate a task to a subagent of one of the root agent's declared types, or resume
 * an earlier subagent instance (reference §7.10).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset, renderTemplate } from "../lib/assets/mod.ts";
import type {
  BackgroundStartResult,
  ForegroundRunResult,
  SubagentTypeInfo,
} from "../lib/tooling/subagent_service.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory, ToolReturnValue } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** Longest timeout a run may ask for, in seconds. */
export const MAX_AGENT_TIMEOUT_S = 3600;

/** Agent parameters. */
export const agentParamsSchema = lazyValue(() =>
  z.object({
    description: z.string().describe("A short (3-5 word) description of the task"),
    prompt: z.string().describe("The task for the agent to perform"),
    subagent_type: z.string().default("coder").describe(
      "The built-in agent type to use. Defaults to `coder`.",
    ),
    model: z.string().nullable().default(null).describe(
      "Optional model override. Selection priority is: this parameter, then the built-in " +
        "type default model, then the parent agent's current model.",
    ),
    resume: z.string().nullable().default(null).describe(
      "Optional agent ID to resume instead of creating a new instance.",
    ),
    run_in_background: z.boolean().default(false).describe(
      "Whether to run the agent in the background. Prefer false unless the task can " +
        "continue independently and there is a clear benefit to returning control before " +
        "the result is needed.",
    ),
    timeout: z.number().int().min(30).max(MAX_AGENT_TIMEOUT_S).nullable().default(null).describe(
      "Timeout in seconds for the agent task. Foreground: no default timeout (runs until " +
        "completion), max 3600s (1hr). Background: default from config (15min), max 3600s " +
        "(1hr). The agent is stopped if it exceeds this limit.",
    ),
  })
);
/** Agent parameters. */
export type AgentParams = z.infer<ReturnType<typeof agentParamsSchema>>;

/** Message when a subagent calls Agent. */
export const SUBAGENT_NESTING_MESSAGE = "Subagents cannot launch other subagents.";

/** One line of the type listing in the tool description. */
export function subagentTypeLine(t: SubagentTypeInfo): string {
  const tools = t.tools === null ? "*" : t.tools.length === 0 ? "(none)" : t.tools.join(", ");
  const when = t.whenToUse ? ` When to use: ${t.whenToUse.split(/\s+/).join(" ").trim()}` : "";
  return `- \`${t.name}\`: ${t.description} (Tools: ${tools}, Model: ${
    t.model ?? "inherit"
  }, Background: ${t.background ? "yes" : "no"}).${when}`;
}

/** The rendered tool description for a list of types. */
export function agentDescription(types: readonly SubagentTypeInfo[]): string {
  const listing = types.length > 0 ? types.map(subagentTypeLine).join("\n") : "(none)";
  return renderTemplate(readAsset("tools/agent.md"), { SUBAGENT_TYPES_MD: listing });
}

function agent(env: ToolEnv, description: string): Tool<AgentParams> {
  return {
    name: "Agent",
    description,
    get parameters() {
      return agentParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.Agent,
    resolve: (params) => ({
      execute: async (ctx) => {
        const service = env.subagents;
        if (!env.isRoot) {
          return toolError({ message: SUBAGENT_NESTING_MESSAGE, brief: "Agent unavailable" });
        }
        if (!service) {
          return toolError({
            message: "This agent declares no subagent types (`subagents` in its agent spec), so " +
              "there is no subagent to launch. Do the task yourself.",
            brief: "Agent unavailable",
          });
        }
        if (params.model !== null && !service.hasModel(params.model)) {
          return toolError({
            message: `Unknown model alias: ${params.model}`,
            brief: "Invalid model alias",
          });
        }
        const req = {
          description: params.description,
          prompt: params.prompt,
          subagentType: params.subagent_type || "coder",
          model: params.model,
          resume: params.resume,
          timeoutS: params.timeout,
        };
        const runCtx = { toolCallId: ctx.toolCallId, signal: ctx.signal };
        return params.run_in_background
          ? backgroundResult(await service.runBackground(req, runCtx))
          : foregroundResult(await service.runForeground(req, runCtx), req.subagentType);
      },
    }),
  };
}

/** The Agent tool result of a foreground run (§7.10). */
export function foregroundResult(run: ForegroundRunResult, requestedType: string): ToolReturnValue {
  switch (run.status) {
    case "error":
      return toolError({ message: run.message, brief: run.brief });
    case "timed_out":
      return toolError({
        message: `Agent timed out after ${run.timeoutS}s.`,
        brief: `Agent timed out (${run.timeoutS}s)`,
      });
    case "cancelled":
      return toolError({ message: "Subagent run was cancelled.", brief: "Agent cancelled" });
    case "completed": {
      const lines = [`agent_id: ${run.agentId}`, `resumed: ${run.resumed}`];
      if (run.resumed && requestedType && requestedType !== run.actualType) {
        lines.push(`requested_subagent_type: ${requestedType}`);
      }
      lines.push(`actual_subagent_type: ${run.actualType}`, "status: completed", "", "[summary]");
      lines.push(run.summary);
      return toolOk({ output: lines.join("\n") });
    }
  }
}

/** The Agent tool result of starting a background run (§7.10). */
export function backgroundResult(start: BackgroundStartResult): ToolReturnValue {
  if (start.status === "error") return toolError({ message: start.message, brief: start.brief });
  const { task, agentId } = start;
  const lines = [
    `task_id: ${task.id}`,
    `kind: ${task.kind}`,
    `status: ${task.status}`,
    `description: ${task.description}`,
    `agent_id: ${agentId}`,
    `actual_subagent_type: ${start.actualType}`,
    "automatic_notification: true",
    "next_step: Carry on with other work; a notification arrives by itself when the agent " +
    "finishes.",
    "next_step: For a quick look at its progress without waiting, call TaskOutput with this " +
    "task_id; pass block=true only when you really want to wait for it.",
    `resume_hint: Use Agent(resume="${agentId}", prompt="...") to continue this instance later.`,
  ];
  return toolOk({ output: lines.join("\n"), message: "Background task started." });
}

/** Builds the Agent tool (described with the root agent's subagent types). */
export const agentTool: ToolFactory = async (env) => {
  const types = env.subagents ? await env.subagents.types() : [];
  return agent(env, agentDescription(types));
};
