/**
 * Signalling a whole process group, so a command's children and grandchildren die with it.
 *
 * Children are spawned with `detached: true`, which makes each one the leader of a new
 * session and process group (pgid = pid). `Deno.kill(-pgid)` needs unrestricted `--allow-run`;
 * under a narrower run permission the signal is sent by the shell's `kill` builtin instead
 * (the shell is a program this run may start), and as a last resort only the leader is
 * signalled.
 *
 * @module
 */

/** Signals used to stop a group. */
export type GroupSignal = "SIGTERM" | "SIGKILL";

/** Options of {@link signalProcessGroup}. */
export interface SignalGroupOptions {
  /** Shell program whose `kill` builtin is the fallback (e.g. `bash` or `/bin/sh`). */
  readonly shellProgram: string;
  /** The group leader, signalled directly when the group cannot be reached. */
  readonly leader?: Deno.ChildProcess;
}

/** Send `signal` to every process of group `pgid`. Never throws. */
export async function signalProcessGroup(
  pgid: number,
  signal: GroupSignal,
  opts: SignalGroupOptions,
): Promise<void> {
  if (!Number.isInteger(pgid) || pgid <= 1) return;
  try {
    Deno.kill(-pgid, signal);
    return;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotCapable) && !(e instanceof Deno.errors.PermissionDenied)) {
      return; // ESRCH and friends: nothing left to signal
    }
  }
  try {
    const name = signal.slice(3);
    await new Deno.Command(opts.shellProgram, {
      args: ["-c", `kill -s ${name} -- -${pgid} 2>/dev/null; exit 0`],
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return;
  } catch {
    // fall through to the leader
  }
  try {
    opts.leader?.kill(signal);
  } catch {
    // already gone
  }
}

/** Options of {@link terminateProcessGroup}. */
export interface TerminateOptions extends SignalGroupOptions {
  /** Resolves when the leader has exited. */
  readonly exited: Promise<unknown>;
  /** Time between SIGTERM and SIGKILL. */
  readonly graceMs: number;
}

/**
 * Stop a group: SIGTERM to all of it, wait for the leader up to `graceMs`, then SIGKILL to
 * whatever is left of the group (a no-op when it is already empty).
 */
export async function terminateProcessGroup(pgid: number, opts: TerminateOptions): Promise<void> {
  await signalProcessGroup(pgid, "SIGTERM", opts);
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    opts.exited.catch(() => {}),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, opts.graceMs)))),
  ]);
  clearTimeout(timer);
  await signalProcessGroup(pgid, "SIGKILL", opts);
}
