/**
 * Where Shell runs a foreground command: a local process (the default, see
 * `lib/process/shell_process.ts`) or a terminal the client owns (an ACP client offering
 * `terminal/*`, so the user watches the command in the editor).
 *
 * Shell checks the run permission and asks for approval *before* calling a backend.
 *
 * @module
 */
import type { OutputStream, ShellOutcome } from "../process/shell_process.ts";

/** What Shell hands a terminal backend. */
export interface TerminalRunOptions {
  /** Id of the Shell tool call (the client shows the terminal in that call). */
  readonly toolCallId: string;
  /** Program and arguments to run (already wrapped for confinement). */
  readonly argv: readonly string[];
  /** Working directory. */
  readonly cwd: string;
  /** Variables to set on top of the terminal's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Kill the command after this many milliseconds. */
  readonly timeoutMs: number;
  /** Aborting kills the command; the outcome is then `terminated`. */
  readonly signal: AbortSignal;
  /** Receives the command's output (once, when it has ended). */
  readonly onData: (chunk: Uint8Array, stream: OutputStream) => void;
}

/** A command running in a terminal backend. */
export interface TerminalRun {
  /** Settles once the command has ended and its output was delivered. Never rejects. */
  readonly done: Promise<ShellOutcome>;
}

/** Runs Shell's foreground commands somewhere other than a local child process. */
export interface TerminalBackend {
  /** Start a command; rejects when the terminal cannot be created. */
  start(opts: TerminalRunOptions): Promise<TerminalRun>;
}
