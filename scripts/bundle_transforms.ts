/**
 * Rewrites of `deno bundle`'s output made by `scripts/bundle.ts`: they keep Node's machinery
 * and the code-split chunks of other modes off the start path, and the build machine's paths
 * out of the bundle. They work on unminified and minified output alike unless noted.
 *
 * @module
 */

const EAGER_REQUIRE_IMPORT =
  'import { createRequire as __deno_internal_createRequire } from "node:module";\n';
const EAGER_REQUIRE = "var __require = __deno_internal_createRequire(import.meta.url);";
const LAZY_REQUIRE = "var __require = (id) => {\n" +
  "  const p = globalThis.process;\n" +
  '  return p.getBuiltinModule(id) ?? p.getBuiltinModule("node:module").createRequire(\n' +
  '    import.meta.url.startsWith("file:") ? import.meta.url : "file:///",\n' +
  "  )(id);\n" +
  "};";

/**
 * `deno bundle` gives bundled CommonJS code a `require` made at load time by
 * `createRequire(import.meta.url)` from `node:module`: that throws when the bundle is imported
 * from an `http(s)://` URL, and loads Node's module system into every run (even `--version`).
 * Bundled code only requires Node built-ins, so `require` becomes a function that gets them
 * with `process.getBuiltinModule` when first called (anything else still goes through
 * `createRequire`).
 */
export function patchCreateRequire(text: string): string {
  if (!text.includes(EAGER_REQUIRE)) return text;
  return text.replace(EAGER_REQUIRE_IMPORT, "").replace(EAGER_REQUIRE, LAZY_REQUIRE);
}

/** Node built-ins that bundled packages import at load time but use only in rare paths. */
const DEFERRED_BUILTINS = ["node:child_process", "node:fs", "node:path", "node:process"];

const LAZY_BUILTIN = "var __kimiLazyBuiltin = (id) => {\n" +
  "  let mod;\n" +
  "  const get = () => mod ??= globalThis.process.getBuiltinModule(id);\n" +
  "  return new Proxy({}, {\n" +
  "    get: (_, key) => get()[key],\n" +
  "    has: (_, key) => key in get(),\n" +
  "    ownKeys: () => Reflect.ownKeys(get()),\n" +
  "    getOwnPropertyDescriptor: (_, key) => {\n" +
  "      const d = Reflect.getOwnPropertyDescriptor(get(), key);\n" +
  "      return d && { ...d, configurable: true };\n" +
  "    },\n" +
  "  });\n" +
  "};\n";

/**
 * Default imports of `node:child_process`, `node:fs`, `node:path` and `node:process` become
 * objects that load the module on first use. Commander imports all four at load time but needs
 * them only for executable subcommands, its script name, `process.exit` and writing help:
 * without this every `kimi --help` and agent run loads them (`node:process` pulls in some 30
 * more Node polyfill modules; `node:path` costs `kimi --help` about 2.5 ms, kimi's own modules
 * import it by name only where an agent runs).
 */
export function deferBuiltinImports(text: string): string {
  let out = text;
  let helper = false;
  for (const id of DEFERRED_BUILTINS) {
    const re = new RegExp(`^import ([A-Za-z_$][\\w$]*) from "${id}";$`, "m");
    const m = re.exec(out);
    if (!m) continue;
    out = out.replace(
      m[0],
      `${helper ? "" : LAZY_BUILTIN}var ${m[1]} = __kimiLazyBuiltin(${JSON.stringify(id)});`,
    );
    helper = true;
  }
  return out;
}

/** A literal dynamic import of a sibling chunk as esbuild writes it (`import("./x-HASH.js")`). */
const CHUNK_IMPORT = /\bimport\(\s*(["'])(\.{1,2}\/[^"'\s]+\.js)\1\s*\)/g;

/**
 * Literal dynamic imports of the bundle's chunks become computed ones
 * (`import(new URL("./x.js", import.meta.url).href)`): the same module at the same URL, but
 * Deno loads it when the call runs. A bundle runs with `--no-config`, so Deno's
 * `lazy-dynamic-imports` setting (deno.json) does not reach it, and Deno would otherwise fetch
 * and parse every chunk of every mode before `main.js` starts.
 */
export function deferChunkImports(text: string): string {
  return text.replace(
    CHUNK_IMPORT,
    (_, q: string, spec: string) => `import(new URL(${q}${spec}${q}, import.meta.url).href)`,
  );
}

/**
 * The bundler names each npm module by its path in the build machine's Deno cache (in comments
 * and in CommonJS wrapper keys); `npm:<package>/<version>/<file>` says the same without it.
 */
export function stripCachePaths(text: string): string {
  return text.replace(/(?:\.\.\/)+[^\s"'`]*?\/npm\/[^/\s"'`]+\//g, "npm:");
}

const SCRIPT_URL_THROW = 'throw new Error("Unable to determine script URL");';

/**
 * Emscripten code (tree-sitter's runtime) asks for its own script's path at load time, which a
 * bundled ES module has none of; it then gets a placeholder `file:` URL (its wasm comes from
 * the module `BUNDLED_WASM_MODULE` of `lib/permission/shell_parse.ts`, so nothing is read from
 * there).
 */
export function patchScriptUrl(text: string): string {
  return text.replaceAll(SCRIPT_URL_THROW, 'return "file:///kimi-bundle/";');
}
