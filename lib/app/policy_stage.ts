/**
 * Second stage of the composition root: what the run may do. The session's approval state,
 * the permission scope and what it leaves of the workspace and the tools, the approval rules,
 * and the environment child processes get (secrets removed). Reads the model stage only.
 *
 * @module
 */
import { join } from "node:path";
import { log } from "../log.ts";
import type { Config } from "../config/schema.ts";
import { PermissionRuleSet } from "../permission/rule_set.ts";
import { ruleLocation } from "../permission/rules.ts";
import {
  computeRunScope,
  type RunScopeSummary,
  unavailableTools,
  urlHost,
} from "../sandbox/run_scope.ts";
import { ApprovalRuntime, ApprovalState } from "../soul/approval.ts";
import type { ControlPathSet } from "../tooling/control_paths.ts";
import { DenoPermissionScope, type PermissionScope } from "../tooling/scope.ts";
import { canonicalPath } from "../tooling/workspace.ts";
import type { KimiAppOptions } from "./app_options.ts";
import { childEnvironment, readableEnvironment } from "./child_env.ts";
import type { ModelStage } from "./model_stage.ts";
import { prefetchBuiltinTools } from "./tool_loading.ts";

/** What {@link buildPolicy} built. */
export interface PolicyStage {
  /** The permission scope (Deno's unless the UI passed one). */
  readonly scope: PermissionScope;
  /** What the scope leaves of the workspace, the model host and the shell. */
  readonly runScope: RunScopeSummary;
  /** Tools the scope leaves unusable (not offered to the model). */
  readonly disabled: ReadonlySet<string>;
  /** The same tools with the reason (a call to one says why it is not available). */
  readonly leftOut: readonly { readonly name: string; readonly reason: string }[];
  /** The session's approval state (yolo, afk, granted actions). */
  readonly approvalState: ApprovalState;
  /** Approval: state plus the configured rules. */
  readonly approval: ApprovalRuntime;
  /** The environment of a child process (hooks, MCP servers, Shell), without secrets. */
  readonly childEnv: () => Record<string, string>;
}

/**
 * Set up approval, scope and rules for the session (persisting the approval flags), and start
 * loading the agent's tool modules the scope leaves usable.
 */
export async function buildPolicy(
  opts: KimiAppOptions,
  model: ModelStage,
  inputs: { controls: ControlPathSet },
): Promise<PolicyStage> {
  const { config, session } = opts;
  const { resolved, agent } = model;
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
            ...inputs.controls.list().filter((c) => c.kind === "file").map((c) => c.path),
          ].map((p) => canonicalPath(p, session.workDir)),
        ),
      ],
    },
  });
  const secrets = secretsOf(config, model);
  return {
    scope,
    runScope,
    disabled,
    leftOut,
    approvalState,
    approval,
    childEnv: () => childEnvironment(readableEnvironment(), secrets),
  };
}

/** The configured secrets a child process must not see: API keys and provider env names. */
function secretsOf(config: Config, model: ModelStage): { values: string[]; names: string[] } {
  return {
    values: [
      ...Object.values(config.providers).map((p) => p.api_key),
      model.resolved.provider.api_key,
      config.services.moonshot_search?.api_key ?? "",
      config.services.moonshot_fetch?.api_key ?? "",
    ],
    names: Object.values(config.providers).flatMap((p) => Object.keys(p.env ?? {})),
  };
}
