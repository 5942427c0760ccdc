/**
 * The bundle's post-processing (scripts/bundle.ts): `require` made lazy and usable from an http
 * URL, commander's rarely used Node built-ins deferred, and chunk imports computed (so Deno loads
 * a chunk when it is imported), without changing what code sees.
 *
 * @module
 */
import {
  deferBuiltinFunctions,
  deferBuiltinImports,
  deferChunkImports,
  patchCreateRequire,
  stripCachePaths,
  useEventsPort,
} from "../../../scripts/bundle.ts";
import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";

async function importSource(src: string): Promise<Record<string, any>> {
  return await import(`data:application/javascript;base64,${btoa(src)}`);
}

Deno.test("bundle: deferred node:fs / node:child_process / node:path behave like the modules", async () => {
  const src = 'import childProcess from "node:child_process";\n' +
    'import path from "node:path";\n' +
    'import fs from "node:fs";\n' +
    'import { EventEmitter } from "node:events";\n' +
    "export const emitter = () => typeof EventEmitter;\n" +
    "export const exists = (p) => fs.existsSync(p);\n" +
    'export const hasSpawn = () => typeof childProcess.spawn === "function" && "spawn" in childProcess;\n' +
    'export const keys = () => Object.keys(fs).includes("readFileSync");\n' +
    "export const base = (p) => path.basename(p);\n";
  const out = deferBuiltinImports(src);
  assert(
    !out.includes('from "node:fs"') && !out.includes('from "node:child_process"') &&
      !out.includes('from "node:path"'),
    out,
  );
  assert(out.includes('import { EventEmitter } from "node:events";'), "other imports are kept");
  const m = await importSource(out);
  assertEquals([
    m.exists("/"),
    m.exists("/nonexistent-kimi"),
    m.hasSpawn(),
    m.keys(),
    m.base("/a/b.ts"),
    m.emitter(),
  ], [
    true,
    false,
    true,
    true,
    "b.ts",
    "function",
  ]);
  assertEquals(deferBuiltinImports("export const x = 1;\n"), "export const x = 1;\n");
});

Deno.test("bundle: require works from an http-style URL and only loads on first call", async () => {
  const eager = 'import { createRequire as __deno_internal_createRequire } from "node:module";\n' +
    "var __require = __deno_internal_createRequire(import.meta.url);\n" +
    'export const req = () => __require("node:path").basename("/x/y.js");\n';
  const out = patchCreateRequire(eager);
  assert(!out.includes('node:module";'), out);
  // A data: URL is not a file: URL, like an http(s) one; the eager form throws on import.
  const m = await importSource(out);
  assertEquals(m.req(), "y.js");
  let threw = false;
  try {
    await importSource(eager);
  } catch {
    threw = true;
  }
  assert(threw, "the unpatched form must fail outside file: URLs (or the test proves nothing)");
});

Deno.test("bundle: the build machine's cache paths are not written into the bundle", () => {
  assertEquals(
    stripCachePaths(
      "// ../../home/user/.cache/deno/npm/registry.npmjs.org/yaml/2.9.1/dist/nodes/identity.js\n" +
        '  "../../home/u/.cache/deno/npm/registry.npmjs.org/@scope/pkg/1.0.0/index.js"(exports) {\n' +
        "// lib/cli/main.ts\n",
    ),
    "// npm:yaml/2.9.1/dist/nodes/identity.js\n" +
      '  "npm:@scope/pkg/1.0.0/index.js"(exports) {\n' +
      "// lib/cli/main.ts\n",
  );
});

Deno.test("bundle: chunk imports become computed imports of the same URL; others stay", () => {
  assertEquals(
    deferChunkImports(
      'const m = await import("./print_ui-AB12.js");\n' +
        "x = import('../chunk-Q.js').then(f);\n" +
        'y = import("node:fs");\n' +
        "z = import(spec);\n",
    ),
    'const m = await import(new URL("./print_ui-AB12.js", import.meta.url).href);\n' +
      "x = import(new URL('../chunk-Q.js', import.meta.url).href).then(f);\n" +
      'y = import("node:fs");\n' +
      "z = import(spec);\n",
  );
});

Deno.test("bundle: a computed chunk import loads the same module", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kimi-chunk-" });
  try {
    await Deno.writeTextFile(`${dir}/chunk-A.js`, "export const v = 42;\n");
    await Deno.writeTextFile(
      `${dir}/main.js`,
      deferChunkImports('export const load = () => import("./chunk-A.js").then((m) => m.v);\n'),
    );
    const main = await import(`file://${dir}/main.js`);
    assertEquals(await main.load(), 42);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("bundle: a deferred node:util function loads the module on its first call only", async () => {
  const src =
    'import { stripVTControlCharacters as strip2, stripVTControlCharacters } from "node:util";\n' +
    'import { inspect } from "node:util";\n' +
    "export const a = (s) => strip2(s);\n" +
    "export const b = (s) => stripVTControlCharacters(s);\n" +
    "export const c = () => typeof inspect;\n";
  const out = deferBuiltinFunctions(src);
  assertEquals(out.split("\n").slice(0, 3), [
    'var strip2 = (...args) => globalThis.process.getBuiltinModule("node:util").stripVTControlCharacters(...args);',
    'var stripVTControlCharacters = (...args) => globalThis.process.getBuiltinModule("node:util").stripVTControlCharacters(...args);',
    // an import naming any other binding is kept
    'import { inspect } from "node:util";',
  ]);
  const m = await importSource(out);
  assertEquals([m.a("\x1b[31mred\x1b[0m"), m.b("\x1b[1mb\x1b[22m"), m.c()], [
    "red",
    "b",
    "function",
  ]);
  assertEquals(deferBuiltinFunctions("export const x = 1;\n"), "export const x = 1;\n");
});

Deno.test("bundle: commander's chunk takes EventEmitter from the events port, nothing else does", () => {
  const chunk = 'import { EventEmitter } from "node:events";\n' +
    "var Command = class _Command extends EventEmitter {\n};\n";
  assertEquals(
    useEventsPort(chunk, "./"),
    'import { EventEmitter } from "./scripts/bundle_ports/node_events.js";\n' +
      "var Command = class _Command extends EventEmitter {\n};\n",
  );
  assertEquals(
    useEventsPort(chunk, "../"),
    'import { EventEmitter } from "../scripts/bundle_ports/node_events.js";\n' +
      "var Command = class _Command extends EventEmitter {\n};\n",
  );
  // a chunk without commander keeps Node's emitter
  const other = 'import { EventEmitter } from "node:events";\nclass S extends EventEmitter {}\n';
  assertEquals(useEventsPort(other, "./"), other);
  // another user of EventEmitter in commander's chunk stops the build
  assertThrows(
    () => useEventsPort(`${chunk}var e = new EventEmitter();\n`, "./"),
    /uses EventEmitter 2 times besides its import/,
  );
});
