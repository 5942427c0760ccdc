/**
 * AgentSwarm: run one prompt template over a list of items, one foreground subagent per item
 * with bounded concurrency, and return one structured result per item (root agent only).
 *
 * @module
 */
import * as z from "zod";
import { lazyValue } from "../lib/lazy_record.ts";
import { readAsset } from "../lib/assets/mod.ts";
import { MAX_SWARM_ITEMS, type SwarmRunResult } from "../lib/tooling/subagent_service.ts";
import { toolError, toolOk } from "../lib/tooling/result.ts";
import type { Tool, ToolEnv, ToolFactory } from "../lib/tooling/tool.ts";
import { PARAM_JSON_SCHEMAS } from "./param_schemas.gen.ts";

/** AgentSwarm parameters. */
export const agentSwarmParamsSchema = lazyValue(() =>
  z.object({
    // Kept terse: every request carries this schema. Limits (1 to 128 items, all different,
    // concurrency 1 to 128) are checked when the swarm starts, with messages naming them.
    description: z.string(),
    prompt_template: z.string(),
    items: z.array(z.string()),
    subagent_type: z.string().optional(),
    concurrency: z.number().int().optional(),
  })
);
/** AgentSwarm parameters. */
export type AgentSwarmParams = z.infer<ReturnType<typeof agentSwarmParamsSchema>>;

function escapeAttr(value: string): string {
  return value.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;");
}

/** The tool output of a finished swarm: a summary line and one element per item. */
export function renderSwarmResult(run: SwarmRunResult): string {
  const count = (s: string) => run.results.filter((r) => r.status === s).length;
  const lines = [
    `<agent_swarm_result swarm_id="${run.swarmId}" concurrency="${run.concurrency}">`,
    `<summary>items: ${run.results.length}, ok: ${count("ok")}, error: ${count("error")}, ` +
    `cancelled: ${count("cancelled")}</summary>`,
  ];
  for (const r of run.results) {
    const id = r.agentId ? ` agent_id="${r.agentId}"` : "";
    lines.push(
      `<item index="${r.index}" value="${escapeAttr(r.item)}"${id} outcome="${r.status}">` +
        `${r.output}</item>`,
    );
  }
  lines.push("</agent_swarm_result>");
  return lines.join("\n");
}

function agentSwarm(env: ToolEnv, description: string): Tool<AgentSwarmParams> {
  return {
    name: "AgentSwarm",
    description,
    get parameters() {
      return agentSwarmParamsSchema();
    },
    jsonSchema: PARAM_JSON_SCHEMAS.AgentSwarm,
    resolve: (params) => ({
      execute: async (ctx) => {
        const service = env.subagents;
        if (!env.isRoot || !service) {
          return toolError({
            message: "AgentSwarm is only available to the main agent with subagent types declared.",
            brief: "AgentSwarm unavailable",
          });
        }
        const run = await service.runSwarm({
          description: params.description,
          promptTemplate: params.prompt_template,
          items: params.items,
          subagentType: params.subagent_type || "coder",
          concurrency: params.concurrency === undefined
            ? null
            : Math.min(Math.max(1, params.concurrency), MAX_SWARM_ITEMS),
        }, { toolCallId: ctx.toolCallId, signal: ctx.signal });
        if ("status" in run) return toolError({ message: run.message, brief: run.brief });
        const failed = run.results.filter((r) => r.status !== "ok").length;
        return toolOk({
          output: renderSwarmResult(run),
          message: `Swarm finished: ${run.results.length - failed}/${run.results.length} ok.`,
        });
      },
    }),
  };
}

/** Builds AgentSwarm (root agents with subagent types only). */
export const agentSwarmTool: ToolFactory = (env) => {
  if (!env.subagents || !env.isRoot) return null;
  return agentSwarm(env, readAsset("tools/agent_swarm.md"));
};
