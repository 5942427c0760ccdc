/**
 * The checks every file-changing tool runs before touching a path: non-empty, the workspace
 * rule, the real path (symlinks and `..` resolved, dangling symlinks refused), plan-mode
 * restrictions, kimi's control files and the permission scope (read and write), all on the path
 * that will really be written. {@link confirmFileTarget} repeats the resolution right before
 * the write, after any approval wait, and refuses when the path now leads elsewhere.
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import type { ApprovalAsk, ToolEnv, ToolReturnValue } from "./tool.ts";
import { editAction } from "./file_actions.ts";
import { type ControlPath, controlWriteMessage, matchControlPath } from "./control_paths.ts";
import { toolError } from "./result.ts";
import { inspectPlanTarget } from "./plan_target.ts";
import { resolveRealPath, stillResolvesTo } from "../fs/real_path.ts";
import { isFullAccess } from "./scope.ts";
import { expandHome, resolveToolPath } from "./workspace.ts";

/** A path a tool may change, or the error to return instead. */
export type FileTarget =
  | {
    ok: true;
    /** Real path that will be written. */
    path: string;
    /** Whether it lies in the workspace. */
    inside: boolean;
    /** Whether it is the current plan file. */
    isPlanFile: boolean;
    /** The control path it falls on (full-access runs only; needs an explicit approval). */
    control: ControlPath | null;
  }
  | { ok: false; error: ToolReturnValue };

/** Resolve and check the target of WriteFile (`write`) or StrReplaceFile (`edit`). */
export function resolveFileTarget(rawPath: string, env: ToolEnv, op: "write" | "edit"): FileTarget {
  if (!rawPath) {
    return {
      ok: false,
      error: toolError({ message: "File path cannot be empty.", brief: "Empty file path" }),
    };
  }
  const resolved = resolveToolPath(rawPath, env, op);
  if (!resolved.ok) {
    // Not even resolvable for lack of read permission: when the write itself is denied too,
    // that is the denial to name.
    const lexical = resolve(env.workDir, expandHome(rawPath));
    const write = env.scope.check("write", lexical);
    if (!write.allowed && isAbsolute(expandHome(rawPath))) {
      return { ok: false, error: toolError({ message: write.message, brief: "Sandbox denied" }) };
    }
    return { ok: false, error: resolved.error };
  }
  const path = resolved.path;
  const plan = inspectPlanTarget(path, env);
  if (!plan.ok) return { ok: false, error: plan.error };
  const kinds = op === "write" ? (["write", "read"] as const) : (["read", "write"] as const);
  for (const kind of kinds) {
    const decision = env.scope.check(kind, path);
    if (!decision.allowed) {
      return {
        ok: false,
        error: toolError({ message: decision.message, brief: "Sandbox denied" }),
      };
    }
  }
  const control = plan.isPlanFile ? null : matchControlPath(path, env.run.controlPaths.list());
  if (control && (control.secret && op === "edit" || !isFullAccess(env.scope))) {
    return {
      ok: false,
      error: toolError({ message: controlWriteMessage(path, control), brief: "Control file" }),
    };
  }
  return { ok: true, path, inside: resolved.inside, isPlanFile: plan.isPlanFile, control };
}

/**
 * What to ask the user before a change to `target` (`description` e.g. ``Write file `/p` ``):
 * the usual `edit file` approval, or for a control path (full-access runs only) one that is
 * asked even in yolo mode, never covered by "approve for session", names what the file is, and
 * is refused outright (the result returned) when no user is present. Plan files need no
 * approval (`null`).
 */
export function fileChangeApproval(
  target: FileTarget & { ok: true },
  opts: {
    env: Pick<ToolEnv, "isAfk">;
    description: string;
    display: ApprovalAsk["display"];
  },
): ApprovalAsk | ToolReturnValue | null {
  if (target.isPlanFile) return null;
  const { env, display } = opts;
  const control = target.control;
  if (control && env.isAfk()) {
    return toolError({
      message: `\`${target.path}\` is ${control.what}. Changing it needs an explicit approval ` +
        "from a user, and none is present (print mode or afk); nothing was written.",
      brief: "Control file",
    });
  }
  const subject = { kind: "file" as const, path: target.path };
  return control
    ? {
      action: "edit kimi control file",
      description: `Change ${control.what}: \`${target.path}\``,
      display,
      subject,
      mustAsk: true,
    }
    : { action: editAction(target.inside), description: opts.description, display, subject };
}

/**
 * Right before the write (after any approval wait): `null` when `rawPath` still leads to the
 * approved real path `approved` and no component of it has been replaced by a symlink, else the
 * error to return without writing.
 */
export function confirmFileTarget(
  rawPath: string,
  approved: string,
  env: Pick<ToolEnv, "workDir">,
): ToolReturnValue | null {
  const again = resolveRealPath(expandHome(rawPath), env.workDir);
  const now = again.ok ? again.path : null;
  if (now === approved && stillResolvesTo(approved)) return null;
  const where = now === null ? "no longer resolves safely" : `now leads to \`${now}\``;
  return toolError({
    message: `\`${rawPath}\` changed while the approval was pending: it ${where} instead of ` +
      `the approved \`${approved}\` (a directory on the way was replaced, e.g. by a symlink). ` +
      "Nothing was written; check the path and try again.",
    brief: "Path changed since approval",
  });
}

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return a.ino !== null && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Write `content` to the resolved path `path` (overwrite or append) through one open file,
 * checking after opening and before writing that the opened file is the one `path` leads to
 * (same device and inode, no component swapped for a symlink). So a swap racing the last check
 * cannot redirect the content: at worst an empty file is created or an existing one is opened,
 * untouched. Resolves with `null` on success, else the error to return (nothing written).
 */
export async function writeResolvedFile(
  rawPath: string,
  path: string,
  content: string,
  opts: { append: boolean },
): Promise<ToolReturnValue | null> {
  const file = await Deno.open(path, { write: true, create: true, append: opts.append });
  try {
    const opened = await file.stat();
    let current: Deno.FileInfo | null = null;
    try {
      current = await Deno.stat(path);
    } catch {
      current = null;
    }
    if (current === null || !sameFile(opened, current) || !stillResolvesTo(path)) {
      return toolError({
        message: `\`${rawPath}\` changed while it was being written (a component of \`${path}\` ` +
          "was replaced, e.g. by a symlink). Nothing was written; check the path and try again.",
        brief: "Path changed since approval",
      });
    }
    if (!opts.append) await file.truncate(0);
    const bytes = new TextEncoder().encode(content);
    let off = 0;
    while (off < bytes.length) off += await file.write(bytes.subarray(off));
    return null;
  } finally {
    file.close();
  }
}
