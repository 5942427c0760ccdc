/**
 * The permissions `kimi` needs before it can do anything useful: read its own modules, find the
 * share dir (env `HOME` or `KIMI_SHARE_DIR`) and read and write it. Checked at start-up so a
 * run without them ends at once with one clear message instead of a stack trace or a prompt.
 *
 * This module is imported statically by `main.ts`: it has no imports, so it costs nothing on the
 * `--version` fast path.
 *
 * @module
 */

/** One permission the run lacks. */
export interface MissingPermission {
  /** Kind of access. */
  kind: "read" | "write" | "env";
  /** The path or variable (may be a `$HOME/.kimi` spelling when HOME cannot be read). */
  target: string;
  /** What kimi needs it for. */
  why: string;
}

/** Asks for the state of one permission; `prompt` counts as not granted. */
export type StartupQuery = (desc: Deno.PermissionDescriptor) => Deno.PermissionState;

/** Options of {@link missingStartupPermissions}. */
export interface StartupCheckOptions {
  /** Directory holding the program's modules (`null` when they are not local files). */
  programDir: string | null;
  /** Whether this invocation runs an agent (and so needs the share dir). */
  needsShareDir: boolean;
  /** Permission query; defaults to `Deno.permissions.querySync`. */
  query?: StartupQuery;
  /** Reads a granted environment variable; defaults to `Deno.env.get`. */
  getEnv?: (name: string) => string | undefined;
}

function isGranted(query: StartupQuery, desc: Deno.PermissionDescriptor): boolean {
  try {
    return query(desc) === "granted";
  } catch {
    return false;
  }
}

function joinPath(dir: string, name: string): string {
  return dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

/** The permissions from the start-up set that this run lacks (empty when all are granted). */
export function missingStartupPermissions(opts: StartupCheckOptions): MissingPermission[] {
  const query = opts.query ?? ((d) => Deno.permissions.querySync(d).state);
  const getEnv = opts.getEnv ?? ((n) => Deno.env.get(n));
  const missing: MissingPermission[] = [];
  if (opts.programDir !== null && !isGranted(query, { name: "read", path: opts.programDir })) {
    const dir = opts.programDir.length > 1 ? opts.programDir.replace(/\/+$/, "") : opts.programDir;
    missing.push({ kind: "read", target: dir, why: "its own modules" });
  }
  if (!opts.needsShareDir) return missing;

  const readVar = (name: string): string | undefined =>
    isGranted(query, { name: "env", variable: name }) ? getEnv(name) || undefined : undefined;
  let share: string | null = null;
  const configured = readVar("KIMI_SHARE_DIR");
  const home = readVar("HOME");
  if (configured && configured !== "~" && !configured.startsWith("~/")) share = configured;
  else if (home) share = configured ? home + configured.slice(1) : joinPath(home, ".kimi");
  if (share === null) {
    missing.push({ kind: "env", target: "HOME", why: "to locate the share dir" });
  }
  const shareTarget = share ?? "$HOME/.kimi";
  const why = "the share dir";
  if (!isGranted(query, { name: "read", path: share ?? undefined })) {
    missing.push({ kind: "read", target: shareTarget, why });
  }
  if (!isGranted(query, { name: "write", path: share ?? undefined })) {
    missing.push({ kind: "write", target: shareTarget, why });
  }
  return missing;
}

/** The `--allow-*` flags that grant `missing`, one per kind. */
export function grantingFlags(missing: readonly MissingPermission[]): string[] {
  const byKind = new Map<string, string[]>();
  for (const m of missing) {
    const list = byKind.get(m.kind) ?? [];
    if (!list.includes(m.target)) list.push(m.target);
    byKind.set(m.kind, list);
  }
  return [...byKind].map(([kind, targets]) => `--allow-${kind}=${targets.join(",")}`);
}

function describe(m: MissingPermission): string {
  const what = m.kind === "env"
    ? `read the environment variable \`${m.target}\``
    : `${m.kind} \`${m.target}\``;
  return `${what} (${m.why})`;
}

/** The one-paragraph message for a run that lacks start-up permissions. */
export function startupPermissionMessage(missing: readonly MissingPermission[]): string {
  return "kimi cannot start: Deno did not grant this run the permissions it needs to " +
    `${missing.map(describe).join(", ")}. Run it again with ` +
    `${grantingFlags(missing).join(" ")} (kimi never shows Deno's permission prompt), or use ` +
    "a permission profile: `deno task review`, `deno task workspace` or `deno task full` " +
    '(see "Permission profiles" in README.md).';
}

/** Whether a command line runs an agent (so needs the share dir) rather than help or info. */
export function runsAgent(args: readonly string[]): boolean {
  if (args[0] === "info") return false;
  return !args.some((a) => a === "-h" || a === "--help" || a === "--version" || a === "-V");
}

/**
 * The start-up check for `main.ts`: `null` when the run may proceed, else the message to print
 * before exiting non-zero.
 */
export function startupPermissionProblem(
  args: readonly string[],
  programDir: string | null,
): string | null {
  const missing = missingStartupPermissions({ programDir, needsShareDir: runsAgent(args) });
  return missing.length === 0 ? null : startupPermissionMessage(missing);
}
