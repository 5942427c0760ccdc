/**
 * Judging search results (Glob matches, Grep files) the way ReadFile judges a path: each result
 * is resolved to its real path when it is judged, then refused when it is a secret (kimi's
 * secret control files, a per-process `/proc` entry) or lands outside the read scope (and, for
 * Glob, outside the workspace). Built once per search: the control-path matcher and the scope
 * answers per directory are reused across results.
 *
 * @module
 */
import { dirname } from "node:path";
import { resolveRealPath } from "../fs/real_path.ts";
import { type ControlMatcher, controlMatcher } from "./control_paths.ts";
import { isProcessProcPath } from "./sensitive.ts";
import type { ToolEnv } from "./tool.ts";
import { isWithin, workspaceRoots } from "./workspace.ts";

/** What a result is: shown (`ok`), dropped as a secret, or dropped as out of scope. */
export type ResultVerdict = "ok" | "secret" | "denied";

/** Judges the results of one search. */
export class ResultFilter {
  readonly #env: Pick<ToolEnv, "scope">;
  readonly #secret: ControlMatcher;
  readonly #roots: string[] | null;
  readonly #dirs = new Map<string, boolean>();

  /**
   * Create the filter. With `workspaceOnly`, results must also lie in the work dir or an
   * additional dir.
   */
  constructor(
    env: Pick<ToolEnv, "scope" | "run" | "workDir" | "additionalDirs">,
    opts: { workspaceOnly?: boolean } = {},
  ) {
    this.#env = env;
    this.#secret = controlMatcher(env.run.controlPaths.list().filter((c) => c.secret));
    this.#roots = opts.workspaceOnly ? workspaceRoots(env) : null;
  }

  /** The real path of an absolute result path now, or `null` when it cannot be resolved. */
  #real(path: string): string | null {
    try {
      return Deno.realPathSync(path);
    } catch {
      const r = resolveRealPath(path);
      return r.ok ? r.path : null;
    }
  }

  /** Whether this run may read `real` (scope answers cached per directory). */
  #readable(real: string): boolean {
    const dir = dirname(real);
    let dirOk = this.#dirs.get(dir);
    if (dirOk === undefined) {
      dirOk = this.#env.scope.check("read", dir).allowed;
      this.#dirs.set(dir, dirOk);
    }
    return dirOk || this.#env.scope.check("read", real).allowed;
  }

  /** Judge one result by its absolute path (as searched). */
  verdict(path: string): ResultVerdict {
    const real = this.#real(path);
    if (real === null) return "denied";
    if (isProcessProcPath(real) || this.#secret(real) !== null) return "secret";
    if (this.#roots && !this.#roots.some((r) => isWithin(real, r))) return "denied";
    return this.#readable(real) ? "ok" : "denied";
  }
}
