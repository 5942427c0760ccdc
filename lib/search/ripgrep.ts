/**
 * The ripgrep engine of Grep: spawns the `rg` binary that `@vscode/ripgrep` ships, with the
 * reference's argument list, a timeout that keeps partial output, an output cap, and a kill on
 * abort.
 *
 * @module
 */
import {
  GREP_MAX_BUFFER,
  GREP_TIMEOUT_MS,
  type GrepEngineOptions,
  type GrepQuery,
  type GrepRun,
  VCS_DIRS,
} from "./grep_query.ts";

/** Grace period between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 5_000;

let rgPathPromise: Promise<string | null> | null = null;

/**
 * Path of the bundled `rg` binary, or `null` when the package or its platform binary is not
 * available. Loaded lazily so a run without it never fails at import time.
 */
export function findRipgrep(): Promise<string | null> {
  rgPathPromise ??= (async () => {
    try {
      const mod = await import("@vscode/ripgrep");
      const path = mod.rgPath as string;
      return Deno.statSync(path).isFile ? path : null;
    } catch {
      return null;
    }
  })();
  return rgPathPromise;
}

/** The ripgrep arguments for a query (without the program itself). */
export function buildRgArgs(q: GrepQuery, opts: { singleThreaded?: boolean } = {}): string[] {
  const args: string[] = [];
  if (q.outputMode !== "content") args.push("--max-columns", "500");
  args.push("--hidden");
  if (q.includeIgnored) args.push("--no-ignore");
  for (const dir of VCS_DIRS) args.push("--glob", `!${dir}`);
  if (opts.singleThreaded) args.push("-j", "1");
  if (q.ignoreCase) args.push("--ignore-case");
  if (q.multiline) args.push("--multiline", "--multiline-dotall");
  if (q.outputMode === "content") {
    if (q.before !== null) args.push("--before-context", String(q.before));
    if (q.after !== null) args.push("--after-context", String(q.after));
    if (q.context !== null) args.push("--context", String(q.context));
    if (q.lineNumber) args.push("--line-number");
  }
  if (q.glob) args.push("--glob", q.glob);
  if (q.type) args.push("--type", q.type);
  if (q.outputMode === "files_with_matches") args.push("--files-with-matches");
  else if (q.outputMode === "count_matches") args.push("--count-matches");
  args.push("--", q.pattern, q.path);
  return args;
}

/** Collects a stream up to a byte cap, draining (and dropping) the rest. */
class CappedSink {
  readonly chunks: Uint8Array[] = [];
  size = 0;
  truncated = false;
  constructor(readonly cap: number) {}

  push(chunk: Uint8Array): void {
    const room = this.cap - this.size;
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.size += room;
      this.truncated = true;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  text(): string {
    const all = new Uint8Array(this.size);
    let off = 0;
    for (const c of this.chunks) {
      all.set(c, off);
      off += c.length;
    }
    return new TextDecoder().decode(all);
  }
}

async function drain(stream: ReadableStream<Uint8Array>, sink: CappedSink): Promise<void> {
  const reader = stream.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      sink.push(value);
    }
  } catch {
    // The child was killed mid-read; keep what arrived.
  } finally {
    reader.releaseLock();
  }
}

function isEagain(stderr: string): boolean {
  return stderr.includes("os error 11") || stderr.includes("Resource temporarily unavailable");
}

/** Environment for rg: the caller's, without a ripgrep config file that would change flags. */
function rgEnv(base: Record<string, string>): Record<string, string> {
  const env = { ...base };
  delete env.RIPGREP_CONFIG_PATH;
  return env;
}

/** Options of {@link runRipgrep}. */
export interface RipgrepOptions extends GrepEngineOptions {
  /** Environment for the child (default: none besides what rg needs). */
  env?: Record<string, string>;
}

async function runOnce(
  rgPath: string,
  q: GrepQuery,
  opts: RipgrepOptions,
  singleThreaded: boolean,
): Promise<GrepRun> {
  opts.signal?.throwIfAborted();
  const child = new Deno.Command(rgPath, {
    args: buildRgArgs(q, { singleThreaded }),
    cwd: q.cwd,
    env: rgEnv(opts.env ?? {}),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = new CappedSink(opts.maxBuffer ?? GREP_MAX_BUFFER);
  const err = new CappedSink(opts.maxBuffer ?? GREP_MAX_BUFFER);
  let timedOut = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const kill = () => {
    try {
      child.kill("SIGTERM");
    } catch {
      return;
    }
    killTimer ??= setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }, KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, opts.timeoutMs ?? GREP_TIMEOUT_MS);
  const onAbort = () => kill();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const [status] = await Promise.all([
      child.status,
      drain(child.stdout, out),
      drain(child.stderr, err),
    ]);
    opts.signal?.throwIfAborted();
    return {
      stdout: out.text(),
      stderr: err.text(),
      exitCode: status.code,
      timedOut,
      bufferTruncated: out.truncated,
      blocks: null,
    };
  } finally {
    clearTimeout(timer);
    if (killTimer !== undefined) clearTimeout(killTimer);
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

/** Run ripgrep for a query; retries once single-threaded when rg hits EAGAIN. */
export async function runRipgrep(
  rgPath: string,
  q: GrepQuery,
  opts: RipgrepOptions = {},
): Promise<GrepRun> {
  const run = await runOnce(rgPath, q, opts, false);
  if (!run.timedOut && run.exitCode >= 2 && isEagain(run.stderr)) {
    return await runOnce(rgPath, q, opts, true);
  }
  return run;
}
