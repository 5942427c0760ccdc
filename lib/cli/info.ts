/**
 * `kimi info [--json]`: versions of this program and its protocols, the effective permission
 * scope of this run with the tools it leaves out, and the approval rules in force here.
 *
 * @module
 */
import { join } from "node:path";
import { defaultConfigPath, loadConfigFromText } from "../config/load.ts";
import { readProcessEnv, shareDir } from "../config/share_dir.ts";
import { PermissionRuleSet } from "../permission/rule_set.ts";
import { ruleLocation, type RuleProblem } from "../permission/rules.ts";
import { modelHostFromConfig } from "../sandbox/model_host.ts";
import {
  ACCESS_KINDS,
  computeRunScope,
  describeRunScope,
  type RunScopeSummary,
  type UnavailableTool,
  unavailableTools,
} from "../sandbox/run_scope.ts";
import { findRipgrep } from "../search/ripgrep.ts";
import { type ShellConfinementStatus, shellConfinementStatus } from "../sandbox/setup.ts";
import { lookupBwrap } from "../sandbox/bwrap.ts";
import {
  type ProcessIsolationStatus,
  processIsolationStatus,
} from "../sandbox/process_isolation.ts";
import { DenoPermissionScope } from "../tooling/scope.ts";
import { AGENT_SPEC_VERSIONS, VERSION, WIRE_SERVER_PROTOCOL_VERSION } from "../version.ts";

/** The effective permission scope as `kimi info --json` prints it. */
export type ScopeReport = RunScopeSummary & {
  /** Built-in tools left out of the model's tool list in this scope. */
  disabled_tools: UnavailableTool[];
};

/** What `kimi info --json` prints. */
export interface InfoReport {
  /** CLI version. */
  kimi_cli_version: string;
  /** Agent spec versions. */
  agent_spec_versions: string[];
  /** Wire protocol version. */
  wire_protocol_version: string;
  /** Runtime version (the reference reports Python's; we report Deno's). */
  deno_version: string;
  /** Effective permission scope of this run (work dir: the current directory). */
  scope: ScopeReport;
  /** Whether shell commands of a run started here would be confined with bubblewrap. */
  shell_confinement: ShellConfinementStatus;
  /** Whether the processes kimi starts run in their own pid namespace (kimi's /proc hidden). */
  process_isolation: ProcessIsolationStatus;
  /** Approval rules a run started here would apply (user config, then project). */
  permission_rules: InfoRule[];
  /** Rules that were left out, and why. */
  permission_problems: RuleProblem[];
}

/** One approval rule as `kimi info --json` prints it. */
export interface InfoRule {
  /** `Tool(argument)` pattern. */
  pattern: string;
  /** allow, ask or deny. */
  decision: string;
  /** user or project. */
  scope: string;
  /** File it comes from. */
  source: string;
  /** 1-based line, when known. */
  line: number | null;
}

/** The approval rules of a run started here (default config file, project `.kimi/`). */
export async function rulesReport(): Promise<
  { rules: InfoRule[]; problems: RuleProblem[] }
> {
  let share: string | null = null;
  try {
    share = shareDir(readProcessEnv);
  } catch {
    // no HOME: only project rules
  }
  const set = await PermissionRuleSet.load({
    userFile: share ? join(share, "config.toml") : null,
    workDir: currentDir(),
  });
  return {
    rules: set.all().map((r) => ({
      pattern: r.pattern,
      decision: r.decision,
      scope: r.scope,
      source: r.source,
      line: r.line,
    })),
    problems: [...set.problems],
  };
}

function currentDir(): string {
  try {
    return Deno.cwd();
  } catch {
    return ".";
  }
}

/** The scope of a run started here with these permissions. */
export async function scopeReport(): Promise<ScopeReport> {
  const workDir = currentDir();
  let share: string | null = null;
  try {
    share = shareDir(readProcessEnv);
  } catch {
    // no HOME: the share dir is unknown
  }
  const modelHost = share
    ? await modelHostFromConfig({ shareDir: share, getEnv: readProcessEnv })
    : null;
  const rg = await findRipgrep();
  const summary = computeRunScope({
    workDir,
    shareDir: share,
    additionalDirs: [],
    modelHost,
    programs: rg ? [rg] : [],
  });
  const disabled = unavailableTools(summary, new DenoPermissionScope(), { workDir });
  return { ...summary, disabled_tools: disabled };
}

/** `sandbox.require_shell_confinement` from the share dir's config (true when unreadable). */
async function requireConfinementSetting(share: string): Promise<boolean> {
  try {
    const text = await Deno.readTextFile(defaultConfigPath(share));
    return loadConfigFromText(text).sandbox.require_shell_confinement;
  } catch {
    return true;
  }
}

/** Shell confinement of a run started here with these permissions. */
export async function shellConfinementReport(): Promise<ShellConfinementStatus> {
  let share = "";
  try {
    share = shareDir(readProcessEnv);
  } catch {
    // no HOME: nothing of the share dir to hide
  }
  return await shellConfinementStatus({
    workDir: currentDir(),
    additionalDirs: [],
    shareDir: share,
    scope: new DenoPermissionScope(),
    requireConfinement: share ? await requireConfinementSetting(share) : true,
  }, readProcessEnv);
}

/** Collect the report. */
export async function infoReport(): Promise<InfoReport> {
  return {
    kimi_cli_version: VERSION,
    agent_spec_versions: [...AGENT_SPEC_VERSIONS],
    wire_protocol_version: WIRE_SERVER_PROTOCOL_VERSION,
    deno_version: Deno.version.deno,
    scope: await scopeReport(),
    shell_confinement: await shellConfinementReport(),
    process_isolation: processIsolationStatus(
      await lookupBwrap(new DenoPermissionScope(), readProcessEnv),
    ),
    ...await rulesReport().then((r) => ({
      permission_rules: r.rules,
      permission_problems: r.problems,
    })),
  };
}

/** Print the report as text or JSON. */
export async function printInfo(json: boolean): Promise<void> {
  const r = await infoReport();
  if (json) {
    console.log(JSON.stringify(r, null, 2));
    return;
  }
  console.log(`kimi-cli version: ${r.kimi_cli_version}`);
  console.log(`agent spec versions: ${r.agent_spec_versions.join(", ")}`);
  console.log(`wire protocol: ${r.wire_protocol_version}`);
  console.log(`deno version: ${r.deno_version}`);
  const summary = Object.fromEntries(ACCESS_KINDS.map((k) => [k, r.scope[k]])) as RunScopeSummary;
  for (const line of describeRunScope(summary)) console.log(`scope ${line}`);
  const disabled = r.scope.disabled_tools;
  console.log(
    `disabled tools: ${
      disabled.length === 0 ? "none" : disabled.map((t) => `${t.name} (${t.reason})`).join("; ")
    }`,
  );
  const sc = r.shell_confinement;
  console.log(
    sc.confined
      ? `shell confinement: on (${sc.description})`
      : `shell confinement: off (${sc.reason})`,
  );
  const setting = `sandbox.require_shell_confinement = ${sc.required}`;
  console.log(
    sc.shell === "confined" ? `shell commands: confined (${setting})` : sc.shell === "refused"
      // the actual cause: not installed, installed but not allowed to run, or not working
      ? `shell commands: refused (${setting}; confinement is needed but unavailable: ` +
        `${sc.reason}${
          /was not found/.test(sc.reason) ? " (install it, e.g. apt-get install bubblewrap)" : ""
        }; fix that, or set sandbox.require_shell_confinement = false)`
      : sc.needed
      ? `shell commands: unconfined (${setting}: opted out of confinement)`
      : "shell commands: unconfined (full scope: the run may write anywhere and use the network)",
  );
  console.log(
    sc.shell === "refused"
      ? "shell secrets: safe (no shell command runs)"
      : sc.secrets_hidden
      ? "shell secrets: hidden (kimi's config, mcp.json, credentials/, mcp-oauth/ and the " +
        "config file in use masked; host agents and sockets hidden; own pid namespace)"
      : "shell secrets: not hidden (shell commands can read the share dir's config.toml and " +
        "credentials/ and the agent's /proc environment; hiding them needs bubblewrap (bwrap) " +
        "confinement)",
  );
  const iso = r.process_isolation;
  console.log(`child processes: ${iso.isolated ? "isolated" : "not isolated"} (${iso.reason})`);
  if (r.permission_rules.length === 0) {
    console.log("approval rules: none (every action asks unless yolo/afk is on)");
  } else {
    console.log("approval rules (deny wins over ask, ask over allow):");
    for (const rule of r.permission_rules) {
      console.log(`  ${rule.decision.padEnd(5)} ${rule.pattern}  (${ruleLocation(rule)})`);
    }
  }
  for (const p of r.permission_problems) {
    console.log(`approval rule problem: ${ruleLocation(p)}: ${p.message}`);
  }
}
