/**
 * Which shell runs commands: bash when present, `/bin/sh` otherwise.
 *
 * @module
 */
import { pathStatusSync } from "../fs/exists.ts";

/** The shell used for `-c <command>`. */
export interface ShellInfo {
  /** Shell name shown to the model: `bash` or `sh`. */
  readonly name: "bash" | "sh";
  /** What is spawned: a bare name (resolved by Deno against the allowed programs) or a path. */
  readonly program: string;
  /** Best-known absolute path, used for `SHELL` and in descriptions. */
  readonly path: string;
}

/** The POSIX shell used when bash cannot be found. */
export const FALLBACK_SHELL: ShellInfo = { name: "sh", program: "/bin/sh", path: "/bin/sh" };

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * Find bash on `pathEnv` (a `PATH` value; defaults to the usual system directories). On
 * Windows, Git Bash (see {@link findGitBash}; `bash.exe` by name when none is found, the
 * start-up check having said so).
 * When nothing can be inspected (no read permission) bash is assumed and spawned by name;
 * {@link startShellProcess} falls back to `/bin/sh` if spawning it fails with "not found".
 */
export function resolveShell(pathEnv?: string): ShellInfo {
  if (Deno.build.os === "windows") {
    const found = findGitBash(processGitBashSearch());
    const path = "path" in found ? found.path : "bash.exe";
    return { name: "bash", program: path, path };
  }
  let unknown = false;
  for (const dir of (pathEnv || DEFAULT_PATH).split(":")) {
    if (!dir.startsWith("/")) continue;
    const candidate = `${dir.replace(/\/+$/, "")}/bash`;
    const status = pathStatusSync(candidate);
    if (status === "file") return { name: "bash", program: "bash", path: candidate };
    if (status === "denied") unknown = true;
  }
  if (unknown) return { name: "bash", program: "bash", path: "/bin/bash" };
  return FALLBACK_SHELL;
}

/** The environment variable naming Git Bash's `bash.exe` on Windows (the reference's). */
export const GIT_BASH_PATH_ENV = "KIMI_CLI_GIT_BASH_PATH";

/** What {@link findGitBash} may look at. */
export interface GitBashSearch {
  /** Environment (`KIMI_CLI_GIT_BASH_PATH`, `PATH`, `ProgramFiles`, ...). */
  env: (name: string) => string | undefined;
  /** Whether a file exists at a path. */
  isFile: (path: string) => boolean;
}

/** Where {@link findGitBash} found bash, or why it found none (a message for the user). */
export type GitBashResult = { path: string } | { error: string };

function winJoin(dir: string, ...parts: string[]): string {
  return [dir.replace(/[\\/]+$/, ""), ...parts].join("\\");
}

/**
 * The places Git Bash is looked for on Windows, in order: `KIMI_CLI_GIT_BASH_PATH`; the
 * `bash.exe` of the Git for Windows whose `git.exe` is on `PATH` (`<git>\cmd\git.exe`,
 * `<git>\bin\git.exe` or `<git>\mingw64\bin\git.exe` → `<git>\bin\bash.exe`); then the usual
 * install paths under `ProgramFiles`, `ProgramFiles(x86)` and `LOCALAPPDATA\Programs`.
 */
export function gitBashCandidates(search: GitBashSearch): string[] {
  const out: string[] = [];
  const explicit = search.env(GIT_BASH_PATH_ENV);
  if (explicit) out.push(explicit);
  for (const dir of (search.env("PATH") ?? search.env("Path") ?? "").split(";")) {
    if (!dir || !search.isFile(winJoin(dir, "git.exe"))) continue;
    const parts = dir.replace(/[\\/]+$/, "").split(/[\\/]/);
    const last = parts.at(-1)?.toLowerCase();
    const root = last === "bin" && parts.at(-2)?.toLowerCase() === "mingw64"
      ? parts.slice(0, -2)
      : last === "cmd" || last === "bin"
      ? parts.slice(0, -1)
      : null;
    if (root && root.length > 0) out.push(winJoin(root.join("\\"), "bin", "bash.exe"));
  }
  const programFiles = search.env("ProgramFiles") ?? "C:\\Program Files";
  out.push(winJoin(programFiles, "Git", "bin", "bash.exe"));
  const x86 = search.env("ProgramFiles(x86)") ?? "C:\\Program Files (x86)";
  out.push(winJoin(x86, "Git", "bin", "bash.exe"));
  const local = search.env("LOCALAPPDATA");
  if (local) out.push(winJoin(local, "Programs", "Git", "bin", "bash.exe"));
  return [...new Set(out)];
}

/**
 * Find Git Bash on Windows (see {@link gitBashCandidates} for the order). A
 * `KIMI_CLI_GIT_BASH_PATH` that names no file is an error of its own (it is never skipped
 * silently); none found is an error that lists where it looked and how to fix it.
 */
export function findGitBash(search: GitBashSearch): GitBashResult {
  const explicit = search.env(GIT_BASH_PATH_ENV);
  if (explicit && !search.isFile(explicit)) {
    return {
      error: `${GIT_BASH_PATH_ENV} is set to \`${explicit}\`, which is not a file. Point it at ` +
        "Git Bash's bash.exe (e.g. C:\\Program Files\\Git\\bin\\bash.exe), or unset it.",
    };
  }
  const candidates = gitBashCandidates(search);
  for (const c of candidates) if (search.isFile(c)) return { path: c };
  return {
    error: "kimi needs Git Bash on Windows to run shell commands, and found none (looked at " +
      `${candidates.join(", ")}). Install Git for Windows (https://git-scm.com/download/win), ` +
      `or set ${GIT_BASH_PATH_ENV} to the path of its bash.exe.`,
  };
}

/** {@link GitBashSearch} over this process's environment and file system. */
export function processGitBashSearch(): GitBashSearch {
  return {
    env: (name) => {
      try {
        return Deno.env.get(name);
      } catch {
        return undefined;
      }
    },
    isFile: (path) => pathStatusSync(path) === "file",
  };
}
