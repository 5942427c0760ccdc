/**
 * Process isolation: every child process kimi starts (Shell and background commands, hooks,
 * MCP stdio servers, plugin tools) runs in its own pid namespace with a fresh `/proc`, so it
 * cannot see kimi's `/proc/<pid>/environ` or `/proc/<pid>/mem` (and with them the API keys and
 * tokens kimi holds). File permissions cannot give that guarantee (a run as root reads every
 * process's `/proc`); only a pid namespace in which kimi's pid does not exist does.
 *
 * Without confinement the namespace is all that changes: the whole file system stays as it is
 * (`--dev-bind / /`), the network and the user's environment too. Confined commands get the
 * same through their own bubblewrap sandbox ({@link import("./confinement.ts").bwrapArgv}).
 *
 * @module
 */
import type { CommandWrapper } from "../process/command_wrapper.ts";
import type { PermissionScope } from "../tooling/scope.ts";
import { type BwrapLookup, type BwrapProblem, capDropArgs } from "./bwrap.ts";

/**
 * The argument vector running `argv` in a new pid namespace with a fresh `/proc` and nothing
 * else changed: `bwrap --die-with-parent --unshare-pid --cap-drop <cap>... --dev-bind / /
 * --proc /proc [--chdir <cwd>] -- argv...` (see {@link DROPPED_CAPABILITIES}).
 */
export function pidNamespaceArgv(
  bwrap: string,
  argv: readonly string[],
  cwd?: string,
): string[] {
  const out = [bwrap, "--die-with-parent", "--unshare-pid", ...capDropArgs()];
  out.push("--dev-bind", "/", "/");
  out.push("--proc", "/proc");
  if (cwd) out.push("--chdir", cwd);
  out.push("--", ...argv);
  return out;
}

/**
 * The command wrapper that runs every command in its own pid namespace
 * ({@link pidNamespaceArgv}). Deno checks only that bwrap may run, so the wrapper checks the
 * program itself against `scope` first and throws the denial (the floor of `--allow-run`
 * stays what it was without bwrap).
 */
export function pidNamespaceWrapper(bwrap: string, scope: PermissionScope): CommandWrapper {
  return (argv, opts) => {
    const program = argv[0] ?? "";
    const decision = scope.check("run", program);
    if (!decision.allowed) throw new Deno.errors.NotCapable(decision.message);
    return pidNamespaceArgv(bwrap, argv, opts.cwd);
  };
}

/**
 * Where `program` is found: itself when it names a path (containing `/`; a relative one
 * from `cwd`), else the first executable file of that name on `path` (a `PATH` value).
 * `null` when there is none.
 */
export function resolveProgram(
  program: string,
  path: string | undefined,
  cwd?: string,
): string | null {
  const executable = (p: string) => {
    try {
      const st = Deno.statSync(p);
      return st.isFile && (st.mode === null || (st.mode & 0o111) !== 0);
    } catch {
      return false;
    }
  };
  if (program.includes("/")) {
    const full = program.startsWith("/") || !cwd ? program : `${cwd}/${program}`;
    return executable(full) ? full : null;
  }
  for (const dir of (path || "/usr/local/bin:/usr/bin:/bin").split(":")) {
    const candidate = `${dir || "."}/${program}`;
    if (executable(candidate)) return candidate;
  }
  return null;
}

/** What to do about an unusable bwrap so the processes kimi starts are isolated, as one sentence. */
export function isolationFix(problem: BwrapProblem): string {
  switch (problem) {
    case "missing":
      return "Install bubblewrap (e.g. apt-get install bubblewrap) to run them in their own " +
        "pid namespace.";
    case "not_permitted":
      return "Allow running bwrap (--allow-run=bwrap) to run them in their own pid namespace.";
    case "broken":
      return "Enable unprivileged user namespaces (or run where bwrap works) to run them in " +
        "their own pid namespace.";
  }
}

/**
 * The one warning printed when the processes kimi starts cannot be isolated: names the cause
 * (bwrap missing, not allowed, or not working) and the fix.
 */
export function isolationWarning(lookup: BwrapLookup & { ok: false }): string {
  return "kimi: the processes kimi starts (shell commands, hooks, MCP servers, plugin tools) " +
    `are not isolated from it: ${lookup.detail}, so they can read kimi's environment ` +
    `through /proc/<pid>/environ. ${isolationFix(lookup.problem)}`;
}

/** What `kimi info --json` reports as `process_isolation`. */
export interface ProcessIsolationStatus {
  /** Whether child processes run in their own pid namespace (kimi's `/proc/<pid>` hidden). */
  isolated: boolean;
  /** Path of the bwrap used, or null. */
  bwrap: string | null;
  /** Why (not), with the fix when not. */
  reason: string;
}

/** The isolation a run with this bwrap lookup gives its child processes. */
export function processIsolationStatus(lookup: BwrapLookup): ProcessIsolationStatus {
  if (lookup.ok) {
    return {
      isolated: true,
      bwrap: lookup.path,
      reason: "shell commands, hooks, MCP servers and plugin tools run in their own pid " +
        "namespace with a fresh /proc: kimi's /proc/<pid>/environ and /proc/<pid>/mem are " +
        "not visible to them",
    };
  }
  return {
    isolated: false,
    bwrap: null,
    reason: `${lookup.detail}: processes kimi starts can read kimi's environment through ` +
      `/proc/<pid>/environ. ${isolationFix(lookup.problem)}`,
  };
}
