/**
 * Wall-clock timing of child processes, measured from just before `spawn()` in this process.
 *
 * @module
 */

/** Options of {@link timeToExit}. */
export interface SpawnOptions {
  /** Executable; default the running `deno`. */
  command?: string;
  /** Arguments. */
  args: string[];
  /** Working directory. */
  cwd?: string;
  /** Environment overrides (merged into this process's environment). */
  env?: Record<string, string>;
}

/** Timing of one child run. */
export interface ExitTiming {
  /** Milliseconds from spawn to exit. */
  ms: number;
  /** Exit code. */
  code: number;
  /** Captured stdout. */
  stdout: string;
  /** Captured stderr. */
  stderr: string;
}

/** Spawn a child and time it from spawn to exit (stdout/stderr are captured). */
export async function timeToExit(opts: SpawnOptions): Promise<ExitTiming> {
  const cmd = new Deno.Command(opts.command ?? Deno.execPath(), {
    args: opts.args,
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const t0 = performance.now();
  const out = await cmd.output();
  const ms = performance.now() - t0;
  const dec = new TextDecoder();
  return { ms, code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
