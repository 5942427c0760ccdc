/**
 * Shell confinement with bubblewrap: deciding from the run's permission scope whether shell
 * commands must be confined ({@link planConfinement}), building the `bwrap` command line
 * ({@link bwrapArgv}) and installing it as the process-wide command wrapper
 * ({@link installConfinement}).
 *
 * Inside the sandbox the file system is read-only except the paths the run may write, `/tmp`
 * is a private tmpfs, the network is unshared unless the run may connect anywhere, commands
 * live in their own pid namespace (so no `/proc/<agent pid>/environ`), and the share dir's
 * config files and `credentials/` are hidden.
 *
 * @module
 */
import { pathStatusSync } from "../fs/exists.ts";
import { setCommandWrapper } from "../process/command_wrapper.ts";
import type { PermissionScope } from "../tooling/scope.ts";

/** Inputs of {@link planConfinement}. */
export interface PlanInputs {
  /** Absolute working directory. */
  readonly workDir: string;
  /** Extra workspace directories (absolute). */
  readonly additionalDirs: readonly string[];
  /** Share dir (`~/.kimi`). */
  readonly shareDir: string;
  /** What this run may touch. */
  readonly scope: PermissionScope;
}

/** Whether and how shell commands are confined. */
export interface ConfinementPlan {
  /** Whether the scope is narrower than everything, so commands must run in a sandbox. */
  readonly confined: boolean;
  /** Why (or why not), in a few words. */
  readonly reason: string;
  /** Paths bound writable inside the sandbox (`["/"]` when the run may write anywhere). */
  readonly writable: readonly string[];
  /**
   * Workspace directories (work dir and additional dirs) that stay visible even when they lie
   * under `/tmp` (which is replaced by a private tmpfs); read-only unless also writable.
   */
  readonly readable: readonly string[];
  /** Whether commands keep the network. */
  readonly network: boolean;
  /** Short human description, e.g. `sandboxed: writes only to /w and a private /tmp; network off`. */
  readonly description: string;
}

/** Share-dir entries hidden from confined commands: files (replaced by `/dev/null`). */
export const HIDDEN_SHARE_FILES: readonly string[] = [
  "config.toml",
  "config.json",
  "config.json.bak",
];
/** Share-dir entries hidden from confined commands: directories (replaced by an empty tmpfs). */
export const HIDDEN_SHARE_DIRS: readonly string[] = ["credentials"];

function kindOf(path: string): "file" | "dir" | null {
  try {
    const st = Deno.statSync(path);
    return st.isDirectory ? "dir" : "file";
  } catch {
    return null;
  }
}

function isWithin(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

function describe(writable: readonly string[], network: boolean): string {
  const writes = writable.includes("/")
    ? "writes anywhere but a private /tmp"
    : writable.length > 0
    ? `writes only to ${writable.join(", ")} and a private /tmp`
    : "writes only to a private /tmp";
  return `sandboxed: ${writes}; network ${network ? "on" : "off"}`;
}

/**
 * Decide how shell commands run under `scope`. Confinement is needed when the run may not
 * write everywhere or may not connect everywhere. Writable inside the sandbox are the work dir
 * and additional dirs that exist and that the scope lets the run write (or `/` when it may
 * write anywhere). The network stays on only when the run may connect anywhere: bubblewrap
 * cannot restrict commands to some hosts, so a host-limited `--allow-net` means no network.
 */
export function planConfinement(inputs: PlanInputs): ConfinementPlan {
  const { scope } = inputs;
  const writeAll = scope.check("write").allowed;
  const network = scope.check("net").allowed;
  if (writeAll && network) {
    return {
      confined: false,
      reason: "the run may write anywhere and use the network",
      writable: ["/"],
      readable: [],
      network: true,
      description: "not sandboxed",
    };
  }
  const readable: string[] = [];
  for (const dir of [inputs.workDir, ...inputs.additionalDirs]) {
    if (dir.startsWith("/") && !readable.includes(dir) && pathStatusSync(dir) === "directory") {
      readable.push(dir);
    }
  }
  const writable = writeAll ? ["/"] : readable.filter((d) => scope.check("write", d).allowed);
  const limits = [
    ...(writeAll ? [] : ["write access is limited"]),
    ...(network ? [] : ["network access is limited"]),
  ];
  return {
    confined: true,
    reason: limits.join(" and "),
    writable,
    readable,
    network,
    description: describe(writable, network),
  };
}

/** Options of {@link bwrapArgv}. */
export interface BwrapArgvOptions {
  /** Working directory of the command (inside the sandbox). */
  readonly cwd: string;
  /** Share dir whose config and credentials are hidden. */
  readonly shareDir: string;
  /** The bwrap program (default `bwrap`). */
  readonly bwrap?: string;
}

/**
 * The argument vector running `argv` confined by `plan`:
 * `bwrap --die-with-parent --unshare-pid [--unshare-net] --ro-bind / / --dev /dev --proc /proc
 * --tmpfs /tmp --bind <w> <w>... [--ro-bind <r> <r>...] --tmpfs <share>/credentials --dev-bind /dev/null
 * <share>/config.toml --chdir <cwd> -- <argv>`. Read-only binds bring back workspace dirs
 * (and `cwd`) that lie under `/tmp` without being writable (writable when the plan allows
 * writing anywhere). Writable paths that do not exist any more are
 * left out; secret share-dir entries are hidden only when they exist and would be visible.
 */
export function bwrapArgv(
  plan: ConfinementPlan,
  argv: readonly string[],
  opts: BwrapArgvOptions,
): string[] {
  const out = [opts.bwrap ?? "bwrap", "--die-with-parent", "--unshare-pid"];
  if (!plan.network) out.push("--unshare-net");
  const writeAll = plan.writable.includes("/");
  out.push(writeAll ? "--bind" : "--ro-bind", "/", "/");
  out.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp");
  const bound: string[] = [];
  if (!writeAll) {
    for (const w of plan.writable) {
      if (pathStatusSync(w) !== "directory") continue;
      out.push("--bind", w, w);
      bound.push(w);
    }
  }
  // Under the private /tmp only what is bound back is visible.
  const visible = (p: string) => !isWithin(p, "/tmp") || bound.some((b) => isWithin(p, b));
  for (const r of [...plan.readable, opts.cwd]) {
    if (visible(r) || pathStatusSync(r) !== "directory") continue;
    out.push(writeAll ? "--bind" : "--ro-bind", r, r);
    bound.push(r);
  }
  // Hiding an entry that is not visible would only create empty mount points.
  const share = opts.shareDir.replace(/\/+$/, "");
  for (const name of HIDDEN_SHARE_DIRS) {
    const p = `${share}/${name}`;
    if (visible(p) && kindOf(p) === "dir") out.push("--tmpfs", p);
  }
  for (const name of HIDDEN_SHARE_FILES) {
    const p = `${share}/${name}`;
    // `--dev-bind`: a plain bind of /dev/null would be `nodev` and unreadable. Reads give
    // nothing, writes vanish; the real file is untouched either way.
    if (visible(p) && kindOf(p) === "file") out.push("--dev-bind", "/dev/null", p);
  }
  out.push("--chdir", opts.cwd, "--", ...argv);
  return out;
}

/** Options of {@link installConfinement}. */
export interface InstallOptions {
  /** Absolute path of bwrap. */
  readonly bwrap: string;
  /** Share dir whose config and credentials are hidden. */
  readonly shareDir: string;
  /**
   * Re-plans before each command (e.g. because `/add-dir` added a writable directory);
   * the installed plan is used when omitted.
   */
  readonly replan?: () => ConfinementPlan;
}

/**
 * Make every Shell and background-task command run under bwrap as `plan` says (a plan that
 * is not confined restores the passthrough). Returns the previous wrapper's restorer.
 */
export function installConfinement(plan: ConfinementPlan, opts: InstallOptions): () => void {
  if (!plan.confined) {
    const previous = setCommandWrapper(null);
    return () => void setCommandWrapper(previous);
  }
  const previous = setCommandWrapper((argv, wrap) => {
    const current = opts.replan?.() ?? plan;
    return bwrapArgv(current, argv, { cwd: wrap.cwd, shareDir: opts.shareDir, bwrap: opts.bwrap });
  });
  return () => void setCommandWrapper(previous);
}
