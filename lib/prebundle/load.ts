/**
 * Pre-bundled npm packages for runs from the source.
 *
 * Run from a checkout, Deno loads an npm package file by file: the `openai` SDK is 236 modules,
 * about 20 ms of every start. For the packages that ask for it, kimi keeps a one-file bundle in
 * its cache dir (see `lib/prebundle/location.ts`), made by `deno bundle` from the same package
 * files Deno already has, and imports that instead: as Python keeps `__pycache__` and Vite
 * pre-bundles dependencies. The first run that finds no bundle loads the package as usual and
 * starts the build in the background (`lib/prebundle/build.ts`); later runs use the bundle.
 *
 * Never used by the bundled build and the compiled binaries (their npm code is bundled
 * already), by a run of the source from a URL, or by a run that may not read the cache, write
 * it or run `deno`: the package then loads from npm as usual. The cache dir is a control path
 * (it holds code kimi runs), so the agent cannot plant a bundle there.
 *
 * @module
 */
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { log } from "../log.ts";
import {
  type CacheEnvReader,
  kimiCacheDir,
  PREBUNDLED_PACKAGES,
  type PrebundleTarget,
  prebundleTarget,
  resolvedPackageVersion,
} from "./location.ts";

const HERE = import.meta.url;

/** Whether this run loads kimi's TypeScript source from disk (not the bundle, a binary or a URL). */
export const RUNS_FROM_SOURCE_FILES: boolean = HERE.startsWith("file:") &&
  HERE.endsWith(".ts") && !Deno.build.standalone;

/**
 * How long a build marker holds off new builds: one in progress (`building`) or one that
 * failed (`failed`, which keeps the reason).
 */
export const MARKER_TTL_MS: { readonly building: number; readonly failed: number } = {
  building: 10 * 60_000,
  failed: 24 * 60 * 60_000,
};

function readEnv(key: string): string | undefined {
  try {
    return Deno.env.get(key);
  } catch {
    return undefined;
  }
}

function granted(desc: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(desc).state === "granted";
  } catch {
    return false;
  }
}

/** Options of {@link withPrebundle}. */
export interface WithPrebundleOptions {
  /** Environment reader (default: the process environment, unreadable counts as unset). */
  getEnv?: CacheEnvReader;
}

/**
 * The bundle of `name` for this run, or `null` when it does not use one (see the module doc).
 */
export function prebundleFor(
  name: string,
  opts: WithPrebundleOptions = {},
): PrebundleTarget | null {
  if (!RUNS_FROM_SOURCE_FILES || !PREBUNDLED_PACKAGES.includes(name)) return null;
  let resolved: string;
  try {
    resolved = import.meta.resolve(name); // through the import map, into Deno's npm cache
  } catch {
    return null;
  }
  const version = resolvedPackageVersion(name, resolved);
  const cacheDir = kimiCacheDir(opts.getEnv ?? readEnv);
  if (version === null || cacheDir === null) return null;
  return prebundleTarget({ name, version, cacheDir, denoVersion: Deno.version.deno });
}

/**
 * Load package `name` from its pre-bundle when there is one, else with `load` (a
 * `lazyPackage` call), starting a background build of the bundle for the next runs.
 * Resolves with the package's namespace either way.
 */
export async function withPrebundle<T>(
  name: string,
  load: () => Promise<T>,
  opts: WithPrebundleOptions = {},
): Promise<T> {
  const target = prebundleFor(name, opts);
  if (target === null) return await load();
  const bundled = await importPrebundle<T>(target);
  if (bundled !== null) return bundled;
  const mod = await load();
  startPrebundleBuild(target);
  return mod;
}

/** The namespace exported by the bundle of `target`, or `null` when it is absent or broken. */
export async function importPrebundle<T>(target: PrebundleTarget): Promise<T | null> {
  if (!granted({ name: "read", path: target.file })) return null;
  try {
    Deno.statSync(target.file);
  } catch {
    return null;
  }
  try {
    const mod = await import(pathToFileURL(target.file).href);
    if (typeof mod.ns === "object" && mod.ns !== null) {
      log("DEBUG", "prebundle", `${target.name} loaded from ${target.file}`);
      return mod.ns as T;
    }
  } catch (err) {
    log("WARNING", "prebundle", `${target.file} does not load (${errorText(err)}); removing it`);
  }
  // A bundle that does not load is removed, so a later run builds it again.
  try {
    Deno.removeSync(target.file);
  } catch {
    // not ours to remove, or already gone
  }
  return null;
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}

/**
 * Take the build marker: create it, or replace one whose time is up (see
 * {@link MARKER_TTL_MS}). `false` when another build holds it.
 */
export function claimPrebundleMarker(marker: string, now: number = Date.now()): boolean {
  const claim = () => {
    Deno.writeTextFileSync(marker, `building ${Deno.pid}\n`, { createNew: true });
    return true;
  };
  try {
    return claim();
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) return false;
  }
  try {
    const age = now - (Deno.statSync(marker).mtime?.getTime() ?? 0);
    const failed = Deno.readTextFileSync(marker).startsWith("failed");
    if (age < (failed ? MARKER_TTL_MS.failed : MARKER_TTL_MS.building)) return false;
    Deno.removeSync(marker);
    return claim();
  } catch {
    return false;
  }
}

/**
 * Start building the bundle of `target` in a detached process, when this run may (read and
 * write the cache's `deps/` directory, run `deno`) and no other build holds the marker. Never
 * throws; returns whether a build started.
 */
export function startPrebundleBuild(target: PrebundleTarget): boolean {
  try {
    const dir = dirname(target.file);
    if (!granted({ name: "write", path: dir }) || !granted({ name: "read", path: dir })) {
      return false;
    }
    const deno = Deno.execPath();
    if (!granted({ name: "run", command: deno })) return false;
    Deno.mkdirSync(dir, { recursive: true });
    if (!claimPrebundleMarker(target.marker)) return false;
    const child = new Deno.Command(deno, {
      args: [
        "run",
        "--no-prompt",
        "--no-config",
        "--no-lock",
        `--allow-read=${dir}`,
        `--allow-write=${dir}`,
        `--allow-run=${deno}`,
        new URL("./build.ts", import.meta.url).href,
        target.name,
        target.version,
        target.file,
        target.marker,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.unref();
    log("INFO", "prebundle", `building ${target.file} in the background (pid ${child.pid})`);
    return true;
  } catch (err) {
    log("WARNING", "prebundle", `cannot build the bundle of ${target.name}: ${errorText(err)}`);
    return false;
  }
}
