/**
 * Per-session setup of shell confinement: plan it from the permission scope, find bwrap, build
 * the session's bwrap command wrapper, and otherwise warn (or refuse shell commands when the
 * config requires confinement). Also the status `kimi info` reports.
 *
 * @module
 */
import {
  type CommandWrapper,
  PASSTHROUGH_WRAPPER,
  refusingWrapper,
} from "../process/command_wrapper.ts";
import type { ControlPath } from "../tooling/control_paths.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import {
  bwrapFix,
  type BwrapLookup,
  type EnvReader,
  lookupBwrap,
  type PendingBwrapLookup,
} from "./bwrap.ts";
import { type ConfinementPlan, confinementWrapper, planConfinement } from "./confinement.ts";
import { isolationWarning, pidNamespaceWrapper } from "./process_isolation.ts";

/** Options of {@link setupShellConfinement}. */
export interface ShellConfinementSetup {
  /** Absolute working directory. */
  readonly workDir: string;
  /** Extra workspace directories, read before each command (they can change). */
  readonly additionalDirs: () => readonly string[];
  /** Share dir (its config and credentials are hidden from confined commands). */
  readonly shareDir: string;
  /** What this run may touch. */
  readonly scope: PermissionScope;
  /** `sandbox.require_shell_confinement`: refuse shell commands when they cannot be confined. */
  readonly requireConfinement: boolean;
  /** Reads the environment (`PATH`, `KIMI_BWRAP_PATH`). */
  readonly getEnv?: EnvReader;
  /** Shell is unavailable in this run (no permission to run programs): nothing to confine. */
  readonly shellDisabled?: boolean;
  /** The session's control paths, masked inside the sandbox (default: the share dir's). */
  readonly controlPaths?: () => readonly ControlPath[];
  /**
   * Prints the "not confined" warning (default: stderr). A host of many sessions passes one
   * that prints once per process.
   */
  readonly warn?: (line: string) => void;
  /**
   * The bwrap lookup, started earlier so that its probe runs beside the session's other
   * set-up (default: started here).
   */
  readonly bwrap?: PendingBwrapLookup;
}

/** How Shell commands run, as the Shell tool sees it. */
export interface ShellConfinementView {
  /** Short description, e.g. `sandboxed: writes only to /w and a private /tmp; network off`. */
  readonly description: string;
  /** When set, Shell refuses every command with this message. */
  readonly refusal?: string;
}

/** A session's shell confinement: what Shell shows, and how its commands are spawned. */
export interface ShellConfinement {
  /** What Shell shows, or `null` when commands run unconfined. */
  readonly view: ShellConfinementView | null;
  /**
   * The session's command wrapper for Shell, background tasks and plugin tools: the bwrap
   * sandbox, a refusal, a pid namespace of their own (unconfined runs), or the passthrough
   * (bubblewrap unusable).
   */
  readonly wrapper: CommandWrapper;
  /**
   * The wrapper for the user's own processes (hooks, MCP stdio servers): a pid namespace of
   * their own when bubblewrap works (kimi's `/proc/<pid>` invisible), else the passthrough.
   */
  readonly isolation: CommandWrapper;
  /** Whether {@link isolation} gives a pid namespace. */
  readonly isolated: boolean;
}

function writeStderr(line: string): void {
  try {
    Deno.stderr.writeSync(new TextEncoder().encode(line + "\n"));
  } catch {
    // stderr closed: nothing to do
  }
}

/**
 * A warning printer that prints only its first line: one per host (a run of the CLI, an ACP
 * server), so a host of many sessions says "not confined" once.
 */
export function warnOnce(write: (line: string) => void = writeStderr): (line: string) => void {
  let warned = false;
  return (line) => {
    if (warned) return;
    warned = true;
    write(line);
  };
}

/** The refusal Shell gives when confinement is required but bwrap is unusable. */
export function refusalMessage(lookup: BwrapLookup & { ok: false }): string {
  return "Shell commands must run confined because this run's Deno permissions are narrower " +
    `than full access, but ${lookup.detail}. Install bubblewrap (e.g. apt-get install ` +
    "bubblewrap) and make sure this run may start it (--allow-run=bwrap), or set " +
    "sandbox.require_shell_confinement = false in the config to run shell commands " +
    "unconfined (they can then write wherever your user can, reach the network and read " +
    "kimi's configuration).";
}

/**
 * Plan shell confinement for one session. Resolves with what Shell should show (`view`, null
 * when commands run unconfined because the scope is not narrowed, or bwrap is unusable and not
 * required; the latter is announced through `warn`) and the session's command wrapper.
 */
export async function setupShellConfinement(
  opts: ShellConfinementSetup,
): Promise<ShellConfinement> {
  const replan = (): ConfinementPlan =>
    planConfinement({
      workDir: opts.workDir,
      additionalDirs: opts.additionalDirs(),
      shareDir: opts.shareDir,
      scope: opts.scope,
    });
  const plan = replan();
  const warn = opts.warn ?? writeStderr;
  // Every run looks for bwrap: even unconfined commands, hooks and MCP servers get a pid
  // namespace of their own, so none of them reads kimi's /proc/<pid>/environ.
  const lookup = opts.bwrap
    ? await opts.bwrap.result(opts.scope)
    : await lookupBwrap(opts.scope, opts.getEnv);
  const isolation = lookup.ok ? pidNamespaceWrapper(lookup.path, opts.scope) : PASSTHROUGH_WRAPPER;
  const own = { isolation, isolated: lookup.ok };
  // A run that may not start bwrap and has no shell either starts (almost) nothing: no warning.
  const quiet = !lookup.ok && lookup.problem === "not_permitted" && opts.shellDisabled === true;
  if (!plan.confined || opts.shellDisabled) {
    if (!lookup.ok && !quiet) warn(isolationWarning(lookup));
    return { view: null, wrapper: isolation, ...own };
  }
  if (lookup.ok) {
    const wrapper = confinementWrapper(plan, {
      bwrap: lookup.path,
      shareDir: opts.shareDir,
      replan,
      controlPaths: opts.controlPaths,
    });
    return {
      view: {
        get description() {
          return replan().description;
        },
      },
      wrapper,
      ...own,
    };
  }
  if (opts.requireConfinement) {
    const refusal = refusalMessage(lookup);
    // Hooks and MCP servers still run (they are the user's), in kimi's pid namespace.
    warn(isolationWarning(lookup));
    // Defence in depth: anything spawned through the wrapper fails with the same message.
    return {
      view: { description: "not sandboxed", refusal },
      wrapper: refusingWrapper(refusal),
      ...own,
    };
  }
  warn(
    `kimi: shell commands are not confined: ${lookup.detail}. ${bwrapFix(lookup.problem)} ` +
      "They, hooks, MCP servers and plugin tools can also read kimi's environment through " +
      "/proc/<pid>/environ.",
  );
  return { view: null, wrapper: PASSTHROUGH_WRAPPER, ...own };
}

/** How Shell commands run: in bubblewrap, without it, or not at all. */
export type ShellMode = "confined" | "unconfined" | "refused";

/** What `kimi info --json` reports as `shell_confinement`. */
export interface ShellConfinementStatus {
  /** What applies: `confined`, `unconfined` (full scope, or opted out) or `refused`. */
  shell: ShellMode;
  /** `sandbox.require_shell_confinement` (default true). */
  required: boolean;
  /** Whether shell commands run inside bubblewrap. */
  confined: boolean;
  /** Whether the permission scope asks for confinement. */
  needed: boolean;
  /** Path of a usable bwrap, or null. */
  bwrap: string | null;
  /** Why commands are (not) confined. */
  reason: string;
  /** Short description of the sandbox (or `not sandboxed`). */
  description: string;
  /** Paths writable inside the sandbox. */
  writable: string[];
  /** Whether confined commands keep the network. */
  network: boolean;
  /** Whether the agent's config, credentials and environment are hidden from commands. */
  secrets_hidden: boolean;
}

/** The confinement shell commands would get in a run with these inputs. Never throws. */
export async function shellConfinementStatus(
  inputs: {
    readonly workDir: string;
    readonly additionalDirs: readonly string[];
    readonly shareDir: string;
    readonly scope: PermissionScope;
    /** `sandbox.require_shell_confinement` (default true). */
    readonly requireConfinement?: boolean;
  },
  getEnv?: EnvReader,
): Promise<ShellConfinementStatus> {
  const required = inputs.requireConfinement ?? true;
  const plan = planConfinement(inputs);
  const lookup = await lookupBwrap(inputs.scope, getEnv);
  const confined = plan.confined && lookup.ok;
  let reason: string;
  if (confined) reason = plan.reason;
  else if (!plan.confined) {
    reason = `${plan.reason}; start kimi with narrower --allow-write/--allow-net to confine ` +
      "shell commands";
  } else reason = lookup.ok ? plan.reason : lookup.detail;
  const shell: ShellMode = confined
    ? "confined"
    : plan.confined && required
    ? "refused"
    : "unconfined";
  return {
    shell,
    required,
    confined,
    needed: plan.confined,
    bwrap: lookup.ok ? lookup.path : null,
    reason,
    description: confined ? plan.description : "not sandboxed",
    writable: confined ? [...plan.writable] : ["/"],
    network: confined ? plan.network : true,
    secrets_hidden: confined,
  };
}
