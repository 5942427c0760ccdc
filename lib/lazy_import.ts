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

/**
 * The generated module that carries a lazily imported package's own files in the bundle
 * (`lazy_packages/<name>.files.js`, base64 by file name), for packages that read files from
 * their directory (listed in `PACKAGE_FILES` of `scripts/lazy_modules.ts`).
 */
export function bundledPackageFilesModule(name: string): string {
  return bundledPackageFile(name).replace(/\.js$/, ".files.js");
}

/**
 * A file that `name` ships in its own directory (e.g. a `.wasm`): its bytes when running from
 * the bundle, which has no package directories (the file travels inside the bundle, so it loads
 * wherever the bundle does, `http(s)://` included, under the same import permission); `null`
 * when running from the source, where the package reads it from its directory itself.
 */
export async function lazyPackageFile(name: string, file: string): Promise<Uint8Array | null> {
  if (!HERE.endsWith(".js")) return null;
  const mod = await import(new URL(bundledPackageFilesModule(name), HERE).href);
  const b64: string | undefined = mod.files[file.slice(file.lastIndexOf("/") + 1)];
  if (b64 === undefined) throw new Error(`${name}/${file} is not in the bundle`);
  const fromBase64 = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array })
    .fromBase64;
  if (fromBase64) return fromBase64(b64);
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
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
