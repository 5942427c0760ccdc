/**
 * Importing a module on first use without Deno preloading it at start-up.
 *
 * Deno loads every module named by a literal `import("./x.ts")` before the program starts, so
 * mode-specific code (UIs, providers, tools) would be loaded by every run. A specifier built at
 * run time is only loaded when the call happens. (Bundling or `deno compile` must then include
 * these modules explicitly.)
 *
 * @module
 */

/** Import `specifier` relative to `base` (pass `import.meta.url`) when first needed. */
export function lazyImport<T>(specifier: string, base: string): Promise<T> {
  return import(new URL(specifier, base).href) as Promise<T>;
}

/** Import a bare package specifier (resolved through the import map) when first needed. */
export function lazyPackage<T>(name: string): Promise<T> {
  return import(name) as Promise<T>;
}
