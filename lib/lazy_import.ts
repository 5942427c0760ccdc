/**
 * Importing a module on first use without Deno preloading it at start-up.
 *
 * Deno loads every module named by a literal `import("./x.ts")` before the program starts, so
 * mode-specific code (UIs, providers, tools) would be loaded by every run. A specifier built at
 * run time is only loaded when the call happens.
 *
 * The bundle and the compiled binaries cannot see these imports, so every lazily imported
 * module and package is listed in `scripts/lazy_modules.ts` (a test fails when one is missing).
 * In the bundle (`deno task bundle`) each listed module is an entry point at its source path
 * with a `.js` extension, each listed package a `lazy_packages/<name>.js` entry, and the build
 * rewrites the `import.meta.url` argument of every call to `kimi-src:/<source path>`; this
 * module maps such bases to the bundled files.
 *
 * @module
 */

/** The base the bundle build gives lazy calls in place of `import.meta.url`. */
export const BUNDLE_SOURCE_PROTOCOL = "kimi-src:";

/**
 * The bundle's root directory: the code of this module sits in a chunk at the root of the
 * bundle (chunks are always written there), next to `main.js`.
 */
const HERE = import.meta.url;

/** The file name of the bundled entry for a package name (`@a/b` -> `@a__b`). */
export function bundledPackageFile(name: string): string {
  return `lazy_packages/${name.replace(/\//g, "__")}.js`;
}

/** The URL to import for `specifier` relative to `base` (source or bundle). */
export function resolveLazy(specifier: string, base: string): string {
  const url = new URL(specifier, base);
  if (url.protocol !== BUNDLE_SOURCE_PROTOCOL) return url.href;
  return new URL(`.${url.pathname.replace(/\.ts$/, ".js")}`, HERE).href;
}

/** Import `specifier` relative to `base` (pass `import.meta.url`) when first needed. */
export function lazyImport<T>(specifier: string, base: string): Promise<T> {
  return import(resolveLazy(specifier, base)) as Promise<T>;
}

/** Import a bare package specifier (resolved through the import map) when first needed. */
export async function lazyPackage<T>(name: string): Promise<T> {
  if (HERE.endsWith(".js")) {
    // In the bundle: the package's namespace, re-exported by its generated entry.
    const mod = await import(new URL(bundledPackageFile(name), HERE).href);
    return mod.ns as T;
  }
  return await import(name) as T;
}
