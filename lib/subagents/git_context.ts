/**
 * The `<git-context>` block prepended to the first prompt of a new `explore` subagent: the
 * work dir, the branch, the dirty files (`git status --porcelain`, capped) and the recent
 * commits. Empty when the work dir is not a git repository, running `git` is not permitted,
 * or nothing useful was collected (reference §7.10).
 *
 * @module
 */
import { type CommandWrapper, wrapCommand } from "../process/command_wrapper.ts";
import type { PermissionScope } from "../tooling/scope.ts";

/** Dirty files listed before `... and N more`. */
export const MAX_DIRTY_FILES = 20;
/** Recent commits listed. */
export const RECENT_COMMITS = 3;
/** Longest a single git command may take. */
const GIT_TIMEOUT_MS = 5000;

/** Options of {@link collectGitContext}. */
export interface GitContextOptions {
  /** The work dir. */
  workDir: string;
  /** Permission scope (git must be runnable). */
  scope: PermissionScope;
  /** Child process environment. */
  env?: Record<string, string>;
  /**
   * How git is spawned: the session's command wrapper (a repository's config can make git run
   * programs, e.g. `core.fsmonitor`, so they get the sandbox or pid namespace Shell commands
   * get). A wrapper that refuses leaves the context empty. Default: as given.
   */
  wrapper?: CommandWrapper;
}

async function runGit(
  args: string[],
  opts: GitContextOptions,
): Promise<string | null> {
  try {
    const given = ["git", "-C", opts.workDir, ...args];
    const argv = opts.wrapper
      ? wrapCommand(opts.wrapper, given, { cwd: opts.workDir, env: opts.env ?? {} })
      : given;
    const out = await new Deno.Command(argv[0], {
      args: argv.slice(1),
      cwd: opts.workDir,
      env: opts.env,
      clearEnv: opts.env !== undefined,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      signal: AbortSignal.timeout(GIT_TIMEOUT_MS),
    }).output();
    if (!out.success) return null;
    return new TextDecoder().decode(out.stdout).trimEnd();
  } catch {
    return null;
  }
}

/** The `<git-context>` block for `workDir`, or "" (never throws). */
export async function collectGitContext(opts: GitContextOptions): Promise<string> {
  if (!opts.scope.check("run", "git").allowed) return "";
  if ((await runGit(["rev-parse", "--is-inside-work-tree"], opts)) !== "true") return "";
  const [branch, dirty, log] = await Promise.all([
    runGit(["branch", "--show-current"], opts),
    runGit(["status", "--porcelain"], opts),
    runGit(["log", `-${RECENT_COMMITS}`, "--format=%h %s"], opts),
  ]);
  const sections = [`Working directory: ${opts.workDir}`];
  if (branch) sections.push(`Branch: ${branch}`);
  const dirtyLines = (dirty ?? "").split("\n").filter((l) => l.trim());
  if (dirtyLines.length > 0) {
    let body = dirtyLines.slice(0, MAX_DIRTY_FILES).map((l) => `  ${l}`).join("\n");
    if (dirtyLines.length > MAX_DIRTY_FILES) {
      body += `\n  ... and ${dirtyLines.length - MAX_DIRTY_FILES} more`;
    }
    sections.push(`Dirty files (${dirtyLines.length}):\n${body}`);
  }
  const logLines = (log ?? "").split("\n").filter((l) => l.trim());
  if (logLines.length > 0) {
    sections.push(`Recent commits:\n${logLines.map((l) => `  ${l.slice(0, 200)}`).join("\n")}`);
  }
  if (sections.length <= 1) return "";
  return `<git-context>\n${sections.join("\n")}\n</git-context>`;
}
