/**
 * The checks every file-reading tool (ReadFile, ReadMediaFile) runs right before reading: a
 * non-empty path, the workspace rule, the real path (symlinks, `..`, `/proc` aliases
 * resolved), the secret filter (sensitive names, kimi's control files, per-process `/proc`
 * entries) and the permission scope, all on the path that will really be read.
 * {@link readPinned} then reads it pinned to the file it led to, so a symlink swapped in while
 * the file is read cannot smuggle another file's content out.
 *
 * @module
 */
import { detectFileType, type FileType, readHeader } from "./file_type.ts";
import { toolError } from "./result.ts";
import { type FilePin, PathChangedError, pinFile, stillResolvesTo } from "../fs/real_path.ts";
import { readRefusal } from "./sensitive.ts";
import type { ApprovalAsk, ToolEnv, ToolResolution, ToolReturnValue } from "./tool.ts";
import { resolveToolPath } from "./workspace.ts";

/** A path a tool may read, or the error to return instead. */
export type ReadTarget =
  | { ok: true; path: string; inside: boolean }
  | { ok: false; error: ToolReturnValue };

/** Resolve and check the target of a read (`rawPath` as the model gave it). */
export function resolveReadTarget(
  rawPath: string,
  env: Pick<ToolEnv, "workDir" | "additionalDirs" | "shareDir" | "scope" | "run">,
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
  const refusal = readRefusal(path, rawPath, { controls: env.run.controlPaths.list() });
  if (refusal !== null) {
    return { ok: false, error: toolError({ message: refusal, brief: "Sensitive file" }) };
  }
  const decision = env.scope.check("read", path);
  if (!decision.allowed) {
    return { ok: false, error: toolError({ message: decision.message, brief: "Sandbox denied" }) };
  }
  return { ok: true, path, inside: resolved.inside };
}

/** The error for a read whose path changed under it (nothing read is returned). */
export function readChangedError(rawPath: string, path: string): ToolReturnValue {
  return toolError({
    message: `\`${rawPath}\` changed while it was being read (a component of \`${path}\` was ` +
      "replaced, e.g. by a symlink). Nothing was returned; read it again.",
    brief: "Path changed",
  });
}

/**
 * Read the file at the checked real path `path` with `read`, pinned to the file it led to when
 * checked: every open must find that file (see {@link openPinned}), and afterwards the path must
 * still resolve to itself and lead to it. Otherwise the read's result is replaced by an error.
 */
export async function readPinned(
  rawPath: string,
  path: string,
  read: (pin: FilePin | null) => Promise<ToolReturnValue>,
): Promise<ToolReturnValue> {
  const pin = await pinFile(path);
  let result: ToolReturnValue;
  try {
    result = await read(pin);
  } catch (e) {
    if (e instanceof PathChangedError) return readChangedError(rawPath, path);
    throw e;
  }
  const now = await pinFile(path);
  const same = pin === null ? now === null : now !== null && now.dev === pin.dev &&
    now.ino === pin.ino;
  return same && stillResolvesTo(path) ? result : readChangedError(rawPath, path);
}

/** The type of the regular file a read targets, or the error to return. */
export type ReadFileKind = { ok: true; type: FileType } | { ok: false; error: ToolReturnValue };

/**
 * Check that the checked path names an existing regular file and sniff its type from its first
 * bytes (of the pinned file).
 */
export async function inspectReadFile(
  rawPath: string,
  path: string,
  pin: FilePin | null,
): Promise<ReadFileKind> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    return {
      ok: false,
      error: toolError({ message: `\`${rawPath}\` does not exist.`, brief: "File not found" }),
    };
  }
  if (!info.isFile) {
    return {
      ok: false,
      error: toolError({ message: `\`${rawPath}\` is not a file.`, brief: "Invalid path" }),
    };
  }
  return { ok: true, type: detectFileType(path, await readHeader(path, pin)) };
}

/**
 * The approval of a read: checked against the approval rules (deny and ask rules for the real
 * path); no rule: allowed without asking.
 */
export function readApproval(path: string): ApprovalAsk {
  return {
    action: "read file",
    description: `Read file \`${path}\``,
    display: [],
    subject: { kind: "file", path, access: "read" },
    unruled: "allow",
  };
}

/**
 * The invocation of a file read (ReadFile, ReadMediaFile): the checked target, the read
 * approval, then `read` on the real path, pinned to the file it led to when checked (the read
 * is re-checked after any approval wait). An exception anywhere becomes `Failed to read`.
 */
export function readInvocation(
  rawPath: string,
  env: Pick<ToolEnv, "workDir" | "additionalDirs" | "shareDir" | "scope" | "run">,
  read: (path: string, pin: FilePin | null) => Promise<ToolReturnValue>,
): ToolResolution {
  const failed = (e: unknown) =>
    toolError({
      message: `Failed to read ${rawPath}. Error: ${e instanceof Error ? e.message : e}`,
      brief: "Failed to read file",
    });
  let target: ReadTarget;
  try {
    target = resolveReadTarget(rawPath, env);
  } catch (e) {
    return failed(e);
  }
  if (!target.ok) return target.error;
  const p = target.path;
  return {
    accesses: [{ kind: "read", path: p }],
    approval: () => readApproval(p),
    async execute() {
      try {
        return await readPinned(rawPath, p, (pin) => read(p, pin));
      } catch (e) {
        return failed(e);
      }
    },
  };
}
