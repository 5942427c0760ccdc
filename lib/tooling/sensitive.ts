/**
 * Sensitive-file detection: files that likely hold secrets (`.env`, SSH private keys, cloud
 * credentials), kimi's own secret control files (see {@link ./control_paths.ts}) and the
 * per-process files under `/proc` (environment, memory, command line of kimi or any other
 * process) are never read by the file tools, dropped from Grep and Glob results, and never
 * inlined into prompts.
 *
 * Every check here takes a real path (see {@link ../fs/real_path.ts}) so that symlinks and `/proc`
 * aliases are judged by where they lead.
 *
 * @module
 */
import { basename } from "node:path";
import { type ControlPath, matchSecretControlPath } from "./control_paths.ts";
import { join } from "node:path";
import { resolveRealPath } from "../fs/real_path.ts";

/** `.env.*` files that are templates, not secrets. */
const EXEMPT_NAMES = new Set([".env.example", ".env.sample", ".env.template"]);
/** File names that are sensitive wherever they are. */
const SENSITIVE_NAMES = new Set([".env", "id_rsa", "id_ed25519", "id_ecdsa", "credentials"]);
/** Path suffixes that are sensitive. */
const SENSITIVE_SUFFIXES = [".aws/credentials", ".gcp/credentials"];
/** Per-process directories of procfs (`/proc/<pid>`, `/proc/self`, `/proc/thread-self`). */
const PROC_PROCESS = /^\/proc\/(?:\d+|self|thread-self)(?:\/|$)/;

/** Options of {@link isSensitiveFile}. */
export interface SensitiveOptions {
  /**
   * The session's control paths (see `ControlPathSet.list`): the secret ones (the share dir's
   * config and credentials, a `--config-file`, ...) are sensitive too; only absolute paths can
   * match them.
   */
  controls?: readonly ControlPath[];
}

/** Whether an absolute path lies in a per-process directory of `/proc`. */
export function isProcessProcPath(path: string): boolean {
  return PROC_PROCESS.test(path);
}

/** Whether a path (absolute or relative) names a file that likely holds secrets. */
export function isSensitiveFile(path: string, opts: SensitiveOptions = {}): boolean {
  const name = basename(path);
  if (!EXEMPT_NAMES.has(name)) {
    if (SENSITIVE_NAMES.has(name) || name.startsWith(".env.")) return true;
    for (const suffix of SENSITIVE_SUFFIXES) {
      if (path.endsWith(suffix) || path.includes("/" + suffix)) return true;
    }
  }
  if (path.startsWith("/")) {
    if (isProcessProcPath(path)) return true;
    if (opts.controls && matchSecretControlPath(path, opts.controls)) return true;
  }
  return false;
}

/** How many files of secret control directories are indexed by inode at most. */
const SECRET_INODE_LIMIT = 10_000;

/** `dev:ino` of a file: the identity its hard links share. */
function inodeKey(info: Deno.FileInfo): string | null {
  return info.ino === null ? null : `${info.dev}:${info.ino}`;
}

/**
 * The inodes of the secret control files (and of the files below secret control directories),
 * so that a hard link to one of them elsewhere is recognised: a hard link has no other path to
 * resolve to, only the inode it shares with the secret.
 */
export function secretInodes(list: readonly ControlPath[]): Set<string> {
  const out = new Set<string>();
  let budget = SECRET_INODE_LIMIT;
  const add = (path: string, depth: number): void => {
    if (budget <= 0) return;
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch {
      return;
    }
    if (info.isFile) {
      const key = inodeKey(info);
      if (key !== null) out.add(key);
      budget--;
    } else if (info.isDirectory && depth < 8) {
      try {
        for (const e of Deno.readDirSync(path)) add(join(path, e.name), depth + 1);
      } catch {
        // unreadable here: then this run cannot have linked it either
      }
    }
  };
  for (const cp of list) if (cp.secret) add(cp.path, 0);
  return out;
}

/** Whether a file (its `stat`) is a hard link to one of `inodes` (see {@link secretInodes}). */
export function isHardLinkTo(info: Deno.FileInfo | null, inodes: ReadonlySet<string>): boolean {
  if (info === null || !info.isFile || (info.nlink ?? 1) < 2) return false;
  const key = inodeKey(info);
  return key !== null && inodes.has(key);
}

/** Whether the file at a real path is a hard link to a secret control file. */
function isHardLinkToSecret(realPath: string, list: readonly ControlPath[]): boolean {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(realPath);
  } catch {
    return false;
  }
  // Most files have one link: only those with more pay for indexing the secrets.
  if (!info.isFile || (info.nlink ?? 1) < 2) return false;
  return isHardLinkTo(info, secretInodes(list));
}

/** Why a real path may not be read, as the message to return (quoting `shownPath`); or null. */
export function readRefusal(
  realPath: string,
  shownPath: string,
  opts: { controls: readonly ControlPath[] },
): string | null {
  if (isProcessProcPath(realPath)) {
    return `\`${shownPath}\` leads to \`${realPath}\`, a process's /proc entry (its ` +
      "environment, memory and open files, which may hold kimi's API keys). Reading it is blocked.";
  }
  const list = opts.controls;
  const cp: ControlPath | null = matchSecretControlPath(realPath, list) ??
    (isHardLinkToSecret(realPath, list)
      ? {
        path: realPath,
        kind: "file",
        what: "a hard link to one of kimi's secret files",
        secret: true,
      }
      : null);
  if (cp) {
    return `\`${shownPath}\` is ${cp.what}. Reading it is blocked to protect credentials and ` +
      "the code kimi runs.";
  }
  if (isSensitiveFile(realPath) || isSensitiveFile(shownPath)) {
    return sensitiveFileMessage(shownPath);
  }
  return null;
}

/**
 * Whether a file kimi is pointed at by configuration (AGENTS.md, a skill, an agent's system
 * prompt) is a secret by where it really leads: a sensitive name, a per-process `/proc` entry
 * or one of the session's secret control paths (`controls`). Such a file is never inlined.
 */
export function isSecretFile(path: string, controls: readonly ControlPath[]): boolean {
  const real = resolveRealPath(path);
  const p = real.ok ? real.path : path;
  return isSensitiveFile(path) || isSensitiveFile(p) ||
    matchSecretControlPath(p, controls) !== null;
}

/** The ReadFile error message for a sensitive file, quoting the path as the model gave it. */
export function sensitiveFileMessage(shownPath: string): string {
  return `\`${shownPath}\` appears to contain secrets (matched sensitive file pattern). ` +
    "Reading this file is blocked to protect credentials.";
}

/** The note Grep adds when it dropped sensitive files from its results. */
export function sensitiveFileWarning(paths: readonly string[]): string {
  const names = [...new Set(paths.map((p) => basename(p)))].sort();
  let list = names.slice(0, 5).join(", ");
  if (names.length > 5) list += `, ... (${names.length} files total)`;
  return `Skipped ${paths.length} sensitive file(s) (${list}) to protect secrets. ` +
    "These files may contain credentials or private keys.";
}
