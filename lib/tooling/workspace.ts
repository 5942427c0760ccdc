/**
 * Paths as tools see them: `~` expansion, canonical absolute paths (symlinks and `..`
 * resolved), and the workspace rule of the file tools (a path outside the working directory and
 * the additional directories must be given as an absolute path).
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { denialMessage } from "./scope.ts";
import { resolveRealPath } from "../fs/real_path.ts";
import { toolError } from "./result.ts";
import type { ToolEnv, ToolReturnValue } from "./tool.ts";

/** The home directory, or `null` when it cannot be read (no env permission, unset). */
export function homeDir(): string | null {
  try {
    return Deno.env.get("HOME") ?? Deno.env.get("USERPROFILE") ?? null;
  } catch {
    return null;
  }
}

/** Expand a leading `~` or `~/` to the home directory; other paths are returned unchanged. */
export function expandHome(path: string): string {
  if (path !== "~" && !path.startsWith("~/")) return path;
  const home = homeDir();
  if (!home) return path;
  return path === "~" ? home : join(home, path.slice(2));
}

/**
 * The path as Python's `PurePosixPath` prints it: repeated slashes collapsed, `.` segments and a
 * trailing slash dropped (`..` kept). Used in messages that quote the user's path.
 */
export function purePathString(path: string): string {
  if (path === "") return ".";
  const abs = path.startsWith("/");
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  const body = parts.join("/");
  if (abs) return "/" + body;
  return body === "" ? "." : body;
}

function realPathOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/**
 * Canonical absolute form of `path`: relative paths resolve against `base`, `..` is folded and
 * symlinks are resolved. For a path that does not exist yet, the nearest existing ancestor is
 * resolved and the missing tail appended. Without read permission the lexical form is returned.
 */
export function canonicalPath(path: string, base: string): string {
  const abs = resolve(base, expandHome(path));
  const direct = realPathOrNull(abs);
  if (direct !== null) return direct;
  const tail: string[] = [];
  let cur = abs;
  while (true) {
    const parent = dirname(cur);
    tail.unshift(cur.slice(parent === "/" ? 1 : parent.length + 1));
    if (parent === cur) return abs;
    const real = realPathOrNull(parent);
    if (real !== null) return join(real, ...tail);
    cur = parent;
  }
}

/** Whether `path` is `dir` or lies below it (both absolute and canonical). */
export function isWithin(path: string, dir: string): boolean {
  if (path === dir) return true;
  const prefix = dir.endsWith("/") ? dir : dir + "/";
  return path.startsWith(prefix);
}

/** The workspace roots: the work dir and the additional dirs, canonical. */
export function workspaceRoots(env: Pick<ToolEnv, "workDir" | "additionalDirs">): string[] {
  return [env.workDir, ...env.additionalDirs().map((d) => canonicalPath(d, env.workDir))];
}

/** Whether a canonical absolute path lies inside the work dir or an additional dir. */
export function isInsideWorkspace(
  path: string,
  env: Pick<ToolEnv, "workDir" | "additionalDirs">,
): boolean {
  return workspaceRoots(env).some((root) => isWithin(path, root));
}

/** What the tool is about to do with the file; it appears in the workspace-rule message. */
export type FileVerb = "read" | "write" | "edit";

/** The workspace-rule error for a relative path that leads outside the workspace. */
export function notAbsoluteError(shownPath: string, verb: FileVerb): ToolReturnValue {
  return toolError({
    message: `\`${shownPath}\` is not an absolute path. You must provide an absolute path to ` +
      `${verb} a file outside the working directory.`,
    brief: "Invalid path",
  });
}

/** A path that passed the workspace rule. */
export interface ResolvedToolPath {
  /** Always true. */
  ok: true;
  /** Canonical absolute path. */
  path: string;
  /** Whether it lies inside the work dir or an additional dir. */
  inside: boolean;
}

/** A path that failed the workspace rule, with the error to return. */
export interface RejectedToolPath {
  /** Always false. */
  ok: false;
  /** The tool result to return. */
  error: ToolReturnValue;
}

/** The refusal for a path whose missing part is a dangling symlink. */
export function danglingSymlinkError(shownPath: string, at: string): ToolReturnValue {
  return toolError({
    message: `\`${shownPath}\` goes through \`${at}\`, a symlink whose target does not exist. ` +
      "File tools do not create files through dangling symlinks; give the real path instead.",
    brief: "Invalid path",
  });
}

/**
 * Apply the workspace rule to a path given to a file tool: expand `~`, resolve it to its real
 * path against the work dir (see {@link resolveRealPath}), and reject a relative path that leads
 * outside the workspace, a dangling symlink, or a component this run may not read (so where
 * the path leads is unknown).
 */
export function resolveToolPath(
  raw: string,
  env: Pick<ToolEnv, "workDir" | "additionalDirs">,
  verb: FileVerb,
): ResolvedToolPath | RejectedToolPath {
  const expanded = expandHome(raw);
  const real = resolveRealPath(expanded, env.workDir);
  if (!real.ok) {
    if (real.reason === "symlink") {
      return { ok: false, error: danglingSymlinkError(purePathString(expanded), real.at) };
    }
    return {
      ok: false,
      error: toolError({ message: denialMessage("read", real.at), brief: "Sandbox denied" }),
    };
  }
  const path = real.path;
  const inside = isInsideWorkspace(path, env);
  if (!inside && !isAbsolute(expanded)) {
    return { ok: false, error: notAbsoluteError(purePathString(expanded), verb) };
  }
  return { ok: true, path, inside };
}
