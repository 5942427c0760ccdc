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

/** Functions of Node built-ins that bundled packages import at load time but rarely call. */
const DEFERRED_FUNCTIONS: Readonly<Record<string, readonly string[]>> = {
  // commander's colour stripping, which kimi's own `stripColor`/`displayWidth` replace
  "node:util": ["stripVTControlCharacters"],
};

/**
 * Named imports of the functions in {@link DEFERRED_FUNCTIONS} become functions that load the
 * built-in on their first call (`import { f as g } from "node:util"` →
 * `var g = (...args) => process.getBuiltinModule("node:util").f(...args)`). Commander imports
 * `stripVTControlCharacters` at load time; kimi gives commander its own colour stripping, so
 * `kimi --help` never calls it, and loading `node:util` would start Node's compatibility layer.
 * Imports naming any other binding are kept as they are.
 */
export function deferBuiltinFunctions(text: string): string {
  let out = text;
  for (const [id, names] of Object.entries(DEFERRED_FUNCTIONS)) {
    const re = new RegExp(`^import \\{ ([^}]+) \\} from "${id}";$`, "gm");
    out = out.replace(re, (line, list: string) => {
      const bindings = list.split(",").map((b) => b.trim().split(/\s+as\s+/));
      if (!bindings.every(([name]) => names.includes(name))) return line;
      return bindings.map(([name, local = name]) =>
        `var ${local} = (...args) => globalThis.process.getBuiltinModule(${
          JSON.stringify(id)
        }).${name}(...args);`
      ).join("\n");
    });
  }
  return out;
}

/** The bundle's port of `node:events`, relative to the bundle's root (see {@link useEventsPort}). */
export const EVENTS_PORT = "scripts/bundle_ports/node_events.js";
const EVENTS_IMPORT = 'import { EventEmitter } from "node:events";';
const COMMAND_CLASS = "class _Command extends EventEmitter {";

/**
 * commander's `Command` extends Node's `EventEmitter`, so loading commander (every
 * `kimi --help`) would start Node's compatibility layer for `node:events` alone. In the chunk
 * that holds commander, `EventEmitter` comes instead from the `events` package, the userland port
 * of Node's emitter that browser bundlers use ({@link EVENTS_PORT}, an entry of the bundle):
 * commander only calls `on`, `emit` and `listenerCount`. Only an unminified chunk is rewritten,
 * and only when `EventEmitter` is used there by commander's class alone; anything else in the
 * chunk using it throws, so the build stops instead of changing what other code gets.
 */
export function useEventsPort(text: string, fromRoot: string): string {
  if (!text.includes(EVENTS_IMPORT) || !text.includes(COMMAND_CLASS)) return text;
  const uses = text.match(/\bEventEmitter\b/g)?.length ?? 0;
  if (uses !== 2) {
    throw new Error(
      `commander's chunk uses EventEmitter ${uses - 1} times besides its import (expected 1, ` +
        "commander's Command): check that the events port suits the new users",
    );
  }
  const rel = `${fromRoot}${EVENTS_PORT}`;
  return text.replace(EVENTS_IMPORT, `import { EventEmitter } from ${JSON.stringify(rel)};`);
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
