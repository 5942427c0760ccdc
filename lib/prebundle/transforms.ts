/**
 * Rewrites of bundled npm code that keep Node's machinery off the start path, shared by the
 * bundled build (`scripts/bundle.ts`) and the pre-bundled packages (`lib/prebundle/build.ts`).
 * Both work on `deno bundle`'s unminified output.
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
const DEFERRED_BUILTINS = ["node:child_process", "node:fs", "node:process"];

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
 * Default imports of `node:child_process`, `node:fs` and `node:process` become objects that
 * load the module on first use. Commander imports all three at load time but needs them only
 * for executable subcommands, `process.exit` and writing help: without this every `kimi --help`
 * and agent run loads them (and `node:process` pulls in some 30 more Node polyfill modules).
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
