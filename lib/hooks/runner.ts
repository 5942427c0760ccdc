/**
 * Running one configured hook command (`[[hooks]]` in config) and reading its verdict.
 *
 * The command runs through `bash -c` in the work dir with the JSON description of the event
 * on stdin. Its verdict follows the reference's convention:
 * - exit code 2 → block, the reason is stderr (trimmed);
 * - exit code 0 with a JSON object on stdout whose `hookSpecificOutput.permissionDecision`
 *   is `"deny"` → block, the reason is `hookSpecificOutput.permissionDecisionReason`;
 * - anything else (other exit codes, no/invalid JSON, a spawn failure, a timeout) → allow.
 *
 * @module
 */
import { type CommandWrapper, wrapCommand } from "../process/command_wrapper.ts";
import { resolveShell } from "../process/shell_info.ts";
import { signalProcessGroup } from "../process/process_group.ts";

/** A hook's decision. */
export type HookAction = "allow" | "block";

/** The result of one hook run. */
export interface HookResult {
  /** Allow or block. */
  action: HookAction;
  /** Why it blocked ("" when allowing or when no reason was given). */
  reason: string;
  /** Captured stdout (empty for wire hooks). */
  stdout: string;
  /** Captured stderr (or the spawn error). */
  stderr: string;
  /** Exit code (0 for wire hooks and failures). */
  exitCode: number;
  /** Whether the hook ran out of time (always allows). */
  timedOut: boolean;
}

/** Options of {@link runHookCommand}. */
export interface RunHookOptions {
  /** Seconds before the command is killed (the hook then allows). */
  timeoutS: number;
  /** Working directory. */
  cwd: string;
  /** Complete environment of the child (secrets already removed). */
  env: Record<string, string>;
  /** Aborts the command (e.g. the turn was cancelled); the promise then rejects. */
  signal?: AbortSignal;
  /**
   * How the command is spawned (the session's process isolation: its own pid namespace, so
   * it cannot read kimi's `/proc/<pid>/environ`). Default: as given.
   */
  wrapper?: CommandWrapper;
}

/** An "allow" result with these fields overridden. */
export function allowResult(over: Partial<HookResult> = {}): HookResult {
  return {
    action: "allow",
    reason: "",
    stdout: "",
    stderr: "",
    exitCode: 0,
    timedOut: false,
    ...over,
  };
}

/** Read the verdict of a finished command from its exit code and output. */
export function interpretHookOutput(exitCode: number, stdout: string, stderr: string): HookResult {
  if (exitCode === 2) {
    return { ...allowResult({ stdout, stderr, exitCode }), action: "block", reason: stderr.trim() };
  }
  if (exitCode === 0 && stdout.trim()) {
    try {
      const parsed: unknown = JSON.parse(stdout);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        const specific = (parsed as Record<string, unknown>).hookSpecificOutput;
        if (specific && typeof specific === "object") {
          const out = specific as Record<string, unknown>;
          if (out.permissionDecision === "deny") {
            const reason = out.permissionDecisionReason;
            return {
              ...allowResult({ stdout, stderr, exitCode }),
              action: "block",
              reason: reason === undefined || reason === null ? "" : String(reason),
            };
          }
        }
      }
    } catch {
      // not JSON: plain output, allow
    }
  }
  return allowResult({ stdout, stderr, exitCode });
}

const decoder = new TextDecoder();

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  let size = 0;
  for (const c of chunks) size += c.length;
  const all = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  return decoder.decode(all);
}

/**
 * Run a hook command with `input` as JSON on stdin. Fails open: a command that cannot be
 * started, times out or misbehaves allows. Rejects only when `signal` aborts.
 */
export async function runHookCommand(
  command: string,
  input: Record<string, unknown>,
  opts: RunHookOptions,
): Promise<HookResult> {
  const shell = resolveShell(opts.env.PATH);
  let child: Deno.ChildProcess;
  try {
    const argv = opts.wrapper
      ? wrapCommand(opts.wrapper, [shell.program, "-c", command], { cwd: opts.cwd, env: opts.env })
      : [shell.program, "-c", command];
    child = new Deno.Command(argv[0], {
      args: argv.slice(1),
      cwd: opts.cwd,
      env: opts.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
  } catch (err) {
    return allowResult({ stderr: (err as Error).message });
  }
  const kill = () =>
    signalProcessGroup(child.pid, "SIGKILL", { shellProgram: shell.program, leader: child });

  const stdoutP = readAll(child.stdout).catch(() => "");
  const stderrP = readAll(child.stderr).catch(() => "");
  const writing = (async () => {
    const writer = child.stdin.getWriter();
    try {
      await writer.write(new TextEncoder().encode(JSON.stringify(input)));
      await writer.close();
    } catch {
      // the command did not read its stdin: fine
    }
  })();

  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), opts.timeoutS * 1000);
  });
  const aborted = new Promise<"aborted">((resolve) => {
    if (!opts.signal) return;
    if (opts.signal.aborted) resolve("aborted");
    onAbort = () => resolve("aborted");
    opts.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const outcome = await Promise.race([child.status, timedOut, aborted]);
    if (outcome === "timeout" || outcome === "aborted") {
      await kill();
      await child.status.catch(() => {});
      await Promise.allSettled([stdoutP, stderrP, writing]);
      if (outcome === "aborted") throw opts.signal?.reason ?? new Error("hook aborted");
      return allowResult({ timedOut: true });
    }
    const [stdout, stderr] = await Promise.all([stdoutP, stderrP, writing]);
    return interpretHookOutput(outcome.code, stdout, stderr);
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
  }
}
