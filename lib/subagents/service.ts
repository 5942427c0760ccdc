/**
 * The subagent service of a root agent: prepares (or resumes) an instance, builds its soul,
 * runs it in the foreground with the parent's wire receiving its events, or in the background
 * as a task of kind `agent` (one run path for both), fires SubagentStart/SubagentStop around
 * runs and reports how they went; `tools/agent.ts` words the Agent tool result (§7.10).
 *
 * @module
 */
import type { ResolvedAgentSpec } from "../agent/spec.ts";
import type { LLM } from "../llm/provider.ts";
import { RunCancelled } from "../soul/errors.ts";
import type { KimiSoul } from "../soul/soul.ts";
import type { Tool, ToolEnv } from "../tooling/tool.ts";
import type { InProcessOutcome, InProcessTaskIO } from "../background/task_manager.ts";
import { isTerminalStatus, type TaskRecord } from "../background/task_record.ts";
import * as soulHooks from "../hooks/soul_hooks.ts";
import { buildSubagentSoul } from "./child_soul.ts";
import { collectGitContext } from "./git_context.ts";
import type { InstanceRecord, InstanceUpdate, SubagentStore } from "./instance_store.ts";
import type {
  AgentRunContext,
  AgentRunError,
  AgentRunRequest,
  BackgroundStartResult,
  ForegroundRunResult,
  SubagentService,
  SubagentTypeInfo,
  SwarmRequest,
  SwarmRunResult,
  SwarmSnapshot,
} from "../tooling/subagent_service.ts";
import { SwarmRegistry } from "./swarm.ts";
import { runWithSummaryContinuation, type SubagentForwarding } from "./turn_runner.ts";
import { SubagentOutputWriter } from "./output_writer.ts";

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
  /** Default timeout of background runs in seconds (`background.agent_task_timeout_s`). */
  agentTaskTimeoutS: number;
  /** Subagents a swarm runs at once unless the call says (`swarm.max_concurrency`). */
  swarmConcurrency: number;
}

const RUNNING = new Set(["running_foreground", "running_background"]);

/** Subagent launching for one root agent. */
export class SubagentManager implements SubagentService {
  readonly #opts: SubagentManagerOptions;
  readonly #specs = new Map<string, Promise<ResolvedAgentSpec>>();
  readonly #swarms: SwarmRegistry;

  /** Create the service. */
  constructor(opts: SubagentManagerOptions) {
    this.#opts = opts;
    this.#swarms = new SwarmRegistry({
      runItem: (req, ctx) => this.runForeground(req, ctx),
      hasType: (name) => Object.hasOwn(opts.rootSpec.subagents, name),
      emit: (m) => opts.parent.emit(m),
      defaultConcurrency: opts.swarmConcurrency,
    });
  }

  /** Run a swarm of foreground subagents (see `swarm.ts`). */
  runSwarm(req: SwarmRequest, ctx: AgentRunContext): Promise<SwarmRunResult | AgentRunError> {
    return this.#swarms.run(req, ctx);
  }

  /** The running and recent swarms. */
  swarms(): readonly SwarmSnapshot[] {
    return this.#swarms.snapshots();
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
        background: true,
        whenToUse: spec.whenToUse,
      });
    }
    return out;
  }

  /** Whether `alias` is a configured model. */
  hasModel(alias: string): boolean {
    return this.#opts.hasModel(alias);
  }

  /** Run a subagent in the foreground; never throws for run failures (they become errors). */
  async runForeground(req: AgentRunRequest, ctx: AgentRunContext): Promise<ForegroundRunResult> {
    const { store } = this.#opts;
    const prepared = await this.#prepare(req);
    if ("status" in prepared) return prepared;
    const { agentId, actualType, resumed } = prepared;
    ctx.onStarted?.(agentId);

    let status: InstanceRecord["status"] = prepared.record.status;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new AbortController();
    try {
      await store.update(agentId, {
        status: "running_foreground",
        description: req.description.trim(),
        ...this.#modelChange(req),
      });
      if (req.timeoutS !== null) {
        timer = setTimeout(() => timeout.abort(), req.timeoutS * 1000);
      }
      const run = await this.#execute(prepared, req.prompt, {
        signal: AbortSignal.any([ctx.signal, timeout.signal]),
        forwarding: { parentToolCallId: ctx.toolCallId },
      });
      if (run.kind === "cancelled") {
        status = "killed";
        return timeout.signal.aborted && !ctx.signal.aborted
          ? { status: "timed_out", timeoutS: req.timeoutS ?? 0 }
          : { status: "cancelled" };
      }
      if (run.kind === "failed") {
        status = "failed";
        return runError(run.failure.message, run.failure.brief);
      }
      status = "idle";
      return { status: "completed", agentId, actualType, resumed, summary: run.text };
    } catch (err) {
      status = "failed";
      const msg = err instanceof Error ? err.message : String(err);
      return runError(`Failed to run agent: ${msg}`, "Agent failed");
    } finally {
      clearTimeout(timer);
      await store.update(agentId, { status }).catch(() => {});
    }
  }

  /**
   * Start a subagent as a background task of kind `agent` (TaskList/TaskOutput/TaskStop see
   * it; its events go to the task's output file, not the parent's wire) and return at once.
   */
  async runBackground(req: AgentRunRequest, ctx: AgentRunContext): Promise<BackgroundStartResult> {
    const { store } = this.#opts;
    const prepared = await this.#prepare(req);
    if ("status" in prepared) return prepared;
    const { agentId, actualType, record } = prepared;
    const env = this.#opts.parentEnv();
    const manager = env.run.tasks;
    const before = record.status;
    await store.update(agentId, {
      status: "running_background",
      description: req.description.trim(),
      ...this.#modelChange(req),
    });
    let task: TaskRecord;
    try {
      task = await manager.startInProcess({
        kind: "agent",
        description: req.description.trim(),
        timeoutS: req.timeoutS ?? this.#opts.agentTaskTimeoutS,
        toolCallId: ctx.toolCallId,
        payload: {
          agent_id: agentId,
          subagent_type: actualType,
          model_override: req.model,
          launch_mode: "background",
        },
        run: (io) => this.#runInTask(prepared, req.prompt, io),
        onSettled: async (t) => {
          const status = t.status === "completed"
            ? "idle"
            : t.status === "killed" && !t.timed_out
            ? "killed"
            : "failed";
          await store.update(agentId, { status, lastTaskId: t.id });
        },
      });
    } catch (err) {
      await store.update(agentId, { status: before }).catch(() => {});
      const msg = err instanceof Error ? err.message : String(err);
      return runError(`Failed to start background agent: ${msg}`, "Background start failed");
    }
    await store.update(agentId, { lastTaskId: task.id }).catch(() => {});
    return { status: "started", agentId, actualType, task };
  }

  /** The body of a background agent task. */
  async #runInTask(
    prepared: PreparedInstance,
    rawPrompt: string,
    io: InProcessTaskIO,
  ): Promise<InProcessOutcome> {
    // The transcript goes to the instance's output file and the task's output alike.
    const run = await this.#execute(prepared, rawPrompt, {
      signal: io.signal,
      taskId: io.taskId,
      mirror: (text) => io.write(text),
      forwarding: { parentToolCallId: "", forwardEvents: false },
    });
    if (run.kind === "cancelled") return { ok: false, reason: "Subagent run was cancelled." };
    if (run.kind === "failed") return { ok: false, reason: run.failure.message };
    return { ok: true };
  }

  /**
   * The one run path of foreground and background runs: build the soul, write the prompt,
   * fire SubagentStart, run the turn (with summary continuation), keep the summary and fire
   * SubagentStop. Cancellation (the signal) is an outcome; other errors are thrown.
   */
  async #execute(p: PreparedInstance, rawPrompt: string, opts: ExecuteOptions): Promise<RunEnd> {
    const { store } = this.#opts;
    const { agentId, actualType } = p;
    // The reference's transcript of the run, stage by stage.
    const output = new SubagentOutputWriter(store.outputPath(agentId), opts.mirror ?? null);
    try {
      output.stage("runner_started");
      const soul = await this.#buildSoul(p, opts.taskId);
      output.stage("agent_built");
      output.stage("context_restored");
      output.stage("context_ready");
      const prompt = await this.#firstPrompt(p, rawPrompt);
      await Deno.writeTextFile(store.promptPath(agentId), prompt);
      const site = this.#hookSite(opts.signal);
      if (site) await soulHooks.subagentStart(site, actualType, rawPrompt.slice(0, 500));
      let outcome;
      output.stage("run_soul_start");
      try {
        const observe = opts.forwarding.observe;
        outcome = await runWithSummaryContinuation(soul, prompt, {
          signal: opts.signal,
          forwarding: {
            emit: (m) => this.#opts.parent.emit(m),
            agentId,
            subagentType: actualType,
            wirePath: store.wirePath(agentId),
            ...opts.forwarding,
            observe: (m) => {
              output.wireMessage(m);
              observe?.(m);
            },
          },
        });
      } catch (err) {
        if (err instanceof RunCancelled || opts.signal.aborted) {
          output.stage("cancelled");
          return { kind: "cancelled" };
        }
        output.stage("failed_exception");
        throw err;
      }
      if ("failure" in outcome) {
        output.stage(`failed: ${outcome.failure.brief}`);
        return { kind: "failed", failure: outcome.failure };
      }
      output.stage("run_soul_finished");
      if (site) soulHooks.fireSubagentStop(site, actualType, outcome.text.slice(0, 500));
      output.summary(outcome.text);
      return { kind: "done", text: outcome.text };
    } finally {
      await output.flush();
    }
  }

  /** Validate the request and create (or load) the instance, resolving its model. */
  async #prepare(req: AgentRunRequest): Promise<PreparedInstance | AgentRunError> {
    const { store } = this.#opts;
    if (req.model !== null && !this.hasModel(req.model)) {
      return runError(`Unknown model alias: ${req.model}`, "Invalid model alias");
    }
    let record: InstanceRecord;
    let resumed = false;
    if (req.resume) {
      const found = await store.get(req.resume);
      if (!found) {
        return runError(
          `Subagent instance not found: ${req.resume}. Resume only ids returned by ` +
            "earlier Agent calls of this session, or omit `resume` to start a new agent.",
          "Agent not found",
        );
      }
      if (RUNNING.has(found.status) && !(await this.#taskGone(found))) {
        return runError(
          `Agent instance ${found.agent_id} is still ${found.status} and cannot be ` +
            "resumed concurrently.",
          "Agent already running",
        );
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
    const actualType = record.subagent_type;
    const typeSpecP = this.#typeSpec(actualType);
    if (!typeSpecP) return this.#unknownType(actualType);
    let typeSpec: ResolvedAgentSpec;
    let llm: LLM | null;
    try {
      typeSpec = await typeSpecP;
      const launch = record.launch_spec;
      const alias = req.model ?? launch.model_override ?? launch.effective_model ?? typeSpec.model;
      if (alias !== null && !this.hasModel(alias)) {
        return runError(`Unknown model alias: ${alias}`, "Invalid model alias");
      }
      llm = alias !== null ? await this.#opts.llmForAlias(alias) : this.#opts.parent.llm;
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      return runError(`Failed to run agent: ${msg}`, "Agent failed");
    }
    return { record, agentId: record.agent_id, actualType, resumed, typeSpec, llm };
  }

  /**
   * Settle instances left `running_background` by a task that has ended without them (its
   * process died): they become `failed` (or `killed` when the task was stopped), as the
   * reference's recovery does. Returns the ids changed.
   */
  async recover(): Promise<string[]> {
    const changed: string[] = [];
    const env = this.#opts.parentEnv();
    const manager = env.run.tasks;
    for (const rec of await this.#opts.store.list()) {
      if (rec.status !== "running_background" || !rec.last_task_id) continue;
      const task = await manager.get(rec.last_task_id);
      if (!task || !isTerminalStatus(task.status)) continue;
      const status = task.status === "killed" ? "killed" : "failed";
      await this.#opts.store.update(rec.agent_id, { status }).catch(() => {});
      changed.push(rec.agent_id);
    }
    return changed;
  }

  /** Whether a `running_background` instance's task has ended (e.g. its process is gone). */
  async #taskGone(rec: InstanceRecord): Promise<boolean> {
    if (rec.status !== "running_background" || !rec.last_task_id) return false;
    const env = this.#opts.parentEnv();
    const task = await env.run.tasks.get(rec.last_task_id);
    return task !== null && isTerminalStatus(task.status);
  }

  #modelChange(req: AgentRunRequest): Pick<InstanceUpdate, "launchSpec"> {
    return req.model !== null
      ? { launchSpec: { model_override: req.model, effective_model: req.model } }
      : {};
  }

  #buildSoul(p: PreparedInstance, backgroundTaskId?: string): Promise<KimiSoul> {
    return buildSubagentSoul({
      parent: this.#opts.parent,
      parentEnv: this.#opts.parentEnv(),
      typeSpec: p.typeSpec,
      subagentType: p.actualType,
      agentId: p.agentId,
      contextPath: this.#opts.store.contextPath(p.agentId),
      llm: p.llm,
      renderSystemPrompt: this.#opts.renderSystemPrompt,
      loadTools: this.#opts.loadTools,
      backgroundTaskId,
    });
  }

  /** The prompt of the run: a new `explore` instance gets the `<git-context>` block first. */
  async #firstPrompt(p: PreparedInstance, prompt: string): Promise<string> {
    if (p.resumed || p.actualType !== "explore") return prompt;
    const env = this.#opts.parentEnv();
    let childEnv: Record<string, string> | undefined;
    try {
      childEnv = env.childEnv();
    } catch {
      childEnv = undefined;
    }
    const git = await collectGitContext({
      workDir: env.workDir,
      scope: env.scope,
      env: childEnv,
      wrapper: env.run.commands,
    });
    return git ? `${git}\n\n${prompt}` : prompt;
  }

  /** Where subagent lifecycle hooks run (the parent's engine; events on the parent's wire). */
  #hookSite(signal: AbortSignal): soulHooks.HookSite | null {
    const hooks = this.#opts.parent.hooks;
    if (!hooks) return null;
    return { hooks, emit: (e) => this.#opts.parent.emit(e), signal };
  }

  #unknownType(name: string): AgentRunError {
    const known = Object.keys(this.#opts.rootSpec.subagents);
    return runError(
      `Unknown subagent type: ${name}. Available types: ${
        known.length > 0 ? known.join(", ") : "(none)"
      }.`,
      "Unknown subagent type",
    );
  }
}

/** How one run ended. */
type RunEnd =
  | { kind: "done"; text: string }
  | { kind: "failed"; failure: { message: string; brief: string } }
  | { kind: "cancelled" };

/** Options of one run: what differs between foreground and background. */
interface ExecuteOptions {
  /** Stops the run. */
  signal: AbortSignal;
  /** The background task running it, if any. */
  taskId?: string;
  /** Also writes the run's transcript here (a background task's output). */
  mirror?: (text: string) => void;
  /** Forwarding settings beyond the instance's identity and wire file. */
  forwarding: Omit<SubagentForwarding, "emit" | "agentId" | "subagentType" | "wirePath">;
}

function runError(message: string, brief: string): AgentRunError {
  return { status: "error", message, brief };
}

/** An instance ready to run. */
interface PreparedInstance {
  record: InstanceRecord;
  agentId: string;
  actualType: string;
  resumed: boolean;
  typeSpec: ResolvedAgentSpec;
  llm: LLM | null;
}
