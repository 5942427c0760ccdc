/**
 * The one list of lazily imported modules (`scripts/lazy_modules.ts`) matches the source, and
 * the bundle and `deno compile` command lines include every entry of it.
 *
 * @module
 */
import {
  BUNDLE_SOURCE_PROTOCOL,
  bundledPackageFile,
  resolveLazy,
} from "../../../lib/lazy_import.ts";
import { bundleEntryPoints, lazyListProblems, rewriteLazyBases } from "../../../scripts/bundle.ts";
import { compileArgs, TARGETS } from "../../../scripts/build.ts";
import { DENO_V8_FLAGS_ARG } from "../../../lib/runtime_flags.ts";
import { LAZY_MODULES, LAZY_PACKAGES } from "../../../scripts/lazy_modules.ts";
import {
  lazyListProblemsOf,
  REPO_ROOT_URL,
  scanRepository,
  scanSource,
} from "../../../scripts/lazy_scan.ts";
import { assert, assertEquals } from "../../helpers/assert.ts";

const ROOT = decodeURIComponent(REPO_ROOT_URL.pathname).replace(/\/$/, "");

Deno.test("lazy modules: every lazyImport/lazyPackage in the source is in the list, and nothing stale", async () => {
  assertEquals(await lazyListProblems(), []);
  const calls = await scanRepository();
  // The scan sees the known call sites (a scanner that finds nothing would pass the check above).
  const targets = new Set(calls.map((c) => c.target));
  for (
    const known of [
      "lib/cli/entry.ts",
      "lib/ui/print/print_ui.ts",
      "tools/builtin_factories.ts",
      "linkedom",
    ]
  ) {
    assert(targets.has(known), `scan missed ${known}`);
  }
  for (const m of LAZY_MODULES) {
    assert((await Deno.stat(`${ROOT}/${m}`)).isFile, `${m} does not exist`);
  }
});

Deno.test("lazy modules: a new lazy import missing from the list is reported with its place", () => {
  const src = [
    'import { lazyImport, lazyPackage } from "../../lazy_import.ts";',
    "export async function f() {",
    '  const { runAcp } = await lazyImport<typeof import("./acp_server.ts")>(',
    '    "./acp_server.ts",',
    "    import.meta.url,",
    "  );",
    '  await lazyPackage<typeof import("left-pad")>("left-pad");',
    "  await lazyImport(name, import.meta.url);",
    '  await lazyImport("./x.ts", "file:///elsewhere/");',
    "}",
  ].join("\n");
  const calls = scanSource("lib/ui/acp/run.ts", src);
  assertEquals(calls.map((c) => [c.kind, c.target, c.line]), [
    ["module", "lib/ui/acp/acp_server.ts", 3],
    ["package", "left-pad", 7],
    ["module", null, 8],
    ["module", "lib/ui/acp/x.ts", 9],
  ]);
  assertEquals(lazyListProblemsOf(calls, ["lib/old.ts"], []), [
    "lib/ui/acp/run.ts:3: lib/ui/acp/acp_server.ts is imported lazily but missing from LAZY_MODULES",
    "lib/ui/acp/run.ts:7: left-pad is imported lazily but missing from LAZY_PACKAGES",
    "lib/ui/acp/run.ts:8: the specifier of a lazy import must be a string literal",
    "lib/ui/acp/run.ts:9: the base of lazyImport must be `import.meta.url`",
    "LAZY_MODULES lists lib/old.ts, which nothing imports lazily",
  ]);
});

Deno.test("lazy modules: the bundle and every compile target include each listed module and package", () => {
  const entries = bundleEntryPoints();
  for (const m of LAZY_MODULES) assert(entries.includes(m), `bundle misses ${m}`);
  for (const p of LAZY_PACKAGES) {
    assert(entries.includes(bundledPackageFile(p).replace(/\.js$/, ".ts")), `bundle misses ${p}`);
  }
  assert(entries.includes("main.ts") && entries.includes("scripts/launch.ts"));
  for (const target of TARGETS) {
    const args = compileArgs(target, "/out", "/repo");
    for (const m of LAZY_MODULES) {
      assert(args.includes(`--include=/repo/${m}`), `compile for ${target} misses ${m}`);
    }
    assertEquals(args.at(-1), "/repo/main.ts");
    assert(args.includes(`--target=${target}`));
    assert(args.includes(DENO_V8_FLAGS_ARG), `compile for ${target} misses the V8 flags`);
  }
});

Deno.test("lazy modules: the bundle rewrites lazy bases and lazy_import maps them to bundled files", () => {
  const src = 'x = lazyImport<typeof import("./a.ts")>("./a.ts", import.meta.url);\n' +
    'y = new URL("./b.ts", import.meta.url);\n';
  assertEquals(
    rewriteLazyBases("tools/registry.ts", src),
    'x = lazyImport<typeof import("./a.ts")>("./a.ts", "kimi-src:/tools/registry.ts");\n' +
      'y = new URL("./b.ts", import.meta.url);\n',
  );
  // Source runs resolve against the caller as before.
  assertEquals(
    resolveLazy("../lib/x.ts", "file:///r/tools/registry.ts"),
    "file:///r/lib/x.ts",
  );
  // Bundled runs resolve to `<bundle root>/<source path>.js`, next to this module's chunk.
  const bundled = resolveLazy(
    "../ui/print/print_ui.ts",
    `${BUNDLE_SOURCE_PROTOCOL}/lib/cli/run_agent.ts`,
  );
  const lazyImportUrl = new URL("../../../lib/lazy_import.ts", import.meta.url);
  assertEquals(bundled, new URL("./lib/ui/print/print_ui.js", lazyImportUrl).href);
  assertEquals(
    bundledPackageFile("@mozilla/readability"),
    "lazy_packages/@mozilla__readability.js",
  );
});
