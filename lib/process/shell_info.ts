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
 * Find bash on `pathEnv` (a `PATH` value; defaults to the usual system directories).
 * When nothing can be inspected (no read permission) bash is assumed and spawned by name;
 * {@link startShellProcess} falls back to `/bin/sh` if spawning it fails with "not found".
 */
export function resolveShell(pathEnv?: string): ShellInfo {
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
