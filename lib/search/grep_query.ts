/**
 * What the Grep tool asks a search engine, and what an engine answers: the raw, ripgrep-shaped
 * output before the tool's post-processing.
 *
 * @module
 */

/** A Grep search, with ripgrep's flag semantics. */
export interface GrepQuery {
  /** Regular expression. */
  pattern: string;
  /** File or directory to search, as given (after `~` expansion); relative to {@link cwd}. */
  path: string;
  /** Directory the search runs in (the work dir). */
  cwd: string;
  /** Include/exclude glob (`--glob`), or null. */
  glob: string | null;
  /** `files_with_matches`, `content`, `count_matches` (anything else prints content). */
  outputMode: string;
  /** `-B`: lines before each match (content mode). */
  before: number | null;
  /** `-A`: lines after each match (content mode). */
  after: number | null;
  /** `-C`: lines around each match (content mode); `-A`/`-B` take precedence. */
  context: number | null;
  /** `-n`: print line numbers (content mode). */
  lineNumber: boolean;
  /** `-i`: case-insensitive. */
  ignoreCase: boolean;
  /** `--type`, or null. */
  type: string | null;
  /** `-U --multiline-dotall`. */
  multiline: boolean;
  /** `--no-ignore`. */
  includeIgnored: boolean;
}

/** The output of one file, as printed (separator lines inside it included). */
export interface GrepBlock {
  /** The path as printed at the start of each line ("" for a single-file search). */
  path: string;
  /** The printed lines. */
  lines: string[];
}

/** The raw result of an engine run. */
export interface GrepRun {
  /** Standard output (decoded). */
  stdout: string;
  /** Standard error (decoded). */
  stderr: string;
  /** ripgrep's exit code: 0 matches, 1 no match, 2 error. */
  exitCode: number;
  /** Whether the search was stopped by the timeout. */
  timedOut: boolean;
  /** Whether the output was cut at the buffer limit. */
  bufferTruncated: boolean;
  /** Output split per file when the engine knows it (else the post-processing parses it). */
  blocks: GrepBlock[] | null;
}

/** Options shared by the engines. */
export interface GrepEngineOptions {
  /** Cancels the search (the engine stops, kills children, and rejects). */
  signal?: AbortSignal;
  /** Stop after this many milliseconds, keeping partial results. Default 20 s. */
  timeoutMs?: number;
  /** Cap on collected output bytes. Default 20 MB. */
  maxBuffer?: number;
}

/** Default search timeout. */
export const GREP_TIMEOUT_MS = 20_000;
/** Default output buffer cap. */
export const GREP_MAX_BUFFER = 20_000_000;
/** Directories of version control systems, never searched. */
export const VCS_DIRS = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"] as const;

/** Effective `[before, after]` context lines (0 outside content mode). */
export function contextOf(q: GrepQuery): [number, number] {
  if (q.outputMode !== "content") return [0, 0];
  return [q.before ?? q.context ?? 0, q.after ?? q.context ?? 0];
}
