/**
 * Where kimi keeps its pre-bundled npm packages, and the file name of one package's bundle.
 *
 * The cache dir is `KIMI_CACHE_DIR` when set, else `cache/` in the share dir (`~/.kimi/cache`).
 * Bundles live in its `deps/` directory, one file per package version and Deno version
 * (`openai@7.57.0+deno-2.9.6+f1.js`, the last part the bundle format), so an upgrade of
 * either never reuses an old bundle.
 *
 * The default place matters for safety: the share dir is a control path, read-only inside the
 * shell sandbox and refused to the file tools, so the agent cannot plant code kimi would run at
 * its next start. A `KIMI_CACHE_DIR` is registered as a control path too; it should not lie in
 * a directory the agent may write (tests and benchmarks point it at a shared temp dir).
 *
 * @module
 */
import { join, resolve } from "node:path";
import { shareDir } from "../config/share_dir.ts";
import type { ControlPath } from "../tooling/control_paths.ts";

/** How one package is pre-bundled. */
export interface PrebundleSpec {
  /**
   * Minify the bundle. Off for packages whose Node built-in imports are made lazy
   * (`lib/prebundle/transforms.ts` works on unminified code).
   */
  readonly minify: boolean;
}

/**
 * The packages kimi pre-bundles, by import-map name: loaded on the way to the first model
 * request (or `--help`), made of many modules or importing Node built-ins at load time, and
 * checked to work as one `deno bundle` file. commander's bundle loads `node:child_process`,
 * `node:fs` and `node:process` on first use, as the bundled build does.
 */
export const PREBUNDLES: Readonly<Record<string, PrebundleSpec>> = {
  openai: { minify: true },
  commander: { minify: false },
};

/** The names of {@link PREBUNDLES}. */
export const PREBUNDLED_PACKAGES: readonly string[] = Object.keys(PREBUNDLES);

/** Reads one environment variable; `undefined` when unset or not readable. */
export type CacheEnvReader = (key: string) => string | undefined;

/** kimi's cache directory (see the module doc), absolute; `null` when it cannot be located. */
export function kimiCacheDir(getEnv: CacheEnvReader): string | null {
  const configured = getEnv("KIMI_CACHE_DIR");
  if (configured) return resolve(configured);
  try {
    return join(shareDir(getEnv), "cache");
  } catch {
    return null; // no HOME and no KIMI_SHARE_DIR
  }
}

/** The directory of the pre-bundled packages inside the cache dir. */
export function depsDir(cacheDir: string): string {
  return join(cacheDir, "deps");
}

/** One package's bundle in the cache. */
export interface PrebundleTarget {
  /** Import-map name of the package, e.g. `openai`. */
  readonly name: string;
  /** Exact version Deno resolved for it, e.g. `7.57.0`. */
  readonly version: string;
  /** Absolute path of the bundle file. */
  readonly file: string;
  /** Absolute path of the marker a build holds while it runs (and keeps when it failed). */
  readonly marker: string;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The exact version of package `name` in the URL Deno resolved it to: a file of the global
 * npm cache (`…/npm/<registry host>/<name>/<version>/…`) or of a `node_modules` directory
 * (`…/node_modules/.deno/<name>@<version>/…`). `null` for any other URL.
 */
export function resolvedPackageVersion(name: string, resolvedUrl: string): string | null {
  const n = escapeRegExp(name);
  const version = "([0-9][0-9A-Za-z.+_-]*)";
  const global = new RegExp(`/npm/[^/]+/${n}/${version}/`).exec(resolvedUrl);
  if (global) return global[1];
  const local = new RegExp(`/node_modules/\\.deno/${n.replace("/", "\\+")}@${version}/`).exec(
    resolvedUrl,
  );
  return local ? local[1] : null;
}

/**
 * The version of how bundles are made (`build.ts`, `transforms.ts`), part of every file name:
 * raise it when a change to either makes older bundles wrong.
 */
export const PREBUNDLE_FORMAT = 1;

/** The bundle of `name` at `version`, built by Deno `denoVersion`, in `cacheDir`. */
export function prebundleTarget(
  opts: { name: string; version: string; cacheDir: string; denoVersion: string },
): PrebundleTarget {
  const base = `${opts.name.replace(/\//g, "__")}@${opts.version}+deno-${opts.denoVersion}` +
    `+f${PREBUNDLE_FORMAT}.js`;
  const file = join(depsDir(opts.cacheDir), base);
  return { name: opts.name, version: opts.version, file, marker: `${file}.building` };
}

/**
 * The control path of the cache dir: it holds code kimi runs, so the agent may not change it
 * (see `lib/tooling/control_paths.ts`). Empty when no cache dir is located.
 */
export function cacheControlPaths(getEnv: CacheEnvReader): ControlPath[] {
  const dir = kimiCacheDir(getEnv);
  return dir === null ? [] : [{
    path: dir,
    kind: "dir",
    what: "kimi's cache (pre-bundled packages kimi runs)",
    secret: false,
  }];
}
