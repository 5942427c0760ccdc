/**
 * Running one plugin tool call (reference §A3): the tool's argv (no shell) in its own process
 * group, through the session's command wrapper (bubblewrap confinement like Shell), the arguments
 * as JSON on stdin, output kept up to a cap while the rest is drained, a timeout and
 * cancellation that kill the whole group.
 *
 * @module
 */
import { type CommandWrapper, wrapCommand } from "../process/command_wrapper.ts";
import { terminateProcessGroup } from "../process/process_group.ts";
import { resolveShell } from "../process/shell_info.ts";

/** Options of {@link runPluginProcess}. */
export interface PluginProcessOptions {
  /** The session's command wrapper (its sandbox plan). */
  readonly wrapper: CommandWrapper;
  /** The tool's `command` (argv; `argv[0]` is looked up on PATH). */
  readonly argv: readonly string[];
  /** Working directory (the installed plugin's directory). */
  readonly cwd: string;
  /** The complete environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Bytes written to stdin, then EOF. */
  readonly input: Uint8Array;
  /** Kill the group after this many milliseconds. */
  readonly timeoutMs: number;
  /** Aborting kills the group; the outcome is then `aborted`. */
  readonly signal: AbortSignal;
  /** Most stdout/stderr bytes kept each (the rest is read and dropped). */
  readonly maxBytes: number;
  /** Control paths the sandbox shows this process (its own config file). */
  readonly reveal?: readonly string[];
  /** SIGTERM → SIGKILL grace period (default 2000 ms). */
  readonly killGraceMs?: number;
}

/** How the process ended. */
export interface PluginProcessResult {
  /** `exited` by itself, killed on `timeout`, or `aborted` (cancelled). */
  readonly kind: "exited" | "timeout" | "aborted";
  /** Exit code as Python reports it (negative signal number when a signal ended it). */
  readonly code: number;
  /** Kept stdout bytes. */
  readonly stdout: Uint8Array;
  /** Kept stderr bytes. */
  readonly stderr: Uint8Array;
  /** Whether stdout was longer than what was kept. */
  readonly truncated: boolean;
}

/** After the group was killed, how long pipes may stay open (held by an escaped process). */
const DRAIN_AFTER_KILL_MS = 1000;

class Capped {
  readonly chunks: Uint8Array[] = [];
  size = 0;
  truncated = false;
  constructor(readonly max: number) {}
  push(c: Uint8Array): void {
    const room = this.max - this.size;
    if (room <= 0) {
      this.truncated ||= c.length > 0;
      return;
    }
    const kept = c.length > room ? c.subarray(0, room) : c;
    if (kept.length < c.length) this.truncated = true;
    this.chunks.push(kept.slice());
    this.size += kept.length;
  }
  bytes(): Uint8Array {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

async function pump(
  stream: ReadableStream<Uint8Array>,
  sink: Capped,
  cancels: (() => void)[],
): Promise<void> {
  const reader = stream.getReader();
  cancels.push(() => void reader.cancel().catch(() => {}));
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      if (value) sink.push(value);
    }
  } catch {
    // cancelled or broken pipe
  } finally {
    reader.releaseLock();
  }
}

/**
 * Run the process to its end. Throws when it cannot be spawned (program not found, a run
 * permission missing, confinement required but unavailable).
 */
export async function runPluginProcess(opts: PluginProcessOptions): Promise<PluginProcessResult> {
  const argv = wrapCommand(opts.wrapper, opts.argv, {
    cwd: opts.cwd,
    env: opts.env,
    reveal: opts.reveal,
  });
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: opts.cwd,
    env: { ...opts.env },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const out = new Capped(opts.maxBytes);
  const err = new Capped(opts.maxBytes);
  const cancels: (() => void)[] = [];
  const pumps = Promise.all([pump(child.stdout, out, cancels), pump(child.stderr, err, cancels)]);
  const writer = child.stdin.getWriter();
  // a process that exits without reading its input is not an error
  const fed = writer.write(opts.input).then(() => writer.close()).catch(() => {});
  const status = child.status;
  let stop: "timeout" | "aborted" | null = null;
  let killing: Promise<void> | null = null;
  let drainTimer: ReturnType<typeof setTimeout> | undefined;
  const kill = (why: "timeout" | "aborted") => {
    stop ??= why;
    killing ??= (async () => {
      await terminateProcessGroup(child.pid, {
        shellProgram: resolveShell(opts.env.PATH).program,
        leader: child,
        exited: status,
        graceMs: opts.killGraceMs ?? 2000,
      });
      drainTimer = setTimeout(() => cancels.forEach((c) => c()), DRAIN_AFTER_KILL_MS);
    })();
  };
  const timer = setTimeout(() => kill("timeout"), opts.timeoutMs);
  const onAbort = () => kill("aborted");
  if (opts.signal.aborted) onAbort();
  else opts.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const st = await status;
    if (stop === null) {
      // The leader is gone; what still holds the pipes is a process it left behind in its
      // group: give it a moment, then kill the group and stop reading.
      let wait: ReturnType<typeof setTimeout> | undefined;
      const drained = await Promise.race([
        pumps.then(() => true),
        new Promise<false>((r) => (wait = setTimeout(() => r(false), DRAIN_AFTER_KILL_MS))),
      ]);
      clearTimeout(wait);
      if (!drained) {
        await terminateProcessGroup(child.pid, {
          shellProgram: resolveShell(opts.env.PATH).program,
          exited: Promise.resolve(),
          graceMs: 0,
        }).catch(() => {});
        cancels.forEach((c) => c());
      }
    }
    await pumps;
    await fed;
    if (killing) await killing;
    const code = st.signal !== null && st.code > 128 ? -(st.code - 128) : st.code;
    return {
      kind: stop ?? "exited",
      code,
      stdout: out.bytes(),
      stderr: err.bytes(),
      truncated: out.truncated,
    };
  } finally {
    clearTimeout(timer);
    clearTimeout(drainTimer);
    opts.signal.removeEventListener("abort", onAbort);
  }
}
