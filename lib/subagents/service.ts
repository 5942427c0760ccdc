/**
 * The subagent service of a root agent: prepares (or resumes) an instance, builds its soul,
 * runs it in the foreground with the parent's wire receiving its events, and formats the
 * Agent tool result (reference §7.10).
 *
 * @module
 */
import type { ResolvedAgentSpec } from "../agent/spec.ts";
import type { LLM } from "../llm/provider.ts";
import { RunCancelled } from "../soul/errors.ts";
import type { KimiSoul } from "../soul/soul.ts";
import { toolError, toolOk } from "../tooling/result.ts";
import type { Tool, ToolEnv } from "../tooling/tool.ts";
import type { ToolReturnValue } from "../wire/messages.ts";
import { buildSubagentSoul } from "./child_soul.ts";
import type { InstanceRecord, SubagentStore } from "./instance_store.ts";
import type {
  AgentRunContext,
  AgentRunRequest,
  SubagentService,
  SubagentTypeInfo,
} from "./service_api.ts";
import { runWithSummaryContinuation } from "./turn_runner.ts";

/** Options of {@link SubagentManager}. */
export interface SubagentManagerOptions {
  /** The root soul. */
  parent: KimiSoul;
  /** The root agent's tool environment (read when a subagent is built). */
  parentEnv: () => ToolEnv;
  /** The root agent's spec (its `subagents` are the available types). */
  rootSpec: ResolvedAgentSpec;
  /** Instance storage of the session. */
  store: SubagentStore;
  /** Whether a model alias is configured. */
  hasModel: (alias: string) => boolean;
  /** Builds (or reuses) the LLM of a configured model alias. */
  llmForAlias: (alias: string) => Promise<LLM | null>;
  /** Renders a spec's system prompt. */
  renderSystemPrompt: (spec: ResolvedAgentSpec) => Promise<string>;
  /** Loads tools by name for an environment. */
  loadTools: (names: readonly string[], env: ToolEnv) => Promise<Tool[]>;
}

const RUNNING = new Set(["running_foreground", "running_background"]);

/** Subagent launching for one root agent. */
export class SubagentManager implements SubagentService {
  readonly #opts: SubagentManagerOptions;
  readonly #specs = new Map<string, Promise<ResolvedAgentSpec>>();

  /** Create the service. */
  constructor(opts: SubagentManagerOptions) {
    this.#opts = opts;
  }

  /** The instance store. */
  get store(): SubagentStore {
    return this.#opts.store;
  }

  #typeSpec(name: string): Promise<ResolvedAgentSpec> | null {
    const entry = Object.hasOwn(this.#opts.rootSpec.subagents, name)
      ? this.#opts.rootSpec.subagents[name]
      : undefined;
    if (!entry) return null;
    let p = this.#specs.get(name);
    if (!p) {
      p = entry.spec();
      this.#specs.set(name, p);
      p.catch(() => this.#specs.delete(name));
    }
    return p;
  }

  /** The declared subagent types, in declaration order. */
  async types(): Promise<SubagentTypeInfo[]> {
    const out: SubagentTypeInfo[] = [];
    for (const [name, entry] of Object.entries(this.#opts.rootSpec.subagents)) {
      const spec = await this.#typeSpec(name)!;
      out.push({
        name,
        description: entry.description,
        tools: spec.allowedTools === null ? null : spec.tools,
        model: spec.model,
        background: false,
        whenToUse: spec.whenToUse,
      });
    }
    return out;
  }

  /** Whether `alias` is a configured model. */
  hasModel(alias: string): boolean {
    return this.#opts.hasModel(alias);
  }

  /** Run a subagent in the foreground; never throws for run failures (they become tool errors). */
  async runForeground(req: AgentRunRequest, ctx: AgentRunContext): Promise<ToolReturnValue> {
    const { store } = this.#opts;
    if (req.model !== null && !this.hasModel(req.model)) {
      return toolError({
        message: `Unknown model alias: ${req.model}`,
        brief: "Invalid model alias",
      });
    }

    // Prepare (or load) the instance.
    let record: InstanceRecord;
    let resumed = false;
    if (req.resume) {
      const found = await store.get(req.resume);
      if (!found) {
        return toolError({
          message: `Subagent instance not found: ${req.resume}. Resume only ids returned by ` +
            "earlier Agent calls of this session, or omit `resume` to start a new agent.",
          brief: "Agent not found",
        });
      }
      if (RUNNING.has(found.status)) {
        return toolError({
          message: `Agent instance ${found.agent_id} is still ${found.status} and cannot be ` +
            "resumed concurrently.",
          brief: "Agent already running",
        });
      }
      record = found;
      resumed = true;
    } else {
      const typeSpec = this.#typeSpec(req.subagentType);
      if (!typeSpec) return this.#unknownType(req.subagentType);
      const spec = await typeSpec;
      record = await store.create({
        subagentType: req.subagentType,
        description: req.description.trim(),
        modelOverride: req.model,
        effectiveModel: req.model ?? spec.model,
      });
    }
    const agentId = record.agent_id;
    const actualType = record.subagent_type;
    const typeSpecP = this.#typeSpec(actualType);
    if (!typeSpecP) return this.#unknownType(actualType);

    let status: InstanceRecord["status"] = record.status;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new AbortController();
    try {
      const typeSpec = await typeSpecP;
      const launch = record.launch_spec;
      const alias = req.model ?? launch.model_override ?? launch.effective_model ?? typeSpec.model;
      if (alias !== null && !this.hasModel(alias)) {
        return toolError({
          message: `Unknown model alias: ${alias}`,
          brief: "Invalid model alias",
        });
      }
      const llm = alias !== null ? await this.#opts.llmForAlias(alias) : this.#opts.parent.llm;
      await store.update(agentId, {
        status: "running_foreground",
        description: req.description.trim(),
        ...(req.model !== null
          ? { launchSpec: { model_override: req.model, effective_model: req.model } }
          : {}),
      });
      await Deno.writeTextFile(store.promptPath(agentId), req.prompt);
      const soul = await buildSubagentSoul({
        parent: this.#opts.parent,
        parentEnv: this.#opts.parentEnv(),
        typeSpec,
        subagentType: actualType,
        agentId,
        contextPath: store.contextPath(agentId),
        llm,
        renderSystemPrompt: this.#opts.renderSystemPrompt,
        loadTools: this.#opts.loadTools,
      });
      if (req.timeoutS !== null) {
        timer = setTimeout(() => timeout.abort(), req.timeoutS * 1000);
      }
      const signal = AbortSignal.any([ctx.signal, timeout.signal]);
      let outcome;
      try {
        outcome = await runWithSummaryContinuation(soul, req.prompt, {
          signal,
          forwarding: {
            emit: (m) => this.#opts.parent.emit(m),
            parentToolCallId: ctx.toolCallId,
            agentId,
            subagentType: actualType,
            wirePath: store.wirePath(agentId),
          },
        });
      } catch (err) {
        if (!(err instanceof RunCancelled)) throw err;
        status = "killed";
        if (timeout.signal.aborted && !ctx.signal.aborted) {
          return toolError({
            message: `Agent timed out after ${req.timeoutS}s.`,
            brief: `Agent timed out (${req.timeoutS}s)`,
          });
        }
        return toolError({ message: "Subagent run was cancelled.", brief: "Agent cancelled" });
      }
      if ("failure" in outcome) {
        status = "failed";
        return toolError({ message: outcome.failure.message, brief: outcome.failure.brief });
      }
      status = "idle";
      await Deno.writeTextFile(store.outputPath(agentId), outcome.text).catch(() => {});
      const lines = [`agent_id: ${agentId}`, `resumed: ${resumed}`];
      if (resumed && req.subagentType && req.subagentType !== actualType) {
        lines.push(`requested_subagent_type: ${req.subagentType}`);
      }
      lines.push(`actual_subagent_type: ${actualType}`, "status: completed", "", "[summary]");
      lines.push(outcome.text);
      return toolOk({ output: lines.join("\n") });
    } catch (err) {
      status = "failed";
      const msg = err instanceof Error ? err.message : String(err);
      return toolError({ message: `Failed to run agent: ${msg}`, brief: "Agent failed" });
    } finally {
      clearTimeout(timer);
      await store.update(agentId, { status }).catch(() => {});
    }
  }

  #unknownType(name: string): ToolReturnValue {
    const known = Object.keys(this.#opts.rootSpec.subagents);
    return toolError({
      message: `Unknown subagent type: ${name}. Available types: ${
        known.length > 0 ? known.join(", ") : "(none)"
      }.`,
      brief: "Unknown subagent type",
    });
  }
}
