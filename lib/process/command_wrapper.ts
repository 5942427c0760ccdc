/**
 * The seam between "what to run" and "how it is spawned": every child process the Shell tool
 * and the background task manager start goes through {@link wrapCommand}, so a sandbox
 * (e.g. bubblewrap) can later prefix or rewrite the argument vector in one place without
 * touching the tools.
 *
 * The default wrapper returns the argument vector unchanged.
 *
 * @module
 */

/** What a wrapper may take into account when rewriting a command. */
export interface WrapOptions {
  /** Working directory the command runs in. */
  readonly cwd: string;
  /** Environment the command gets (already filtered). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Control paths this command may see although a sandbox masks them for others (a plugin's
   * own config file, which holds the values injected for it). Absolute paths.
   */
  readonly reveal?: readonly string[];
}

/** Rewrites an argument vector (`argv[0]` is the program) into the one actually spawned. */
export type CommandWrapper = (argv: readonly string[], opts: WrapOptions) => string[];

/** The wrapper that runs commands as given. */
export const PASSTHROUGH_WRAPPER: CommandWrapper = (argv) => [...argv];

let current: CommandWrapper = PASSTHROUGH_WRAPPER;

/**
 * The argument vector to spawn for `argv`, after the installed wrapper (if any) has had its
 * say. Throws when the wrapper returns an empty vector.
 */
export function wrapCommand(argv: readonly string[], opts: WrapOptions): string[] {
  const out = current(argv, opts);
  if (out.length === 0) throw new Error("Command wrapper returned an empty argument vector.");
  return out;
}

/**
 * Install the process-wide wrapper (e.g. a bubblewrap confinement); `null` restores the
 * passthrough. Returns the previously installed wrapper so callers (and tests) can restore it.
 */
export function setCommandWrapper(wrapper: CommandWrapper | null): CommandWrapper {
  const previous = current;
  current = wrapper ?? PASSTHROUGH_WRAPPER;
  return previous;
}
