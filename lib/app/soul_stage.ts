/**
 * Third stage of the composition root: the soul and what it holds. Skills (the plugins' too), the
 * restored context (with its system prompt and the plugins' prompt text), plan mode, file
 * snapshots, goals, hooks, MCP (the plugins' servers too) and an empty
 * toolset, which the tool-environment stage fills: tools talk to the soul, so the soul comes
 * first. Reads the model and policy stages only.
 *
 * The goal store is built before the soul and sends through a {@link SoulOutlet}, attached as
 * soon as the soul exists; the swarms the soul's `/swarm` command lists are set by the next
 * stage, once the subagent service exists ({@link SoulStage.commandServices}).
 *
 * @module
 */
import { log } from "../log.ts";
import { builtinPromptArgs, renderSystemPrompt } from "../agent/system_prompt.ts";
import { formatSkillsListing } from "../agent/skills_listing.ts";
import type { BackgroundTaskManager } from "../background/task_manager.ts";
import { TaskNotificationQueue } from "../background/notifications.ts";
import { HookEngine } from "../hooks/engine.ts";
import { fireNotification, goalAttention } from "../hooks/notification_hooks.ts";
import { extractText } from "../llm/message.ts";
import type { McpManager } from "../mcp/manager.ts";
import { createMcpManager } from "../mcp/setup.ts";
import { pluginPromptSections } from "../plugins/bundle.ts";
import type { CommandWrapper } from "../process/command_wrapper.ts";
import { capabilityNotes } from "../sandbox/run_scope.ts";
import { FileSnapshots } from "../session/file_snapshots.ts";
import type { Session } from "../session/session.ts";
import { loadState, saveState } from "../session/state.ts";
import { shortenTitle } from "../session/title.ts";
import type { Skill } from "../skills/skill.ts";
import { loadSkills } from "../skills/discovery.ts";
import { SOUL_COMMANDS } from "../soul/commands/mod.ts";
import { skillCommands } from "../soul/commands/skills.ts";
import { Context } from "../soul/context.ts";
import { describeGoal, GoalStore, SESSION_RESUMED } from "../soul/goal.ts";
import { PlanMode } from "../soul/plan_mode.ts";
import type { CommandServices } from "../soul/slash_commands.ts";
import { KimiSoul } from "../soul/soul.ts";
import { closeDanglingToolCalls } from "../soul/tool_pairing.ts";
import { systemReminder } from "../soul/tool_result_message.ts";
import { Toolset } from "../soul/toolset.ts";
import type { ControlPathSet } from "../tooling/control_paths.ts";
import type { UserInput, WireMessage } from "../wire/messages.ts";
import type { KimiAppOptions } from "./app_options.ts";
import type { ModelStage } from "./model_stage.ts";
import type { PolicyStage } from "./policy_stage.ts";

/** What {@link buildSoul} built. */
export interface SoulStage {
  /** The soul. */
  readonly soul: KimiSoul;
  /** Its toolset (empty until the tool-environment stage loads the agent's tools). */
  readonly toolset: Toolset;
  /** Its context. */
  readonly context: Context;
  /** The skills found for the session. */
  readonly skills: readonly Skill[];
  /** Plan mode. */
  readonly plan: PlanMode;
  /** Undo snapshots of changed files. */
  readonly fileSnapshots: FileSnapshots;
  /** The session goal. */
  readonly goals: GoalStore;
  /** The session's hook engine (config hooks + wire subscriptions). */
  readonly hooks: HookEngine;
  /** MCP clients of the root agent (null without configured servers); not yet connecting. */
  readonly mcp: McpManager | null;
  /** The session services the soul's commands use (swarms are set by the next stage). */
  readonly commandServices: CommandServices;
  /** Finished background tasks not yet told to the agent. */
  readonly taskNotes: TaskNotificationQueue;
}

/**
 * The soul's wire as the parts built before the soul see it: messages sent through it reach the
 * soul once it is attached (the goal store sends only during turns, after that).
 */
export class SoulOutlet {
  #soul: KimiSoul | null = null;

  /** Connect the soul. */
  attach(soul: KimiSoul): void {
    this.#soul = soul;
  }

  /** Send a wire message on the soul's running turn. */
  emit(msg: WireMessage): void {
    if (this.#soul === null) throw new Error("the soul is not built yet");
    this.#soul.emit(msg);
  }
}

/** What {@link buildSoul} needs besides the options and the earlier stages. */
export interface SoulStageInputs {
  /** The session's background tasks (finished ones are told to the agent at its next step). */
  tasks: BackgroundTaskManager;
  /** The session's control paths (skills and prompt files may not be read from them). */
  controls: ControlPathSet;
  /**
   * How hook commands and MCP stdio servers are spawned: the session's process isolation (a
   * pid namespace of their own, so none reads kimi's `/proc/<pid>/environ`).
   */
  spawn: CommandWrapper;
}

/** Restore the session's context and build the soul around it. */
export async function buildSoul(
  opts: KimiAppOptions,
  model: ModelStage,
  policy: PolicyStage,
  inputs: SoulStageInputs,
): Promise<SoulStage> {
  const { config, session } = opts;
  const { agent, llm, plugins } = model;
  const { controls } = inputs;
  const state = session.state;
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
      capabilityNotes: capabilityNotes(policy.runScope),
      controls: controls.list(),
    });
    const pluginText = pluginPromptSections(plugins.bundles.promptSections);
    const prompt = renderSystemPrompt(agent, builtins);
    await context.writeSystemPrompt(pluginText ? `${prompt}\n\n${pluginText}` : prompt);
  }

  const fileSnapshots = new FileSnapshots(session.dir);
  const toolset = new Toolset({
    scope: policy.scope,
    maxParallelCalls: config.loop_control.max_parallel_tool_calls,
    // keyed by the checkpoint of the step making the change
    fileHistory: {
      beforeChange: (path) => fileSnapshots.recordBefore(path, context.nCheckpoints - 1),
      afterChange: (path) => fileSnapshots.recordAfter(path, context.nCheckpoints - 1),
    },
  });
  // a call to a tool this run's permissions leave out says so (not "not found")
  const profile = opts.getEnv("KIMI_PERMISSION_PROFILE");
  for (const t of policy.leftOut) {
    toolset.setUnavailable(
      t.name,
      `${t.name} is not available in ${profile ? `the ${profile} profile` : "this run"}: ` +
        `${t.reason}. Do without it, or tell the user which permission would allow it.`,
    );
  }
  const hooks = new HookEngine({
    hooks: config.hooks,
    cwd: session.workDir,
    sessionId: session.id,
    childEnv: policy.childEnv,
    spawn: () => inputs.spawn,
  });
  const plan = new PlanMode({
    home: homeDir(opts.getEnv, session.shareDir),
    store: { state: () => session.state, save: () => session.saveState() },
  });
  const outlet = new SoulOutlet();
  const goals = new GoalStore({
    store: { state: () => session.state, save: () => session.saveState() },
    nCheckpoints: () => context.nCheckpoints,
    emit: (m) => {
      outlet.emit(m);
      const ended = m.type === "GoalUpdate" ? goalAttention(m.payload) : null;
      if (ended) fireNotification(hooks, ended);
    },
    onChange: (goal) => offerGoalTools(toolset, goal !== null),
  });
  const taskNotes = new TaskNotificationQueue(inputs.tasks);
  const mcp = await createMcpManager({
    servers: { ...(opts.mcpServers ?? {}), ...plugins.bundles.mcpServers },
    toolset,
    toolCallTimeoutMs: config.mcp.client.tool_call_timeout_ms,
    connectTimeoutMs: config.mcp.client.connect_timeout_ms,
    childEnv: policy.childEnv,
    spawn: () => inputs.spawn,
    workDir: session.workDir,
    shareDir: session.shareDir,
    scope: policy.scope,
    report: opts.reportMcp,
  });
  const commandServices: CommandServices = {
    sessionId: session.id,
    sessionDir: session.dir,
    shareDir: session.shareDir,
    workDir: session.workDir,
    additionalDirs: () => session.state.additional_dirs,
    addDir: async (dir) => {
      session.state.additional_dirs.push(dir);
      await session.saveState();
    },
    controlPaths: () => controls.list(),
  };
  const soul = new KimiSoul({
    mcp: mcp ?? undefined,
    name: agent.name,
    llm,
    context,
    toolset,
    approval: policy.approval,
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
    commandServices,
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
    notifications: () => taskNotes.drain(),
  });
  outlet.attach(soul);
  hooks.setEmitter((e) => soul.emit(e));
  policy.approval.setCheckpointSource(() => soul.context.nCheckpoints - 1);
  await plan.restore();
  // A goal that was running when the last process ended waits for `/goal resume`.
  if (opts.resumed) await goals.pause(SESSION_RESUMED);
  if (opts.plan || (!opts.resumed && config.default_plan_mode)) {
    if (plan.active) plan.scheduleActivationReminder();
    else await plan.set(true, "manual");
  }
  return {
    soul,
    toolset,
    context,
    skills,
    plan,
    fileSnapshots,
    goals,
    hooks,
    mcp,
    commandServices,
    taskNotes,
  };
}

/** Goal tools offered to the model only while there is a goal (CreateGoal always is). */
const GOAL_LOOP_TOOLS = ["GetGoal", "UpdateGoal", "SetGoalBudget"] as const;

/** Offer the goal-loop tools to the model, or hide them, by whether there is a goal. */
export function offerGoalTools(toolset: Toolset, hasGoal: boolean): void {
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
