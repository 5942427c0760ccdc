/**
 * Skill discovery (reference §10): the skills roots in precedence order, the skills of one
 * root, and the merged list where the first occurrence of a name (case-insensitive) wins.
 *
 * Roots, highest priority first:
 * 1. with `--skills-dir`: those directories (scope `extra`), replacing 2 and 3;
 * 2. project (from the project root, the nearest `.git` ancestor): the brand group
 *    `.kimi/skills`, `.claude/skills`, `.codex/skills` (all existing ones when
 *    `merge_all_available_skills`, else the first existing) then `.agents/skills`;
 * 3. user: `~/.kimi/skills`, `~/.claude/skills`, `~/.codex/skills` (same rule) then the first
 *    existing of `~/.config/agents/skills`, `~/.agents/skills`;
 * 4. `extra_skill_dirs` (absolute, `~/...`, or relative to the project root; missing skipped);
 * 5. `<share>/plugins` (scope `extra`);
 * 6. the built-in skills (embedded; scope `builtin`).
 *
 * @module
 */
import { pathStatus } from "../fs/exists.ts";
import { isAbsolute, join, resolve } from "node:path";
import type { SkillScope } from "../agent/skills_listing.ts";
import { findProjectRoot } from "../agent/agents_md.ts";
import { listAssets, readAsset } from "../assets/mod.ts";
import { loadYaml } from "../assets/yaml.ts";
import { log } from "../log.ts";
import { BUILTIN_SKILL_PREFIX, parseSkillText, type Skill, skillKey } from "./skill.ts";
import { isSecretFile } from "../tooling/sensitive.ts";
import type { ControlPath } from "../tooling/control_paths.ts";

/** A directory searched for skills. */
export interface SkillsRoot {
  /** Absolute directory path. */
  dir: string;
  /** Scope of the skills found there. */
  scope: SkillScope;
  /** Entries of the directory that are not searched (plugins kimi does not load). */
  skip?: ReadonlySet<string>;
}

/** Options of {@link resolveSkillsRoots} and {@link loadSkills}. */
export interface SkillsDiscoveryOptions {
  /** Working directory (the project root is found from it). */
  workDir: string;
  /** Home directory (user roots); null skips them. */
  home: string | null;
  /** Share dir (`<share>/plugins`). */
  shareDir: string;
  /** `--skills-dir` directories; non-empty replaces project and user discovery. */
  skillsDirs?: readonly string[];
  /** `merge_all_available_skills` (default true). */
  mergeAllAvailable?: boolean;
  /** `extra_skill_dirs`. */
  extraDirs?: readonly string[];
  /**
   * Plugin directories whose skills are not loaded: plugins that are disabled, changed since
   * they were installed, or not installed by kimi.
   */
  skipPlugins?: readonly string[];
  /** Include the built-in skills (default true). */
  builtin?: boolean;
  /** The session's control paths: a skill file leading to a secret one is skipped. */
  controls?: readonly ControlPath[];
}

async function brandAndGeneric(
  base: string,
  brand: readonly string[],
  generic: readonly string[],
  mergeAll: boolean,
): Promise<string[]> {
  // Every candidate is checked at once (start-up waits on one round of stats, not nine);
  // the choice below is the same as checking them in order.
  const isDir = async (rel: string) => (await pathStatus(join(base, rel))) === "directory";
  const [brandFound, genericFound] = await Promise.all([
    Promise.all(brand.map(isDir)),
    Promise.all(generic.map(isDir)),
  ]);
  const out: string[] = [];
  for (const [i, rel] of brand.entries()) {
    if (!brandFound[i]) continue;
    out.push(join(base, rel));
    if (!mergeAll) break;
  }
  const g = genericFound.indexOf(true);
  if (g >= 0) out.push(join(base, generic[g]));
  return out;
}

const BRAND_DIRS = [".kimi/skills", ".claude/skills", ".codex/skills"];

/** The existing project skills directories, highest priority first. */
export function findProjectSkillsDirs(projectRoot: string, mergeAll = true): Promise<string[]> {
  return brandAndGeneric(projectRoot, BRAND_DIRS, [".agents/skills"], mergeAll);
}

/** The existing user skills directories, highest priority first. */
export function findUserSkillsDirs(home: string, mergeAll = true): Promise<string[]> {
  return brandAndGeneric(home, BRAND_DIRS, [".config/agents/skills", ".agents/skills"], mergeAll);
}

function expandDir(dir: string, home: string | null, base: string): string {
  if (home && (dir === "~" || dir.startsWith("~/"))) return join(home, dir.slice(1));
  return isAbsolute(dir) ? resolve(dir) : resolve(base, dir);
}

/**
 * The file-system skills roots in precedence order (the built-in skills are not files and
 * come last, see {@link loadSkills}). Missing directories are left out, and a directory
 * reached twice (e.g. through a symlink) is kept only where it first appears.
 */
export async function resolveSkillsRoots(opts: SkillsDiscoveryOptions): Promise<SkillsRoot[]> {
  const mergeAll = opts.mergeAllAvailable ?? true;
  const projectRoot = await findProjectRoot(resolve(opts.workDir));
  const candidates: SkillsRoot[] = [];
  if (opts.skillsDirs && opts.skillsDirs.length > 0) {
    for (const d of opts.skillsDirs) {
      candidates.push({ dir: expandDir(d, opts.home, resolve(opts.workDir)), scope: "extra" });
    }
  } else {
    const [project, user] = await Promise.all([
      findProjectSkillsDirs(projectRoot, mergeAll),
      opts.home ? findUserSkillsDirs(opts.home, mergeAll) : Promise.resolve([]),
    ]);
    for (const dir of project) candidates.push({ dir, scope: "project" });
    for (const dir of user) candidates.push({ dir, scope: "user" });
  }
  for (const d of opts.extraDirs ?? []) {
    candidates.push({ dir: expandDir(d, opts.home, projectRoot), scope: "extra" });
  }
  candidates.push({
    dir: join(opts.shareDir, "plugins"),
    scope: "extra",
    ...(opts.skipPlugins?.length ? { skip: new Set(opts.skipPlugins) } : {}),
  });

  // Existence and real path of every candidate at once; kept in precedence order.
  const reals = await Promise.all(candidates.map(async (c) => {
    if ((await pathStatus(c.dir)) !== "directory") return null;
    try {
      return await Deno.realPath(c.dir);
    } catch {
      return c.dir; // keep the path as given
    }
  }));
  const seen = new Set<string>();
  const roots: SkillsRoot[] = [];
  candidates.forEach((c, i) => {
    const real = reals[i];
    if (real === null || seen.has(real)) return;
    seen.add(real);
    roots.push(c);
  });
  return roots;
}

async function readSkill(
  path: string,
  defaultName: string,
  scope: SkillScope,
  controls: readonly ControlPath[],
): Promise<Skill | null> {
  if (isSecretFile(path, controls)) {
    log("WARNING", "skills", `Skipping skill at ${path}: it leads to a file that holds secrets`);
    return null;
  }
  try {
    const text = await Deno.readTextFile(path);
    await loadYaml();
    return parseSkillText(text, { defaultName, path, scope });
  } catch (err) {
    log("INFO", "skills", `Skipping invalid skill at ${path}: ${(err as Error).message}`);
    return null;
  }
}

function byName(a: Skill, b: Skill): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The skills of one root, sorted by name: `<root>/<name>/SKILL.md` directories, then flat
 * `<root>/<name>.md` files whose name is not already taken by a directory skill.
 */
export async function discoverSkills(
  root: SkillsRoot,
  controls: readonly ControlPath[] = [],
): Promise<Skill[]> {
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(root.dir));
  } catch {
    return [];
  }
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const dirSkills: Skill[] = [];
  const flatFiles: Array<[string, string]> = [];
  for (const e of entries) {
    if (root.skip?.has(e.name)) continue;
    const path = join(root.dir, e.name);
    if ((await pathStatus(path)) === "directory") {
      const md = join(path, "SKILL.md");
      if (!((await pathStatus(md)) === "file")) continue;
      const skill = await readSkill(md, e.name, root.scope, controls);
      if (skill) dirSkills.push(skill);
    } else if (
      e.name.endsWith(".md") && e.name !== "SKILL.md" && (await pathStatus(path)) === "file"
    ) {
      flatFiles.push([path, e.name.slice(0, -3)]);
    }
  }
  const taken = new Set(dirSkills.map((s) => skillKey(s.name)));
  const flat: Skill[] = [];
  for (const [path, stem] of flatFiles) {
    const skill = await readSkill(path, stem, root.scope, controls);
    if (skill && !taken.has(skillKey(skill.name))) flat.push(skill);
  }
  return [...dirSkills, ...flat].sort(byName);
}

/** The built-in skills (embedded `skills/<name>/SKILL.md` assets). */
export function builtinSkills(): Skill[] {
  const out: Skill[] = [];
  for (const asset of listAssets("skills/")) {
    const m = asset.match(/^skills\/([^/]+)\/SKILL\.md$/);
    if (!m) continue;
    try {
      out.push(parseSkillText(readAsset(asset), {
        defaultName: m[1],
        path: BUILTIN_SKILL_PREFIX + asset,
        scope: "builtin",
      }));
    } catch (err) {
      log("ERROR", "skills", `Invalid built-in skill ${asset}: ${(err as Error).message}`);
    }
  }
  return out.sort(byName);
}

/** Merge per-root skill lists: the first skill with a given name (case-insensitive) wins. */
export function mergeSkills(lists: readonly (readonly Skill[])[]): Skill[] {
  const byKey = new Map<string, Skill>();
  for (const list of lists) {
    for (const s of list) if (!byKey.has(skillKey(s.name))) byKey.set(skillKey(s.name), s);
  }
  return [...byKey.values()].sort(byName);
}

/** Discover every skill available to a run, sorted by name. */
export async function loadSkills(opts: SkillsDiscoveryOptions): Promise<Skill[]> {
  const roots = await resolveSkillsRoots(opts);
  const lists: Skill[][] = await Promise.all(
    roots.map((root) => discoverSkills(root, opts.controls)),
  );
  if (opts.builtin ?? true) lists.push(builtinSkills());
  return mergeSkills(lists);
}

/** Find a skill by name, case-insensitively. */
export function findSkill(skills: readonly Skill[], name: string): Skill | undefined {
  const key = skillKey(name);
  return skills.find((s) => skillKey(s.name) === key);
}
