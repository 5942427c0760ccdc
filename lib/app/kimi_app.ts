/**
 * The composition root: assembling a runnable agent for a session (the reference's
 * `KimiCLI.create`). Every UI builds its soul through this. {@link KimiApp.create} calls the
 * stages in order, each in its own module and reading only the stages before it: model and
 * provider (`model_stage.ts`), policy and scope (`policy_stage.ts`), the soul with its context,
 * hooks and MCP (`soul_stage.ts`), and the tool environment with the agent's tools
 * (`tool_env_stage.ts`).
 *
 * @module
 */
import { log } from "../log.ts";
import { type AgentSpecSource, loadAgentSpec, type ResolvedAgentSpec } from "../agent/spec.ts";
import type { Config } from "../config/schema.ts";
import type { LLM } from "../llm/provider.ts";
import { prefetchProvider } from "../llm/create.ts";
import { setupShellConfinement } from "../sandbox/setup.ts";
import { type CommandWrapper, PASSTHROUGH_WRAPPER } from "../process/command_wrapper.ts";
import { startBwrapLookup } from "../sandbox/bwrap.ts";
import type { Session } from "../session/session.ts";
import { ControlPathSet, projectControlPaths } from "../tooling/control_paths.ts";
import { ToolOutputFeed } from "../tooling/live_output.ts";
import type { SessionRun } from "../tooling/session_run.ts";
import type { McpManager } from "../mcp/manager.ts";
import type { HookEngine } from "../hooks/engine.ts";
import type { KimiSoul } from "../soul/soul.ts";
import {
  publishTaskNotifications,
  type TaskNotificationQueue,
} from "../background/notifications.ts";
import { fireNotification, notifyApprovals, taskAttention } from "../hooks/notification_hooks.ts";
import { BackgroundTaskManager } from "../background/task_manager.ts";
import { backgroundSettings } from "../background/settings.ts";
import { event as wireEvent, type EventPayload, type WireEvent } from "../wire/messages.ts";
import { WireFile } from "../wire/recorder.ts";
import type { KimiAppOptions } from "./app_options.ts";
import { buildModel } from "./model_stage.ts";
import { buildPolicy } from "./policy_stage.ts";
import { buildSoul } from "./soul_stage.ts";
import { buildToolEnv } from "./tool_env_stage.ts";
import { prefetchBuiltinTools } from "./tool_loading.ts";

export type { KimiAppOptions } from "./app_options.ts";
export { PLUGIN_TIMEOUT_ENV } from "./model_stage.ts";

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
  /**
   * How the user's own commands (the shell's shell mode) are spawned: in the session's pid
   * namespace of their own, as hooks and MCP servers are, so they cannot read kimi's
   * `/proc/<pid>/environ`; not confined like the agent's Shell.
   */
  userCommands: CommandWrapper = PASSTHROUGH_WRAPPER;
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

  /**
   * Build the agent for a session, stage by stage; each stage reads only the ones before it:
   * model and provider ({@link buildModel}), policy and scope ({@link buildPolicy}), the soul
   * ({@link buildSoul}), then the tool environment, which loads the agent's tools into the
   * soul's toolset ({@link buildToolEnv}).
   */
  static async create(opts: KimiAppOptions): Promise<KimiApp> {
    const { config, session } = opts;
    // The session's control paths: the share dir's, the host's (e.g. `--config-file`), the
    // project's rules file (no tool of the agent writes it, the shell sandbox included), then
    // the agent's and the plugins' once they are loaded (model stage).
    const controls = new ControlPathSet(session.shareDir, {
      ...opts.controlPaths,
      project: projectControlPaths(session.workDir),
    });
    // Is bubblewrap usable? Its probe (a child process) runs while the model and policy
    // stages are built; the shell confinement below waits for its answer.
    const bwrap = startBwrapLookup(opts.getEnv);
    const model = await buildModel(opts, { controls });
    const policy = await buildPolicy(opts, model, { controls });
    const background = backgroundSettings(config.background);
    const tasks = opts.tasks ?? new BackgroundTaskManager(session.dir, background);
    tasks.updateSettings(background);
    // Shell confinement (bubblewrap) for this session: its command wrapper, a warning when
    // commands cannot be confined, or a refusal when confinement is required; and the pid
    // namespace every process the session starts (hooks and MCP servers too) runs in.
    const shellConfinement = await setupShellConfinement({
      workDir: session.workDir,
      additionalDirs: () => session.state.additional_dirs,
      shareDir: session.shareDir,
      scope: policy.scope,
      requireConfinement: config.sandbox.require_shell_confinement,
      getEnv: opts.getEnv,
      shellDisabled: policy.disabled.has("Shell"),
      controlPaths: () => controls.list(),
      warn: opts.warnShell,
      bwrap,
    });
    const core = await buildSoul(opts, model, policy, {
      tasks,
      controls,
      spawn: shellConfinement.isolation,
    });
    const app = new KimiApp(core.soul, session, config, model.agent);
    const run: SessionRun = {
      commands: shellConfinement.wrapper,
      controlPaths: controls,
      toolOutput: new ToolOutputFeed(),
      tasks,
    };
    app.#run = run;
    app.userCommands = shellConfinement.isolation;
    await buildToolEnv(opts, { model, policy, soul: core }, {
      shellConfinement: shellConfinement.view,
      run,
      background,
      supportsQuestions: () => app.supportsQuestions,
    });
    app.taskNotifications = core.taskNotes;
    const stopTasks = publishTaskNotifications(tasks, (p) => {
      app.#publish(p);
      fireNotification(core.hooks, taskAttention(p));
    });
    const stopApprovals = notifyApprovals(core.soul.approval.subscribe(), core.hooks);
    app.#stopNotifications = () => {
      stopTasks();
      stopApprovals();
    };
    app.mcp = core.mcp;
    core.mcp?.start(); // connects in the background; the first turn waits
    return app;
  }
}
