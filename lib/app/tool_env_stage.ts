/**
 * Last stage of the composition root: the tool environment of the root agent (what its tools
 * may reach: workspace, scope, services, the soul's plan mode and wire, subagents), and the
 * agent's tools loaded into the soul's toolset. Reads every earlier stage; nothing earlier reads
 * it, except the soul's `/swarm` command, whose source is set here.
 *
 * @module
 */
import { builtinPromptArgs, renderSystemPrompt } from "../agent/system_prompt.ts";
import { formatSkillsListing } from "../agent/skills_listing.ts";
import type { SessionRun } from "../tooling/session_run.ts";
import type { BackgroundSettings, ToolEnv } from "../tooling/tool.ts";
import type { Config } from "../config/schema.ts";
import { capabilityNotes } from "../sandbox/run_scope.ts";
import type { ShellConfinementView } from "../sandbox/setup.ts";
import { fireNotification, questionAttention } from "../hooks/notification_hooks.ts";
import { SubagentManager } from "../subagents/service.ts";
import { PendingRequest, type Question } from "../wire/messages.ts";
import type { KimiAppOptions } from "./app_options.ts";
import type { ModelStage } from "./model_stage.ts";
import type { PolicyStage } from "./policy_stage.ts";
import { offerGoalTools, type SoulStage } from "./soul_stage.ts";
import { createSubagentService } from "./subagent_wiring.ts";
import { oauthAccessToken } from "./oauth_token.ts";
import { loadAgentTools } from "./tool_loading.ts";

/** What {@link buildToolEnv} needs besides the options and the earlier stages. */
export interface ToolEnvInputs {
  /** What Shell shows of the session's confinement (null: its commands run unconfined). */
  shellConfinement: ShellConfinementView | null;
  /** The session's run state (command wrapper, control paths, live output, tasks). */
  run: SessionRun;
  /** Background task settings. */
  background: BackgroundSettings;
  /** Whether the connected client can answer questions (read at each question). */
  supportsQuestions: () => boolean;
}

/**
 * Build the root agent's tool environment, load its tools into the soul's toolset and give the
 * soul its swarm source. Returns the environment.
 */
export async function buildToolEnv(
  opts: KimiAppOptions,
  stages: { model: ModelStage; policy: PolicyStage; soul: SoulStage },
  inputs: ToolEnvInputs,
): Promise<ToolEnv> {
  const { config, session } = opts;
  const { agent, llm, thinking, plugins } = stages.model;
  const { scope, disabled, runScope, approvalState } = stages.policy;
  const { soul, plan, goals, skills, toolset, hooks } = stages.soul;
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
  const base: ToolEnv = {
    workDir: session.workDir,
    additionalDirs: () => session.state.additional_dirs,
    shareDir: session.shareDir,
    sessionDir: session.dir,
    sessionId: session.id,
    modelCapabilities: llm?.capabilities ?? new Set(),
    isRoot: true,
    scope,
    shellConfinement: inputs.shellConfinement,
    run: inputs.run,
    services: {
      moonshotSearch: service(config.services.moonshot_search),
      moonshotFetch: service(config.services.moonshot_fetch),
    },
    background: inputs.background,
    childEnv: stages.policy.childEnv,
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
      if (!inputs.supportsQuestions()) return null;
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
    files: opts.files,
    terminal: opts.terminal,
  };
  // Subagents get the root's environment, which includes them: it is read when one starts.
  const env: ToolEnv = {
    ...base,
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
            controls: inputs.run.controlPaths.list(),
          }),
        ),
    }),
  };
  const subagents = env.subagents;
  stages.soul.commandServices.swarms = () => subagents?.swarms() ?? [];
  // Settle subagent instances an earlier run left running in the background (their files
  // only; it runs alongside start-up).
  if (subagents instanceof SubagentManager) subagents.recover().catch(() => {});
  // The agent's own tools, then the installed plugins' (a name already taken is skipped).
  const ownTools = await loadAgentTools(agent.tools, env, { disabled, scope });
  for (const tool of ownTools) toolset.add(tool);
  for (const tool of plugins.tools(env, new Set(ownTools.map((t) => t.name)))) {
    toolset.add(tool);
  }
  offerGoalTools(toolset, goals.current() !== null);
  return env;
}
