/**
 * The checks every file-reading tool (ReadFile, ReadMediaFile) runs right before reading: a
 * non-empty path, the workspace rule, the real path (symlinks, `..`, `/proc` aliases
 * resolved), the secret filter (sensitive names, kimi's control files, per-process `/proc`
 * entries) and the permission scope, all on the path that will really be read. After reading,
 * {@link confirmReadTarget} makes sure the path still leads to the same place, so a symlink
 * swapped in while the file was read cannot smuggle another file's content out.
 *
 * @module
 */
import { toolError } from "./result.ts";
import { stillResolvesTo } from "../fs/real_path.ts";
import { readRefusal } from "./sensitive.ts";
import type { ToolEnv, ToolReturnValue } from "./tool.ts";
import { resolveToolPath } from "./workspace.ts";

/** A path a tool may read, or the error to return instead. */
export type ReadTarget =
  | { ok: true; path: string; inside: boolean }
  | { ok: false; error: ToolReturnValue };

/** Resolve and check the target of a read (`rawPath` as the model gave it). */
export function resolveReadTarget(
  rawPath: string,
  env: Pick<ToolEnv, "workDir" | "additionalDirs" | "shareDir" | "scope">,
): ReadTarget {
  if (!rawPath) {
    return {
      ok: false,
      error: toolError({ message: "File path cannot be empty.", brief: "Empty file path" }),
    };
  }
  const resolved = resolveToolPath(rawPath, env, "read");
  if (!resolved.ok) return { ok: false, error: resolved.error };
  const path = resolved.path;
  const refusal = readRefusal(path, rawPath, { shareDir: env.shareDir });
  if (refusal !== null) {
    return { ok: false, error: toolError({ message: refusal, brief: "Sensitive file" }) };
  }
  const decision = env.scope.check("read", path);
  if (!decision.allowed) {
    return { ok: false, error: toolError({ message: decision.message, brief: "Sandbox denied" }) };
  }
  return { ok: true, path, inside: resolved.inside };
}

/**
 * After the read: `null` when `path` still resolves to itself, else the error to return
 * instead of what was read.
 */
export function confirmReadTarget(rawPath: string, path: string): ToolReturnValue | null {
  if (stillResolvesTo(path)) return null;
  return toolError({
    message: `\`${rawPath}\` changed while it was being read (a component of \`${path}\` was ` +
      "replaced, e.g. by a symlink). Nothing was returned; read it again.",
    brief: "Path changed",
  });
}
