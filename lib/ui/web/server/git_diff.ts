/**
 * `GET /api/sessions/{id}/git-diff`: the work dir's changes against `HEAD` (`git diff
 * --numstat HEAD` plus untracked files), with a time limit.
 *
 * @module
 */
import { join } from "node:path";
import type { GitDiffStats } from "./schemas.ts";

/** How long git may take. */
export const GIT_TIMEOUT_MS = 5000;

class GitTimeout extends Error {}

async function git(cwd: string, args: string[], signal: AbortSignal): Promise<string | null> {
  const child = new Deno.Command("git", {
    args: ["-c", "core.quotepath=off", ...args],
    cwd,
    stdout: "piped",
    stderr: "null",
    stdin: "null",
    env: { GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" },
  }).spawn();
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // exited
    }
  };
  signal.addEventListener("abort", kill);
  try {
    const out = await child.output();
    if (signal.aborted) throw new GitTimeout();
    return out.success ? new TextDecoder().decode(out.stdout) : null;
  } finally {
    signal.removeEventListener("abort", kill);
  }
}

type Change = GitDiffStats["files"][number]["change"];

const NAME_STATUS: Record<string, Change> = {
  A: "added",
  M: "modified",
  D: "deleted",
  T: "typechange",
  R: "renamed",
  C: "added",
};

/**
 * `git diff --name-status` lines → path → change. A rename or copy is keyed by the path
 * `--numstat` prints for it (`old => new`, with git's `{a => b}` shortening when the two share a
 * prefix or suffix): a rename found here but printed differently there falls back to the
 * `=>` test of the caller.
 */
export function parseNameStatus(out: string): Map<string, Change> {
  const map = new Map<string, Change>();
  for (const line of out.split("\n")) {
    const parts = line.split("\t");
    if (parts.length < 2) continue;
    const change = NAME_STATUS[parts[0][0]] ?? "modified";
    if (parts.length >= 3) map.set(`${parts[1]} => ${parts[2]}`, change);
    else map.set(parts[1], change);
  }
  return map;
}

/** The change statistics of `workDir` (`is_git_repo` only when `<workDir>/.git` exists). */
export async function gitDiffStats(workDir: string): Promise<GitDiffStats> {
  const empty: GitDiffStats = {
    is_git_repo: false,
    has_changes: false,
    total_additions: 0,
    total_deletions: 0,
    files: [],
    error: null,
  };
  try {
    await Deno.stat(join(workDir, ".git"));
  } catch {
    return empty;
  }
  const stats: GitDiffStats = { ...empty, is_git_repo: true };
  const signal = AbortSignal.timeout(GIT_TIMEOUT_MS);
  try {
    const hasHead = (await git(workDir, ["rev-parse", "--verify", "HEAD"], signal)) !== null;
    if (hasHead) {
      const [numstat, nameStatus] = await Promise.all([
        git(workDir, ["diff", "--numstat", "HEAD"], signal),
        git(workDir, ["diff", "--name-status", "HEAD"], signal),
      ]);
      const changes = parseNameStatus(nameStatus ?? "");
      for (const line of (numstat ?? "").split("\n")) {
        const m = /^(\d+|-)\t(\d+|-)\t(.+)$/.exec(line);
        if (!m) continue;
        const additions = m[1] === "-" ? 0 : Number(m[1]);
        const deletions = m[2] === "-" ? 0 : Number(m[2]);
        const status = deletions === 0 && additions > 0
          ? "added"
          : additions === 0 && deletions > 0
          ? "deleted"
          : "modified";
        const change = changes.get(m[3]) ?? (m[3].includes(" => ") ? "renamed" : "modified");
        stats.files.push({ path: m[3], additions, deletions, status, change });
        stats.total_additions += additions;
        stats.total_deletions += deletions;
      }
    }
    const untracked = await git(workDir, ["ls-files", "--others", "--exclude-standard"], signal) ??
      "";
    for (const path of untracked.split("\n")) {
      if (path) {
        stats.files.push({
          path,
          additions: 0,
          deletions: 0,
          status: "added",
          change: "untracked",
        });
      }
    }
  } catch (err) {
    if (err instanceof GitTimeout) return { ...stats, error: "Git command timed out" };
    return { ...stats, error: err instanceof Error ? err.message : String(err) };
  }
  stats.has_changes = stats.files.length > 0;
  return stats;
}
