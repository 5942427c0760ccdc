/**
 * ripgrep's file filtering for the pure-TS Grep engine: `--glob` overrides, `--type` selection,
 * and ignore files (`.rgignore`, `.ignore`, `.gitignore` inside git repositories,
 * `.git/info/exclude`), nested per directory and inherited from the search root's parents, with
 * the precedence of ripgrep's `ignore` crate.
 *
 * @module
 */
import { isPresent, pathStatus } from "../fs/exists.ts";
import ignore, { type Ignore } from "ignore";
import picomatchUntyped from "picomatch";
import { join } from "node:path";
import { rgTypeGlobs } from "./rg_types.ts";

type Matcher = (path: string) => boolean;
const picomatch = picomatchUntyped as (
  glob: string,
  opts?: { dot?: boolean; nocase?: boolean },
) => Matcher;

/** A filter verdict: explicitly ignored, explicitly whitelisted, or no opinion. */
export type Verdict = "ignore" | "whitelist" | null;

interface OverrideGlob {
  negated: boolean;
  dirOnly: boolean;
  /**
   * The base name this glob matches in any directory (it was `name` or `**\/name`), when that is
   * all it matches; null for any other glob.
   */
  name: string | null;
  match: Matcher;
}

/** A glob that is a plain file name: no glob syntax, nothing picomatch treats specially. */
const PLAIN_NAME = /^[A-Za-z0-9._-]+$/;

/** `--glob` overrides (gitignore syntax, inverted: a plain glob includes, `!glob` excludes). */
export class Overrides {
  readonly #globs: OverrideGlob[] = [];
  #whitelists = 0;

  /** Build from globs in command-line order. */
  constructor(globs: readonly string[]) {
    for (const raw of globs) {
      let line = raw;
      const negated = line.startsWith("!");
      if (negated) line = line.slice(1);
      let anchored = false;
      if (line.startsWith("/")) {
        anchored = true;
        line = line.slice(1);
      }
      const dirOnly = line.endsWith("/") && line.length > 1;
      if (dirOnly) line = line.slice(0, -1);
      if (!anchored && !line.includes("/") && !line.startsWith("**/")) line = `**/${line}`;
      if (line.endsWith("/**")) line = `${line}/*`;
      const tail = line.slice(3);
      const name = line.startsWith("**/") && PLAIN_NAME.test(tail) && !/^\.\.?$/.test(tail)
        ? tail
        : null;
      this.#globs.push({ negated, dirOnly, name, match: picomatch(line, { dot: true }) });
      if (!negated) this.#whitelists++;
    }
  }

  /** Whether there are no globs. */
  get empty(): boolean {
    return this.#globs.length === 0;
  }

  /**
   * The verdict for the entry `name` of a directory at `relDir` (relative to the override root,
   * `""` for the root itself). A plain-name glob compares the name; others match the whole path.
   */
  matched(relDir: string, name: string, isDir: boolean): Verdict {
    let rel: string | null = null;
    for (let i = this.#globs.length - 1; i >= 0; i--) {
      const g = this.#globs[i];
      if (g.dirOnly && !isDir) continue;
      const hit = g.name !== null
        ? g.name === name
        : g.match(rel ??= relDir === "" ? name : `${relDir}/${name}`);
      if (hit) return g.negated ? "ignore" : "whitelist";
    }
    return this.#whitelists > 0 && !isDir ? "ignore" : null;
  }
}

/** `--type` selection: files whose name matches one of the type's globs. */
export class TypeFilter {
  readonly #matchers: Matcher[];

  private constructor(globs: string[]) {
    this.#matchers = globs.map((g) => picomatch(g, { dot: true }));
  }

  /** The filter for a type name, or `null` when ripgrep does not know the type. */
  static of(name: string): TypeFilter | null {
    const globs = rgTypeGlobs(name);
    return globs ? new TypeFilter(globs) : null;
  }

  /** The verdict for a file name (directories are never filtered). */
  matched(name: string, isDir: boolean): Verdict {
    if (isDir) return null;
    return this.#matchers.some((m) => m(name)) ? "whitelist" : "ignore";
  }
}

/** The ignore files of one directory. */
export interface IgnoreLevel {
  /** Absolute directory. */
  readonly dir: string;
  /** Whether the directory contains `.git`. */
  readonly hasGit: boolean;
  /** Whether this or an ancestor level contains `.git`. */
  readonly anyGit: boolean;
  /** `.rgignore` rules. */
  readonly rg: Ignore | null;
  /** `.ignore` rules. */
  readonly ig: Ignore | null;
  /** `.gitignore` rules. */
  readonly git: Ignore | null;
  /** `.git/info/exclude` rules. */
  readonly exclude: Ignore | null;
  /** The parent level (the enclosing directory), or null. */
  readonly parent: IgnoreLevel | null;
}

async function readRules(path: string): Promise<Ignore | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return null;
  }
  return ignore({ ignorecase: false }).add(text);
}

/** Read the ignore files of `dir` (in the order ripgrep gives them precedence). */
export async function loadIgnoreLevel(
  dir: string,
  parent: IgnoreLevel | null,
  names: ReadonlySet<string> | null = null,
): Promise<IgnoreLevel> {
  const has = (n: string) => names === null || names.has(n);
  const hasGit = has(".git")
    ? isPresent(await pathStatus(join(dir, ".git"), { noFollow: true }))
    : false;
  const [rg, ig, git, exclude] = await Promise.all([
    has(".rgignore") ? readRules(join(dir, ".rgignore")) : null,
    has(".ignore") ? readRules(join(dir, ".ignore")) : null,
    has(".gitignore") ? readRules(join(dir, ".gitignore")) : null,
    hasGit ? readRules(join(dir, ".git", "info", "exclude")) : null,
  ]);
  return { dir, hasGit, anyGit: hasGit || (parent?.anyGit ?? false), rg, ig, git, exclude, parent };
}

/** Whether a level adds nothing (it can be skipped in the chain). */
export function isEmptyLevel(level: IgnoreLevel): boolean {
  return !level.hasGit && !level.rg && !level.ig && !level.git && !level.exclude;
}

interface RuleResult {
  ignored: boolean;
  unignored: boolean;
}

/** Test one path against one rule set, without the parent-directory rule `test()` applies. */
function testOnly(rules: Ignore, rel: string): Verdict {
  const internal = (rules as unknown as {
    _rules?: { test?: (p: string, mode: string) => RuleResult };
  })._rules;
  const r = typeof internal?.test === "function" ? internal.test(rel, "regex") : rules.test(rel);
  return r.ignored ? "ignore" : r.unignored ? "whitelist" : null;
}

/**
 * The ignore-file verdict for an absolute path below `level.dir`: per category the deepest
 * decisive rule wins; categories rank `.rgignore` > `.ignore` > `.gitignore` > exclude.
 * Git rules count only inside a repository and not above its root.
 */
export function ignoreVerdict(level: IgnoreLevel | null, abs: string, isDir: boolean): Verdict {
  if (level === null) return null;
  let custom: Verdict = null;
  let plain: Verdict = null;
  let gi: Verdict = null;
  let ex: Verdict = null;
  let sawGit = false;
  const anyGit = level.anyGit;
  for (let l: IgnoreLevel | null = level; l !== null; l = l.parent) {
    if (!l.rg && !l.ig && !l.git && !l.exclude) {
      sawGit ||= l.hasGit;
      continue;
    }
    const rel = abs.slice(l.dir === "/" ? 1 : l.dir.length + 1) + (isDir ? "/" : "");
    if (custom === null && l.rg) custom = testOnly(l.rg, rel);
    if (plain === null && l.ig) plain = testOnly(l.ig, rel);
    if (anyGit && !sawGit && gi === null && l.git) gi = testOnly(l.git, rel);
    if (anyGit && !sawGit && ex === null && l.exclude) ex = testOnly(l.exclude, rel);
    sawGit ||= l.hasGit;
  }
  return custom ?? plain ?? gi ?? ex;
}
