/**
 * Judging search results (Glob matches, Grep files) the way ReadFile judges a path: each result
 * is resolved to its real path when it is judged, then refused when it is a secret (kimi's
 * secret control files, a hard link to one of them, a per-process `/proc` entry) or lands
 * outside the read scope (and, for Glob, outside the workspace).
 *
 * Built once per search, and cheap per result, so a search of a big tree costs what the search
 * costs: a result's directory is resolved once (an `lstat` per directory, not per result) and
 * the result itself costs one `lstat`; only a result that is itself a symlink is resolved whole.
 * The control-path matcher, the secret files' inodes and the scope answers per directory are
 * computed once and reused across results.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { resolveRealPath } from "../fs/real_path.ts";
import { controlEntryProbe, type ControlMatcher, controlMatcher } from "./control_paths.ts";
import { isHardLinkTo, isProcessProcPath, secretInodes } from "./sensitive.ts";
import type { ToolEnv } from "./tool.ts";
import { isWithin, workspaceRoots } from "./workspace.ts";

/** What a result is: shown (`ok`), dropped as a secret, or dropped as out of scope. */
export type ResultVerdict = "ok" | "secret" | "denied";

/** The real path of `path` now, or null when it cannot be resolved. */
function realPathOrNull(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    const r = resolveRealPath(path);
    return r.ok ? r.path : null;
  }
}

/** Judges the results of one search. */
export class ResultFilter {
  readonly #env: Pick<ToolEnv, "scope">;
  readonly #secret: ControlMatcher;
  /** Whether an entry of a real directory may be a secret control path. */
  readonly #secretEntryIn: (realDir: string) => boolean;
  readonly #secretInodes: Set<string>;
  readonly #roots: string[] | null;
  /** Directories the walk listed as no symlink (see the constructor). */
  readonly #plainDirs: ReadonlySet<string> | null;
  /** Scope answer per real directory. */
  readonly #dirs = new Map<string, boolean>();
  /** Real path per searched directory (null: cannot be resolved). */
  readonly #realDirs = new Map<string, string | null>();
  /**
   * Per searched directory: whether every plain entry in it is shown as it is (its real
   * directory is readable, in the workspace when that is required, and no name in it can be
   * a secret or a process's `/proc` entry).
   */
  readonly #cleanDirs = new Map<string, boolean>();
  #lastDir: string | null = null;
  #lastClean = false;

  /**
   * Create the filter. With `workspaceOnly`, results must also lie in the work dir or an
   * additional dir.
   */
  constructor(
    env: Pick<ToolEnv, "scope" | "run" | "workDir" | "additionalDirs">,
    opts: {
      workspaceOnly?: boolean;
      /**
       * Absolute directories the search's walk listed, in their parent's listing, as directories
       * that are no symlink: their real path is taken as their parent's with their name, without
       * an `lstat` of their own (the trust a plain entry gets; see {@link verdict}).
       */
      plainDirs?: ReadonlySet<string>;
    } = {},
  ) {
    this.#env = env;
    this.#plainDirs = opts.plainDirs ?? null;
    const secrets = env.run.controlPaths.list().filter((c) => c.secret);
    this.#secret = controlMatcher(secrets);
    this.#secretEntryIn = controlEntryProbe(secrets);
    this.#secretInodes = secretInodes(secrets);
    this.#roots = opts.workspaceOnly ? workspaceRoots(env) : null;
  }

  #realDir(dir: string): string | null {
    let real = this.#realDirs.get(dir);
    if (real === undefined) {
      real = this.#resolveDir(dir);
      this.#realDirs.set(dir, real);
    }
    return real;
  }

  /**
   * A directory's real path now: its parent's real path (resolved once per search) with its
   * name, when `lstat` there shows a directory (no symlink); otherwise resolved whole. One
   * `lstat` per directory instead of a `realpath` walking every component.
   */
  #resolveDir(dir: string): string | null {
    const slash = dir.lastIndexOf("/");
    const name = dir.slice(slash + 1);
    if (slash > 0 && name !== "" && name !== "." && name !== "..") {
      const parent = this.#realDir(dir.slice(0, slash));
      if (parent !== null) {
        const candidate = parent === "/" ? `/${name}` : `${parent}/${name}`;
        if (this.#plainDirs?.has(dir)) return candidate;
        try {
          if (Deno.lstatSync(candidate).isDirectory) return candidate;
        } catch {
          // Resolved whole below.
        }
      }
    }
    return realPathOrNull(dir);
  }

  /**
   * The real path of an absolute result path now and its file info, or `null` when it cannot
   * be resolved. The directory is resolved once per search; the entry is resolved whole only
   * when it is itself a symlink.
   */
  #real(path: string): { real: string; info: Deno.FileInfo | null } | null {
    const dir = this.#realDir(dirname(path));
    if (dir === null) return null;
    const candidate = join(dir, basename(path));
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(candidate);
    } catch {
      const real = realPathOrNull(path);
      return real === null ? null : { real, info: null };
    }
    if (!info.isSymlink) return { real: candidate, info };
    const real = realPathOrNull(path);
    if (real === null) return null;
    try {
      return { real, info: Deno.statSync(real) };
    } catch {
      return { real, info: null };
    }
  }

  /**
   * Whether every plain entry of the searched (absolute) directory `dir` is `ok`, so that they
   * need no {@link verdict} each: see `plainEntry` there. Cached per directory.
   */
  plainEntriesOk(dir: string): boolean {
    return this.#cleanDir(dir);
  }

  /** Whether every plain entry of the searched directory `dir` is `ok` (cached per directory). */
  #cleanDir(dir: string): boolean {
    // Results come grouped by directory: the last answer is usually the one.
    if (dir === this.#lastDir) return this.#lastClean;
    let clean = this.#cleanDirs.get(dir);
    if (clean === undefined) {
      const real = this.#realDir(dir);
      clean = real !== null && !real.startsWith("/proc") && !this.#secretEntryIn(real) &&
        (this.#roots === null || this.#roots.some((r) => isWithin(real, r))) &&
        this.#dirReadable(real);
      this.#cleanDirs.set(dir, clean);
    }
    this.#lastDir = dir;
    this.#lastClean = clean;
    return clean;
  }

  /** Whether this run may read the real directory `dir` (cached). */
  #dirReadable(dir: string): boolean {
    let ok = this.#dirs.get(dir);
    if (ok === undefined) {
      ok = this.#env.scope.check("read", dir).allowed;
      this.#dirs.set(dir, ok);
    }
    return ok;
  }

  /** Whether this run may read `real` (scope answers cached per directory). */
  #readable(real: string): boolean {
    return this.#dirReadable(dirname(real)) || this.#env.scope.check("read", real).allowed;
  }

  /**
   * Judge one result by its absolute path (as searched). `plainEntry`: the walk listed its last
   * component as no symlink, and only its name is shown (Glob), so resolving its directory is
   * enough: a `..` or a symlinked directory on the way is resolved there, and a name shows
   * nothing of a file it may be a hard link to. The plain entries of a directory whose real
   * path is readable, in the workspace and holds no secret are judged once for all.
   */
  verdict(path: string, opts: { plainEntry?: boolean } = {}): ResultVerdict {
    let resolved: { real: string; info: Deno.FileInfo | null } | null;
    if (opts.plainEntry) {
      const slash = path.lastIndexOf("/");
      const parent = slash <= 0 || slash === path.length - 1 ? dirname(path) : path.slice(0, slash);
      if (this.#cleanDir(parent)) return "ok";
      const dir = this.#realDir(parent);
      resolved = dir === null ? null : { real: join(dir, basename(path)), info: null };
    } else {
      resolved = this.#real(path);
    }
    if (resolved === null) return "denied";
    const { real, info } = resolved;
    if (
      isProcessProcPath(real) || this.#secret(real) !== null ||
      isHardLinkTo(info, this.#secretInodes)
    ) {
      return "secret";
    }
    if (this.#roots && !this.#roots.some((r) => isWithin(real, r))) return "denied";
    return this.#readable(real) ? "ok" : "denied";
  }
}
