/**
 * Building the soul of one subagent instance: its own context (restored from the instance
 * dir, the persisted system prompt reused), its own tool set (the type's effective tools,
 * `isRoot: false`), the parent's approval state and runtime and hooks, and its own model.
 *
 * @module
 */
import type { ResolvedAgentSpec } from "../agent/spec.ts";
import type { LLM } from "../llm/provider.ts";
import { Context } from "../soul/context.ts";
import { KimiSoul } from "../soul/soul.ts";
import { Toolset } from "../soul/toolset.ts";
import type { Tool, ToolEnv } from "../tooling/tool.ts";
import type { TodoItem } from "../wire/display.ts";

/** Options of {@link buildSubagentSoul}. */
export interface BuildSubagentSoulOptions {
  /** The parent (root) soul: approvals and loop limits are shared with it. */
  parent: KimiSoul;
  /** The parent's tool environment, from which the child's is derived. */
  parentEnv: ToolEnv;
  /** The subagent type's resolved spec. */
  typeSpec: ResolvedAgentSpec;
  /** Subagent type name. */
  subagentType: string;
  /** Instance id. */
  agentId: string;
  /** `context.jsonl` of the instance. */
  contextPath: string;
  /** The model the child runs with (null: "LLM not set" on run). */
  llm: LLM | null;
  /** Renders a spec's system prompt (used on the instance's first run only). */
  renderSystemPrompt: (spec: ResolvedAgentSpec) => Promise<string>;
  /** Loads tools by name for an environment. */
  loadTools: (names: readonly string[], env: ToolEnv) => Promise<Tool[]>;
  /** Background runs: the task whose `background_agent` source stamps the approvals. */
  backgroundTaskId?: string;
}

/** Build the soul of a subagent instance (it has no subagents of its own). */
export async function buildSubagentSoul(opts: BuildSubagentSoulOptions): Promise<KimiSoul> {
  const { parent, parentEnv } = opts;
  const context = await Context.restore(opts.contextPath);
  if (context.systemPrompt === null) {
    await context.writeSystemPrompt(await opts.renderSystemPrompt(opts.typeSpec));
  }
  // A subagent's changes are undone with the root's turns; the same bound on parallel calls.
  const toolset = new Toolset({
    scope: parent.toolset.scope,
    fileHistory: parent.toolset.fileHistory,
    maxParallelCalls: parent.toolset.maxParallelCalls,
  });
  const soul = new KimiSoul({
    name: opts.typeSpec.name,
    llm: opts.llm,
    context,
    toolset,
    approval: parent.approval,
    loop: { ...parent.loop },
    isRoot: false,
    hooks: parent.hooks ?? undefined,
    approvalSource: {
      agentId: opts.agentId,
      subagentType: opts.subagentType,
      ...(opts.backgroundTaskId
        ? { kind: "background_agent" as const, id: opts.backgroundTaskId }
        : {}),
    },
  });
  let todos: TodoItem[] = [];
  const env: ToolEnv = {
    ...parentEnv,
    isRoot: false,
    modelCapabilities: opts.llm?.capabilities ?? new Set(),
    planMode: () => ({ active: false, planFile: null }),
    planControl: undefined,
    dmail: undefined,
    subagents: undefined,
    goals: undefined,
    terminal: undefined, // a client terminal shows the root agent's tool calls only
    todos: {
      get: () => todos,
      set: (items) => {
        todos = items;
        return Promise.resolve();
      },
    },
    emit: (e) => soul.emit(e),
  };
  for (const tool of await opts.loadTools(opts.typeSpec.tools, env)) toolset.add(tool);
  return soul;
}
