/**
 * The seam between "what to run" and "how it is spawned": every child process the Shell tool
 * and the background task manager start goes through a session's {@link CommandWrapper}, so a
 * sandbox (e.g. bubblewrap) can prefix or rewrite the argument vector in one place without
 * touching the tools.
 *
 * A wrapper is a value of one session (its sandbox plan), never process-wide state: two
 * sessions in one process each spawn through their own.
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

/** The wrapper that runs commands as given (a session whose commands need no confinement). */
export const PASSTHROUGH_WRAPPER: CommandWrapper = (argv) => [...argv];

/**
 * The argument vector to spawn for `argv` after `wrapper` (the session's) has had its say.
 * Throws when the wrapper returns an empty vector (or refuses, e.g. confinement required but
 * unavailable).
 */
export function wrapCommand(
  wrapper: CommandWrapper,
  argv: readonly string[],
  opts: WrapOptions,
): string[] {
  const out = wrapper(argv, opts);
  if (out.length === 0) throw new Error("Command wrapper returned an empty argument vector.");
  return out;
}

/** A wrapper that refuses every command with `message` (confinement required, unavailable). */
export function refusingWrapper(message: string): CommandWrapper {
  return () => {
    throw new Error(message);
  };
}
