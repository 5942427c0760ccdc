/**
 * The composition root: assembling a runnable agent for a session, config → model → agent
 * spec → system prompt → tools → MCP → hooks → sandbox → soul (the reference's
 * `KimiCLI.create`). Every UI builds its soul through this.
 *
 * @module
 */
import { join } from "node:path";
import { lazyImport } from "../lazy_import.ts";
import { log } from "../log.ts";
import {
  agentControlPaths,
  type AgentSpecSource,
  loadAgentSpec,
  type ResolvedAgentSpec,
} from "../agent/spec.ts";
import { builtinPromptArgs, renderSystemPrompt } from "../agent/system_prompt.ts";
import { resolveModel } from "../config/model_resolution.ts";
import type { Config } from "../config/schema.ts";
import { createLLM, prefetchProvider } from "../llm/create.ts";
import type { LLM } from "../llm/provider.ts";
import {
  capabilityNotes,
  computeRunScope,
  unavailableTools,
  urlHost,
} from "../sandbox/run_scope.ts";
import { setupShellConfinement } from "../sandbox/setup.ts";
import type { Session } from "../session/session.ts";
import { loadState, saveState } from "../session/state.ts";
import { shortenTitle } from "../session/title.ts";
import { extractText } from "../llm/message.ts";
import { type ControlPath, ControlPathSet, projectControlPaths } from "../tooling/control_paths.ts";
import { ToolOutputFeed } from "../tooling/live_output.ts";
import type { SessionRun } from "../tooling/session_run.ts";
import { cacheControlPaths } from "../prebundle/location.ts";
import { DenoPermissionScope, type PermissionScope } from "../tooling/scope.ts";
import type { ToolEnv } from "../tooling/tool.ts";
import type { FileBackend } from "../tooling/file_backend.ts";
import type { TerminalBackend } from "../tooling/terminal_backend.ts";
import {
  PendingRequest,
  type Question,
  type RequestType,
  type UserInput,
} from "../wire/messages.ts";
import { createSubagentService } from "./subagent_wiring.ts";
import { SubagentManager } from "../subagents/service.ts";
import { loadAgentTools, prefetchBuiltinTools } from "./tool_loading.ts";
import { loadPlugins, withPluginAgents } from "./plugin_loading.ts";
import { pluginPromptSections } from "../plugins/bundle.ts";
import { ApprovalRuntime, ApprovalState } from "../soul/approval.ts";
import { PermissionRuleSet } from "../permission/rule_set.ts";
import { ruleLocation } from "../permission/rules.ts";
import { canonicalPath } from "../tooling/workspace.ts";
import { childEnvironment, readableEnvironment } from "./child_env.ts";
import { Context } from "../soul/context.ts";
import { closeDanglingToolCalls } from "../soul/tool_pairing.ts";
import { FileSnapshots } from "../session/file_snapshots.ts";
import { SOUL_COMMANDS } from "../soul/commands/mod.ts";
import { skillCommands } from "../soul/commands/skills.ts";
import { loadSkills } from "../skills/discovery.ts";
import { formatSkillsListing } from "../agent/skills_listing.ts";
import { PlanMode } from "../soul/plan_mode.ts";
import { describeGoal, GoalStore, SESSION_RESUMED } from "../soul/goal.ts";
import { systemReminder } from "../soul/tool_result_message.ts";
import { KimiSoul } from "../soul/soul.ts";
import { Toolset } from "../soul/toolset.ts";
import type { McpServers } from "../mcp/config.ts";
import type { McpManager } from "../mcp/manager.ts";
import { createMcpManager } from "../mcp/setup.ts";
import { HookEngine } from "../hooks/engine.ts";
import {
  fireNotification,
  goalAttention,
  notifyApprovals,
  questionAttention,
  taskAttention,
} from "../hooks/notification_hooks.ts";
import { publishTaskNotifications, TaskNotificationQueue } from "../background/notifications.ts";
import { BackgroundTaskManager } from "../background/task_manager.ts";
import { backgroundSettings } from "../background/settings.ts";
import { event as wireEvent, type EventPayload, type WireEvent } from "../wire/messages.ts";
import { WireFile } from "../wire/recorder.ts";

/** A token getter for an OAuth-backed service; loads the token manager on first use. */
function oauthAccessToken(
  shareDir: string,
  key: string,
  getEnv: (name: string) => string | undefined,
): () => Promise<string> {
  return async () => {
    const { tokenManagerFor } = await lazyImport<typeof import("../auth/token_manager.ts")>(
      "../auth/token_manager.ts",
      import.meta.url,
    );
    return await tokenManagerFor(shareDir, getEnv).accessToken(key);
  };
}

/** Environment variable overriding the 120 s timeout of plugin tool calls (seconds). */
export const PLUGIN_TIMEOUT_ENV = "KIMI_PLUGIN_TOOL_TIMEOUT_S";

/** Options of {@link KimiApp.create}. */
export interface KimiAppOptions {
  /** Loaded configuration. */
  config: Config;
  /** The session to run in. */
  session: Session;
  /** `--model` alias. */
  modelAlias?: string;
  /** `--thinking` / `--no-thinking` (null = config default). */
  thinking: boolean | null;
  /** `--yolo`. */
  yolo: boolean;
  /** `--afk` (persisted). */
  afk: boolean;
  /** Runtime afk (print mode): no user present, not persisted. */
  runtimeAfk: boolean;
  /** Which agent to run. */
  agent: AgentSpecSource;
  /** `--max-steps-per-turn`. */
  maxStepsPerTurn?: number;
  /** `--max-retries-per-step`. */
  maxRetriesPerStep?: number;
  /** Permission scope (defaults to Deno's). */
  scope?: PermissionScope;
  /** Reads the environment. */
  getEnv: (name: string) => string | undefined;
  /** Writes a line to stdout (scripted-echo trace). */
  writeStdout?: (line: string) => void;
  /** `--plan`: start in plan mode, even when resuming. */
  plan?: boolean;
  /** Whether the session existed before this run (`default_plan_mode` applies to new ones only). */
  resumed?: boolean;
  /** `--skills-dir` (replaces project/user skill discovery). */
  skillsDirs?: string[];
  /** `--max-ralph-iterations` (overrides `loop_control.max_ralph_iterations`). */
  maxRalphIterations?: number;
  /** MCP servers (merged `--mcp-config-file`/`--mcp-config`/`<share>/mcp.json`). */
  mcpServers?: McpServers;
  /** Receives a line per MCP server that failed or needs authorization (stderr). */
  reportMcp?: (line: string) => void;
  /** Where file tools read and write text (default: the local disk). */
  files?: FileBackend;
  /** Where Shell runs foreground commands (default: local processes). */
  terminal?: TerminalBackend;
  /**
   * The user's config file, where saved approval rules live (null: config from `--config`
   * text; undefined: `<share>/config.toml`).
   */
  configFile?: string | null;
  /** Reports problems with approval rules at start-up (default: the log only). */
  reportRules?: (line: string) => void;
  /** Reports plugins that are not loaded (changed, not installed) at start-up (default: log). */
  reportPlugins?: (line: string) => void;
  /**
   * Control paths beyond the share dir's and the agent's, by source (e.g. `cli`: the
   * `--config-file` and `--mcp-config-file`s in use).
   */
  controlPaths?: Readonly<Record<string, readonly ControlPath[]>>;
  /**
   * The session's background tasks, kept by the host across rebuilds of the app for the same
   * session (default: a new manager for this app).
   */
  tasks?: BackgroundTaskManager;
  /**
   * Prints the "shell commands are not confined" warning; a host of many sessions passes one
   * that prints once (default: stderr, once per app).
   */
  warnShell?: (line: string) => void;
}

/** A runnable agent bound to a session. */
export class KimiApp {
  /** The soul. */
  readonly soul: KimiSoul;
  /** The session. */
  readonly session: Session;
  /** The configuration. */
  readonly config: Config;
  /** The resolved agent spec. */
  readonly agent: ResolvedAgentSpec;
  /** Whether the connected client can answer questions. */
  supportsQuestions = false;
  /** Finished background tasks not yet told to the agent (set up by {@link create}). */
  taskNotifications: TaskNotificationQueue | null = null;
  /** MCP clients of the root agent (null without configured servers); close on exit. */
  mcp: McpManager | null = null;
  #run: SessionRun | null = null;
  readonly #notificationListeners = new Set<(e: WireEvent) => void>();
  #stopNotifications: (() => void) | null = null;
  #wireFile: WireFile | null = null;

  private constructor(soul: KimiSoul, session: Session, config: Config, agent: ResolvedAgentSpec) {
    this.soul = soul;
    this.session = session;
    this.config = config;
    this.agent = agent;
  }

  /**
   * Receive the `Notification` events of this app (background tasks and agents that finish),
   * whether or not a turn is running. Returns the unsubscribe function.
   */
  onNotification(listener: (e: WireEvent) => void): () => void {
    this.#notificationListeners.add(listener);
    return () => this.#notificationListeners.delete(listener);
  }

  /** Stop publishing notifications (the app is being replaced or closed). */
  closeNotifications(): void {
    this.#stopNotifications?.();
    this.#stopNotifications = null;
    this.#notificationListeners.clear();
  }

  #publish(payload: EventPayload<"Notification">): void {
    const e = wireEvent("Notification", payload);
    // recorded like the turn's messages, so `replay` and session readers see it too
    this.wireFile.append(e).catch((err) =>
      log("WARNING", "notifications", `could not record a notification: ${err}`)
    );
    for (const l of this.#notificationListeners) {
      try {
        l(e);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /**
   * The session's `wire.jsonl`, shared by every writer of this app (the UI's turns and the
   * notifications between them), so its records stay in the order things happened.
   */
  get wireFile(): WireFile {
    return this.#wireFile ??= new WireFile(this.session.wireFile);
  }

  /**
   * This session's run state (command wrapper, control paths, live tool output, background
   * tasks), as its tools see it.
   */
  get run(): SessionRun {
    if (!this.#run) throw new Error("KimiApp.run is read before KimiApp.create finished.");
    return this.#run;
  }

  /** The session's background tasks. */
  get tasks(): BackgroundTaskManager {
    return this.run.tasks;
  }

  /** The session's hook engine (config hooks + wire subscriptions). */
  get hooks(): HookEngine {
    return this.soul.hooks!;
  }

  /** The model, or null when unset. */
  get llm(): LLM | null {
    return this.soul.llm;
  }

  /**
   * Start loading what {@link create} will need for the model `modelAlias` (default: the
   * config's), without waiting: call it as soon as the config is known.
   */
  static prefetch(config: Config, modelAlias?: string, agent?: AgentSpecSource): void {
    const providerName = config.models[modelAlias ?? config.default_model]?.provider;
    const type = providerName ? config.providers[providerName]?.type : undefined;
    if (type) prefetchProvider(type);
    if (agent && "builtin" in agent) {
      // A built-in agent's tool list is known without the session: its tool modules load now.
      loadAgentSpec(agent).then((spec) => prefetchBuiltinTools(spec.tools)).catch(() => {});
    }
  }

  /** Build the agent for a session. */
  static async create(opts: KimiAppOptions): Promise<KimiApp> {
    const { config, session } = opts;
    // The session's control paths: the share dir's, the host's (e.g. `--config-file`), kimi's
    // cache (code it runs: pre-bundled packages), then the agent's once it is loaded.
    const controls = new ControlPathSet(session.shareDir, {
      ...opts.controlPaths,
      cache: cacheControlPaths(opts.getEnv),
      // The project's rules file: no tool of the agent writes it, the shell sandbox included.
      project: projectControlPaths(session.workDir),
    });
    const resolved = resolveModel(config, { modelAlias: opts.modelAlias, getEnv: opts.getEnv });
    const thinking = opts.thinking ?? config.default_thinking;
    // The provider (e.g. the OpenAI SDK) and the agent spec load at once. Errors keep their
    // order: model first.
    const [llmResult, agentResult] = await Promise.allSettled([
      createLLM(resolved, {
        thinking,
        sessionId: session.id,
        getEnv: opts.getEnv,
        writeStdout: opts.writeStdout,
        streamLimits: config.model_stream,
        shareDir: session.shareDir,
      }),
      loadAgentSpec(opts.agent, controls.list()),
    ]);
    if (llmResult.status === "rejected") throw llmResult.reason;
    if (agentResult.status === "rejected") throw agentResult.reason;
    const llm = llmResult.value;
    let agent = agentResult.value;
    controls.register("agent", agentControlPaths(agent));

    const state = session.state;
    state.approval.yolo = state.approval.yolo || opts.yolo || config.default_yolo;
    if (opts.afk) state.approval.afk = true;
    const approvalState = new ApprovalState({
      yolo: state.approval.yolo,
      afk: state.approval.afk,
      runtimeAfk: opts.runtimeAfk,
      actions: state.approval.auto_approve_actions,
      grants: state.approval.session_rules,
      persist: async (s) => {
        session.state.approval = { ...session.state.approval, ...s };
        await session.saveState();
      },
    });
    await session.saveState();

    const scope = opts.scope ?? new DenoPermissionScope();
    const runScope = computeRunScope({
      workDir: session.workDir,
      shareDir: session.shareDir,
      additionalDirs: state.additional_dirs,
      modelHost: urlHost(resolved.provider.base_url),
    });
    const leftOut = unavailableTools(runScope, scope, {
      workDir: session.workDir,
      searchHost: urlHost(config.services.moonshot_search?.base_url),
    });
    const disabled = new Set(leftOut.map((t) => t.name));
    // The agent's tool modules load while skills, context and the rest are set up.
    prefetchBuiltinTools(agent.tools.filter((name) => !disabled.has(name)));

    // Installed plugins: tools (after the agent's own), and what enabled bundles bring.
    const pluginTimeout = Number(opts.getEnv(PLUGIN_TIMEOUT_ENV) ?? "");
    const plugins = await loadPlugins({
      shareDir: session.shareDir,
      controls,
      timeoutMs: pluginTimeout > 0 ? pluginTimeout * 1000 : undefined,
      hostValues: async () => {
        const p = resolved.provider;
        const apiKey = p.oauth
          ? await oauthAccessToken(session.shareDir, p.oauth.key, opts.getEnv)().catch(() => "")
          : p.api_key;
        return {
          ...(apiKey ? { api_key: apiKey } : {}),
          ...(p.base_url ? { base_url: p.base_url } : {}),
        };
      },
    });
    for (const line of plugins.problems) opts.reportPlugins?.(line);
    agent = withPluginAgents(agent, plugins.bundles.agents);
    const skills = await loadSkills({
      workDir: session.workDir,
      home: opts.getEnv("HOME") ?? opts.getEnv("USERPROFILE") ?? null,
      shareDir: session.shareDir,
      skillsDirs: opts.skillsDirs,
      mergeAllAvailable: config.merge_all_available_skills,
      extraDirs: [...config.extra_skill_dirs, ...plugins.bundles.skillDirs],
      skipPlugins: plugins.skipped,
      controls: controls.list(),
    });
    const context = await Context.restore(session.contextFile);
    // Tool calls left without a result (kill, crash, full disk) get an error result. When it
    // cannot be written, every request still carries it (the soul pairs calls and results).
    await closeDanglingToolCalls(context).catch((err) =>
      log("WARNING", "session", `could not close dangling tool calls: ${err}`)
    );
    if (context.systemPrompt === null) {
      const builtins = await builtinPromptArgs({
        workDir: session.workDir,
        additionalDirs: state.additional_dirs,
        skillsText: formatSkillsListing(skills),
        capabilityNotes: capabilityNotes(runScope),
        controls: controls.list(),
      });
      const pluginText = pluginPromptSections(plugins.bundles.promptSections);
      const prompt = renderSystemPrompt(agent, builtins);
      await context.writeSystemPrompt(pluginText ? `${prompt}\n\n${pluginText}` : prompt);
    }

    const toolset = new Toolset();
    // a call to a tool this run's permissions leave out says so (not "not found")
    const profile = opts.getEnv("KIMI_PERMISSION_PROFILE");
    for (const t of leftOut) {
      toolset.setUnavailable(
        t.name,
        `${t.name} is not available in ${profile ? `the ${profile} profile` : "this run"}: ` +
          `${t.reason}. Do without it, or tell the user which permission would allow it.`,
      );
    }
    const rules = await PermissionRuleSet.load({
      userFile: opts.configFile === undefined
        ? join(session.shareDir, "config.toml")
        : opts.configFile,
      inlinePermission: config.permission,
      workDir: session.workDir,
      // Keep the in-memory config in step, so a later save of it (e.g. /theme) keeps the rules.
      onUserRulesChanged: (raw) => (config.permission = { ...config.permission, rules: raw }),
    });
    for (const p of rules.problems) {
      const line = `Approval rule problem in ${ruleLocation(p)}: ${p.message}`;
      log("WARNING", "approval", line);
      opts.reportRules?.(line);
    }
    const approval = new ApprovalRuntime(approvalState, {
      rules,
      ruleContext: {
        workDir: session.workDir,
        home: opts.getEnv("HOME") ?? opts.getEnv("USERPROFILE") ?? null,
        // The rules files and every control file (config, MCP config, agent files): no shell
        // command naming one is allowed by a rule or a grant.
        protectedPaths: [
          ...new Set(
            [
              ...(rules.userFile ? [rules.userFile] : []),
              rules.projectFile,
              ...controls.list().filter((c) => c.kind === "file").map((c) => c.path),
            ].map((p) => canonicalPath(p, session.workDir)),
          ),
        ],
      },
    });
    const plan = new PlanMode({
      home: homeDir(opts.getEnv, session.shareDir),
      store: { state: () => session.state, save: () => session.saveState() },
    });
    const fileSnapshots = new FileSnapshots(session.dir);
    const goals = new GoalStore({
      store: { state: () => session.state, save: () => session.saveState() },
      nCheckpoints: () => context.nCheckpoints,
      emit: (m) => {
        soul.emit(m);
        const ended = m.type === "GoalUpdate" ? goalAttention(m.payload) : null;
        if (ended) fireNotification(hooks, ended);
      },
      onChange: (goal) => offerGoalTools(toolset, goal !== null),
    });
    // Shell confinement (bubblewrap) for this session: its command wrapper, a warning when
    // commands cannot be confined, or a refusal when confinement is required; and the pid
    // namespace every process the session starts (hooks and MCP servers too) runs in.
    const shellConfinement = await setupShellConfinement({
      workDir: session.workDir,
      additionalDirs: () => session.state.additional_dirs,
      shareDir: session.shareDir,
      scope,
      requireConfinement: config.sandbox.require_shell_confinement,
      getEnv: opts.getEnv,
      shellDisabled: disabled.has("Shell"),
      controlPaths: () => controls.list(),
      warn: opts.warnShell,
    });
    // Finished background tasks, told to the root agent at its next step (set up with `env`).
    let taskNotes: TaskNotificationQueue | null = null;
    const hooks = new HookEngine({
      hooks: config.hooks,
      cwd: session.workDir,
      sessionId: session.id,
      childEnv: () => env.childEnv(), // `env` (the ToolEnv) is built below, before any hook runs
      spawn: () => shellConfinement.isolation,
    });
    const mcp = await createMcpManager({
      servers: { ...(opts.mcpServers ?? {}), ...plugins.bundles.mcpServers },
      toolset,
      toolCallTimeoutMs: config.mcp.client.tool_call_timeout_ms,
      connectTimeoutMs: config.mcp.client.connect_timeout_ms,
      childEnv: () => env.childEnv(),
      spawn: () => shellConfinement.isolation,
      workDir: session.workDir,
      shareDir: session.shareDir,
      scope,
      report: opts.reportMcp,
    });
    const soul = new KimiSoul({
      mcp: mcp ?? undefined,
      name: agent.name,
      llm,
      context,
      toolset,
      approval,
      loop: {
        maxStepsPerTurn: opts.maxStepsPerTurn ?? config.loop_control.max_steps_per_turn,
        maxRetriesPerStep: opts.maxRetriesPerStep ?? config.loop_control.max_retries_per_step,
        reservedContextSize: config.loop_control.reserved_context_size,
        compactionTriggerRatio: config.loop_control.compaction_trigger_ratio,
        maxRalphIterations: opts.maxRalphIterations ?? config.loop_control.max_ralph_iterations,
      },
      compactionNotes: () => compactionNotes(session, plan),
      goals,
      afterUserTurn: (input) => autoTitle(session, input),
      fileSnapshots,
      commandServices: {
        sessionId: session.id,
        sessionDir: session.dir,
        shareDir: session.shareDir,
        workDir: session.workDir,
        additionalDirs: () => session.state.additional_dirs,
        addDir: async (dir) => {
          session.state.additional_dirs.push(dir);
          await session.saveState();
        },
        swarms: () => env.subagents?.swarms() ?? [],
        controlPaths: () => controls.list(),
      },
      isRoot: true,
      checkpointMarkers: agent.tools.includes("SendDMail"),
      skipAfkPromptInjection: config.skip_afk_prompt_injection,
      commands: [
        ...SOUL_COMMANDS,
        ...skillCommands(
          skills,
          SOUL_COMMANDS.flatMap((c) => [c.name, ...c.aliases]),
          controls.list(),
        ),
      ],
      plan,
      hooks,
      notifications: () => taskNotes?.drain() ?? Promise.resolve([]),
    });
    hooks.setEmitter((e) => soul.emit(e));
    approval.setCheckpointSource(() => soul.context.nCheckpoints - 1);
    await plan.restore();
    // A goal that was running when the last process ended waits for `/goal resume`.
    if (opts.resumed) await goals.pause(SESSION_RESUMED);
    if (opts.plan || (!opts.resumed && config.default_plan_mode)) {
      if (plan.active) plan.scheduleActivationReminder();
      else await plan.set(true, "manual");
    }
    const app = new KimiApp(soul, session, config, agent);

    const secretValues = [
      ...Object.values(config.providers).map((p) => p.api_key),
      resolved.provider.api_key,
      config.services.moonshot_search?.api_key ?? "",
      config.services.moonshot_fetch?.api_key ?? "",
    ];
    const secretNames = Object.values(config.providers).flatMap((p) => Object.keys(p.env ?? {}));
    const service = (s: Config["services"]["moonshot_search"]) =>
      s
        ? {
          baseUrl: s.base_url,
          apiKey: s.api_key,
          customHeaders: s.custom_headers ?? {},
          accessToken: s.oauth
            ? oauthAccessToken(session.shareDir, s.oauth.key, opts.getEnv)
            : undefined,
        }
        : null;
    const bg = config.background;
    const settings = backgroundSettings(bg);
    const tasks = opts.tasks ?? new BackgroundTaskManager(session.dir, settings);
    tasks.updateSettings(settings);
    const run: SessionRun = {
      commands: shellConfinement.wrapper,
      controlPaths: controls,
      toolOutput: new ToolOutputFeed(),
      tasks,
    };
    app.#run = run;
    const env: ToolEnv = {
      workDir: session.workDir,
      additionalDirs: () => session.state.additional_dirs,
      shareDir: session.shareDir,
      sessionDir: session.dir,
      sessionId: session.id,
      modelCapabilities: llm?.capabilities ?? new Set(),
      isRoot: true,
      scope,
      shellConfinement: shellConfinement.view,
      run,
      services: {
        moonshotSearch: service(config.services.moonshot_search),
        moonshotFetch: service(config.services.moonshot_fetch),
      },
      background: settings,
      childEnv: () =>
        childEnvironment(readableEnvironment(), { values: secretValues, names: secretNames }),
      planMode: () => ({ active: soul.planMode, planFile: soul.planMode ? plan.planFile : null }),
      planControl: {
        set: (enabled) => soul.setPlanMode(enabled, "tool"),
        autoApprove: () => approvalState.autoApprove,
        readPlan: () => plan.readPlan(),
      },
      todos: {
        get: () => session.state.todos,
        set: async (items) => {
          session.state.todos = items;
          await session.saveState();
        },
      },
      emit: (e) => soul.emit(e),
      goals,
      askQuestions: async (toolCallId: string, questions: Question[]) => {
        if (!app.supportsQuestions) return null;
        const req = new PendingRequest("QuestionRequest", {
          id: crypto.randomUUID(),
          tool_call_id: toolCallId,
          questions,
        });
        fireNotification(hooks, questionAttention(questions));
        soul.emit(req);
        return (await req.result).answers;
      },
      isAfk: () => approvalState.isAfk,
      dmail: agent.tools.includes("SendDMail") ? soul.denwaRenji : undefined,
      // keyed by the checkpoint of the step making the change
      fileHistory: {
        beforeChange: (path) => fileSnapshots.recordBefore(path, context.nCheckpoints - 1),
        afterChange: (path) => fileSnapshots.recordAfter(path, context.nCheckpoints - 1),
      },
      files: opts.files,
      terminal: opts.terminal,
      request: <T extends RequestType>(req: PendingRequest<T>) => {
        soul.emit(req as PendingRequest);
        return req.result;
      },
      subagents: createSubagentService({
        parent: soul,
        parentEnv: () => env,
        rootSpec: agent,
        sessionDir: session.dir,
        shareDir: session.shareDir,
        sessionId: session.id,
        config,
        thinking,
        getEnv: opts.getEnv,
        writeStdout: opts.writeStdout,
        loadTools: async (names, e) => {
          const own = await loadAgentTools(names, e, { disabled, scope });
          return [...own, ...plugins.tools(e, new Set(own.map((t) => t.name)))];
        },
        renderSystemPrompt: async (spec) =>
          renderSystemPrompt(
            spec,
            await builtinPromptArgs({
              workDir: session.workDir,
              additionalDirs: session.state.additional_dirs,
              skillsText: formatSkillsListing(skills),
              capabilityNotes: capabilityNotes(runScope),
              controls: controls.list(),
            }),
          ),
      }),
    };
    // Settle subagent instances an earlier run left running in the background (their files
    // only; it runs alongside start-up).
    if (env.subagents instanceof SubagentManager) env.subagents.recover().catch(() => {});
    const ownTools = await loadAgentTools(agent.tools, env, { disabled, scope });
    for (const tool of ownTools) toolset.add(tool);
    for (const tool of plugins.tools(env, new Set(ownTools.map((t) => t.name)))) {
      toolset.add(tool);
    }
    offerGoalTools(toolset, goals.current() !== null);
    taskNotes = new TaskNotificationQueue(tasks);
    app.taskNotifications = taskNotes;
    const stopTasks = publishTaskNotifications(tasks, (p) => {
      app.#publish(p);
      fireNotification(hooks, taskAttention(p));
    });
    const stopApprovals = notifyApprovals(soul.approval.subscribe(), hooks);
    app.#stopNotifications = () => {
      stopTasks();
      stopApprovals();
    };
    app.mcp = mcp;
    mcp?.start(); // connects in the background; the first turn waits
    return app;
  }
}

/** Goal tools offered to the model only while there is a goal (CreateGoal always is). */
const GOAL_LOOP_TOOLS = ["GetGoal", "UpdateGoal", "SetGoalBudget"] as const;

function offerGoalTools(toolset: Toolset, hasGoal: boolean): void {
  for (const name of GOAL_LOOP_TOOLS) toolset.setHidden(name, !hasGoal);
}

/**
 * What is re-inserted after compaction so the agent keeps its goal: the current todo list and,
 * in plan mode, the plan being written.
 */
async function compactionNotes(session: Session, plan: PlanMode | null): Promise<string[]> {
  const notes: string[] = [];
  const todos = session.state.todos;
  if (todos.length > 0) {
    const lines = todos.map((t) => `- [${t.status}] ${t.title}`).join("\n");
    notes.push(
      `<system-reminder>\nThe todo list before compaction (still current):\n${lines}\n</system-reminder>`,
    );
  }
  const goal = session.state.goal;
  if (goal) {
    notes.push(systemReminder(
      `The session goal before compaction (still current):\n${describeGoal(goal, [])}`,
    ));
  }
  if (plan?.active) {
    const text = await plan.readPlan().catch(() => null);
    if (text) {
      notes.push(
        `<system-reminder>\nPlan mode is on. The plan so far (\`${plan.planFile}\`):\n${text}\n</system-reminder>`,
      );
    }
  }
  return notes;
}

/** Title an untitled session after its first real turn (the user's words, shortened). */
async function autoTitle(session: Session, input: UserInput): Promise<void> {
  const fresh = await loadState(session.dir);
  if (fresh.custom_title !== null && fresh.custom_title !== undefined) return;
  const text = typeof input === "string" ? input : extractText(input, " ");
  const title = shortenTitle(text, 50);
  if (!title) return;
  session.state.custom_title = title;
  await saveState(session.dir, session.state, { keepExternalFields: false });
}

/** HOME (plan files live in `<home>/.kimi/plans`); falls back to the share dir's parent. */
function homeDir(getEnv: (name: string) => string | undefined, shareDir: string): string {
  const home = getEnv("HOME") ?? getEnv("USERPROFILE");
  if (home) return home;
  const i = shareDir.lastIndexOf("/");
  return i > 0 ? shareDir.slice(0, i) : shareDir;
}
