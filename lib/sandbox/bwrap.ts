/**
 * Locating bubblewrap (`bwrap`) and checking that it can actually build a sandbox here.
 *
 * @module
 */
import type { PermissionScope } from "../tooling/scope.ts";

/** Reads one environment variable; `undefined` when unset or not readable. */
export type EnvReader = (name: string) => string | undefined;

/**
 * Environment variable that overrides the `PATH` lookup of bwrap with an explicit path (used
 * by tests to make bwrap unavailable). A path that is not an executable file means "missing".
 */
export const BWRAP_PATH_ENV = "KIMI_BWRAP_PATH";

/** Why bwrap cannot be used. */
export type BwrapProblem =
  /** Not found on `PATH` (or `KIMI_BWRAP_PATH` names no executable file). */
  | "missing"
  /** Found, but this run's permissions do not allow starting it. */
  | "not_permitted"
  /** Found and allowed, but it fails to create a sandbox (e.g. user namespaces disabled). */
  | "broken";

/** The outcome of looking for a usable bwrap. */
export type BwrapLookup =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly problem: BwrapProblem; readonly detail: string };

function safeEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && (st.mode === null || (st.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/**
 * The absolute path of an executable `bwrap`: `KIMI_BWRAP_PATH` when set, else the first
 * `bwrap` on `PATH` that is an executable file. `null` when there is none (or nothing can be
 * inspected for lack of read permission).
 */
export function findBwrap(getEnv: EnvReader = safeEnv): string | null {
  const override = getEnv(BWRAP_PATH_ENV);
  if (override !== undefined) {
    return override.startsWith("/") && isExecutableFile(override) ? override : null;
  }
  const path = getEnv("PATH") || "/usr/local/bin:/usr/bin:/bin";
  for (const dir of path.split(":")) {
    if (!dir.startsWith("/")) continue;
    const candidate = `${dir.replace(/\/+$/, "")}/bwrap`;
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * Capabilities a process run by root keeps under bwrap unless dropped, with which it could
 * leave the sandbox's view: unmount the fresh `/proc` (revealing the host's beneath) or
 * remount `/` writable (`CAP_SYS_ADMIN`), trace or read raw memory (`CAP_SYS_PTRACE`,
 * `CAP_SYS_RAWIO`), load kernel code (`CAP_SYS_MODULE`), or open files by handle past the
 * masks (`CAP_DAC_READ_SEARCH`). Every other power of root stays (writing any file, chown).
 * Without root, bwrap's processes have no capabilities anyway.
 */
export const DROPPED_CAPABILITIES: readonly string[] = [
  "CAP_SYS_ADMIN",
  "CAP_SYS_PTRACE",
  "CAP_SYS_RAWIO",
  "CAP_SYS_MODULE",
  "CAP_DAC_READ_SEARCH",
];

/** `--cap-drop <cap>` for each of {@link DROPPED_CAPABILITIES}. */
export function capDropArgs(): string[] {
  return DROPPED_CAPABILITIES.flatMap((c) => ["--cap-drop", c]);
}

/** The probe's outcome: `null` when bwrap works, else why not. */
type ProbeFailure = { notFound: boolean; message: string } | null;

async function probe(path: string): Promise<ProbeFailure> {
  try {
    const out = await new Deno.Command(path, {
      args: [
        "--die-with-parent",
        "--unshare-pid",
        ...capDropArgs(),
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--",
        "true",
      ],
      clearEnv: true,
      env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (out.success) return null;
    const first = new TextDecoder().decode(out.stderr).trim().split("\n")[0];
    return { notFound: false, message: first || `bwrap exited with code ${out.code}` };
  } catch (e) {
    return {
      notFound: e instanceof Deno.errors.NotFound,
      message: e instanceof Error ? e.message : String(e),
    };
  }
}

/**
 * Whether `bwrap` at `path` (or found on `PATH` by name) can build the kind of sandbox used
 * for shell commands: runs `bwrap --unshare-pid --ro-bind / / --proc /proc --dev /dev -- true`
 * once. Resolves with `null` on success, else with the first line of bwrap's complaint.
 */
export async function probeBwrap(path: string): Promise<string | null> {
  return (await probe(path))?.message ?? null;
}

/**
 * A bwrap lookup whose probe is already running: {@link startBwrapLookup} starts it as early
 * as possible (the probe is a child process of 10–20 ms, which then runs beside the rest of a
 * session's set-up instead of before it), {@link PendingBwrapLookup.result} judges it against
 * the session's scope.
 */
export interface PendingBwrapLookup {
  /** The outcome for a run that may do what `scope` allows. Never rejects. */
  result(scope: PermissionScope): Promise<BwrapLookup>;
}

function runPermitted(path: string): boolean {
  try {
    return Deno.permissions.querySync({ name: "run", command: path }).state === "granted";
  } catch {
    return false;
  }
}

/**
 * Find bwrap and start its probe now, if Deno lets this process run it (a denied permission
 * is never prompted for; the probe then does not run). When bwrap cannot be found by looking
 * at `PATH` (e.g. `--allow-run=bwrap` without read permission on `/usr/bin`), it is spawned
 * by name, so detection needs only run permission.
 */
export function startBwrapLookup(getEnv: EnvReader = safeEnv): PendingBwrapLookup {
  const found = findBwrap(getEnv);
  const path = found ?? (getEnv(BWRAP_PATH_ENV) === undefined ? "bwrap" : null);
  const probed = path !== null && runPermitted(path) ? probe(path) : null;
  return {
    async result(scope) {
      if (path === null) {
        return { ok: false, problem: "missing", detail: "bubblewrap (bwrap) was not found" };
      }
      if (!scope.check("run", path).allowed || probed === null) {
        return {
          ok: false,
          problem: "not_permitted",
          detail: `this run may not start ${path} (needs --allow-run=${path})`,
        };
      }
      const failure = await probed;
      if (failure?.notFound) {
        return { ok: false, problem: "missing", detail: "bubblewrap (bwrap) was not found" };
      }
      if (failure !== null) {
        return {
          ok: false,
          problem: "broken",
          detail: `${path} cannot create a sandbox: ${failure.message}`,
        };
      }
      return { ok: true, path };
    },
  };
}

/**
 * Find bwrap, check that this run may start it (`scope`), and that it works. Never throws.
 * See {@link startBwrapLookup}.
 */
export function lookupBwrap(
  scope: PermissionScope,
  getEnv: EnvReader = safeEnv,
): Promise<BwrapLookup> {
  return startBwrapLookup(getEnv).result(scope);
}

/** What to do about an unusable bwrap, as one sentence. */
export function bwrapFix(problem: BwrapProblem): string {
  switch (problem) {
    case "missing":
      return "Install it (e.g. apt-get install bubblewrap) to confine them.";
    case "not_permitted":
      return "Allow running bwrap (--allow-run) to confine them.";
    case "broken":
      return "Enable unprivileged user namespaces (or run where bwrap works) to confine them.";
  }
}
