/**
 * Running `<shell> -c <command>` in its own process group, streaming its output, with a
 * timeout and cancellation that take the whole group down.
 *
 * @module
 */
import { type CommandWrapper, wrapCommand } from "./command_wrapper.ts";
import { terminateProcessGroup } from "./process_group.ts";
import { FALLBACK_SHELL, resolveShell, type ShellInfo } from "./shell_info.ts";

/** Which pipe a chunk came from. */
export type OutputStream = "stdout" | "stderr";

/** How a shell process ended. */
export type ShellOutcome =
  /** The command exited by itself. */
  | ({ kind: "exited" } & ExitStatus)
  /** The timeout fired and the group was killed. */
  | ({ kind: "timeout" } & ExitStatus)
  /** {@link ShellProcess.terminate} or the abort signal stopped it. */
  | ({ kind: "terminated"; reason: unknown } & ExitStatus);

/** How the leader process ended (`signal` set when a signal ended it). */
export interface ExitStatus {
  /** Exit code as Deno reports it (128 + n for signal n). */
  code: number;
  /** The signal that ended the process, if any. */
  signal: Deno.Signal | null;
}

/**
 * The exit code as Python reports it: the negative signal number when a signal ended the
 * process, else the code.
 */
export function exitCodeOf(outcome: ExitStatus): number {
  if (outcome.signal !== null && outcome.code > 128) return -(outcome.code - 128);
  return outcome.code;
}

/** Options of {@link startShellProcess}. */
export interface ShellProcessOptions {
  /** The command line given to `-c`. */
  readonly command: string;
  /** Working directory. */
  readonly cwd: string;
  /** The complete child environment (nothing else is inherited). */
  readonly env: Readonly<Record<string, string>>;
  /** Shell to use; resolved with {@link resolveShell} when omitted. */
  readonly shell?: ShellInfo;
  /**
   * The exact argument vector to spawn, already wrapped (a background worker running what
   * its parent prepared); `command` and `shell` then only describe it.
   */
  readonly argv?: readonly string[];
  /**
   * The session's command wrapper (its sandbox); required unless `argv` is given. Without
   * either, nothing is spawned (fail closed).
   */
  readonly wrapper?: CommandWrapper;
  /** Kill the group after this many milliseconds (none when omitted). */
  readonly timeoutMs?: number;
  /** Aborting kills the group; the outcome is then `terminated` with the abort reason. */
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL (default 2000 ms). */
  readonly killGraceMs?: number;
  /** Receives output bytes as they arrive, in arrival order across both pipes. */
  readonly onData?: (chunk: Uint8Array, stream: OutputStream) => void;
}

/** A running shell command. */
export interface ShellProcess {
  /** Process id, which is also the process group id. */
  readonly pid: number;
  /** The shell actually used. */
  readonly shell: ShellInfo;
  /** Settles once the process has ended and both pipes are drained. Never rejects. */
  readonly done: Promise<ShellOutcome>;
  /** Kill the whole group (SIGTERM, then SIGKILL after the grace period). */
  terminate(reason?: unknown): Promise<ShellOutcome>;
}

const DEFAULT_GRACE_MS = 2000;
/** After the group was killed, how long pipes may stay open (held by an escaped process). */
const DRAIN_AFTER_KILL_MS = 1000;

function spawn(shell: ShellInfo, opts: ShellProcessOptions): Deno.ChildProcess {
  let argv: string[];
  if (opts.argv) argv = [...opts.argv];
  else if (opts.wrapper) {
    argv = wrapCommand(opts.wrapper, [shell.program, "-c", opts.command], {
      cwd: opts.cwd,
      env: opts.env,
    });
  } else throw new Error("No command wrapper: the session's sandbox was not given.");
  return new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: opts.cwd,
    env: { ...opts.env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
}

async function pump(
  stream: ReadableStream<Uint8Array>,
  name: OutputStream,
  onData: ShellProcessOptions["onData"],
  registerCancel: (cancel: () => void) => void,
): Promise<void> {
  const reader = stream.getReader();
  registerCancel(() => void reader.cancel().catch(() => {}));
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value && value.length > 0) onData?.(value, name);
    }
  } catch {
    // cancelled or broken pipe: stop reading
  } finally {
    reader.releaseLock();
  }
}

/**
 * Start `<shell> -c <command>` as the leader of a new process group, with stdin closed and
 * stdout/stderr streamed to `onData`. Throws when the process cannot be spawned.
 */
export function startShellProcess(opts: ShellProcessOptions): ShellProcess {
  let shell = opts.shell ?? resolveShell(opts.env.PATH);
  let child: Deno.ChildProcess;
  try {
    child = spawn(shell, opts);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound) || shell.program === FALLBACK_SHELL.program) throw e;
    shell = FALLBACK_SHELL;
    child = spawn(shell, opts);
  }
  const pid = child.pid;
  const graceMs = opts.killGraceMs ?? DEFAULT_GRACE_MS;
  const cancels: Array<() => void> = [];
  const pumps = Promise.all([
    pump(child.stdout, "stdout", opts.onData, (c) => cancels.push(c)),
    pump(child.stderr, "stderr", opts.onData, (c) => cancels.push(c)),
  ]);
  const status = child.status;

  type Stop = { kind: "timeout" } | { kind: "terminated"; reason: unknown };
  let stopped: Stop | null = null;
  let killing: Promise<void> | null = null;
  let finished = false;
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  const kill = (outcome: Stop): Promise<void> => {
    if (finished) return Promise.resolve();
    if (!stopped) stopped = outcome;
    killing ??= (async () => {
      await terminateProcessGroup(pid, {
        shellProgram: shell.program,
        leader: child,
        exited: status,
        graceMs,
      });
      // Whatever still holds the pipes escaped the group; stop waiting for it soon.
      drainTimer = setTimeout(() => cancels.forEach((c) => c()), DRAIN_AFTER_KILL_MS);
    })();
    return killing;
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  if (opts.timeoutMs !== undefined) {
    timer = setTimeout(() => void kill({ kind: "timeout" }), Math.max(0, opts.timeoutMs));
  }
  const onAbort = () => void kill({ kind: "terminated", reason: opts.signal?.reason });
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener("abort", onAbort, { once: true });

  const done = (async (): Promise<ShellOutcome> => {
    const st = await status;
    await pumps;
    if (!killing) finished = true;
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
    if (killing) await killing;
    clearTimeout(drainTimer);
    const exit: ExitStatus = { code: st.code, signal: st.signal };
    return stopped ? { ...(stopped as Stop), ...exit } : { kind: "exited", ...exit };
  })();

  return {
    pid,
    shell,
    done,
    terminate(reason?: unknown) {
      void kill({ kind: "terminated", reason });
      return done;
    },
  };
}
