import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { join } from "node:path";
import {
  cacheControlPaths,
  kimiCacheDir,
  PREBUNDLED_PACKAGES,
  prebundleTarget,
  resolvedPackageVersion,
} from "../../../lib/prebundle/location.ts";
import {
  claimPrebundleMarker,
  importPrebundle,
  MARKER_TTL_MS,
  prebundleFor,
  RUNS_FROM_SOURCE_FILES,
  withPrebundle,
} from "../../../lib/prebundle/load.ts";
import { ABANDONED_BUILD_MS, buildPrebundle } from "../../../lib/prebundle/build.ts";
import { ControlPathSet, matchControlPath } from "../../../lib/tooling/control_paths.ts";

const env = (vars: Record<string, string>) => (k: string) => vars[k];

/** Run `fn` with a new temp dir, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The pre-bundle of `name` in the kimi cache `cache`. */
function targetIn(cache: string, name: string) {
  return located(prebundleFor(name, { getEnv: env({ KIMI_CACHE_DIR: cache }) }), name);
}

function located<T>(value: T | null, what: string): T {
  if (value === null) throw new Error(`${what} is not located`);
  return value;
}

Deno.test("prebundle location: KIMI_CACHE_DIR, else cache/ in the share dir", () => {
  assertEquals(kimiCacheDir(env({ KIMI_CACHE_DIR: "/c/kimi", HOME: "/h" })), "/c/kimi");
  assertEquals(kimiCacheDir(env({ KIMI_SHARE_DIR: "/s", HOME: "/h" })), "/s/cache");
  assertEquals(kimiCacheDir(env({ HOME: "/h" })), "/h/.kimi/cache");
  assertEquals(kimiCacheDir(env({})), null);
});

Deno.test("prebundle location: the exact version from where Deno resolved the package", () => {
  const global = "file:///d/npm/registry.npmjs.org/openai/7.57.0/index.mjs";
  assertEquals(resolvedPackageVersion("openai", global), "7.57.0");
  assertEquals(
    resolvedPackageVersion("@a/b", "file:///d/npm/registry.npmjs.org/@a/b/1.2.3-rc.1/x.js"),
    "1.2.3-rc.1",
  );
  assertEquals(
    resolvedPackageVersion("openai", "file:///p/node_modules/.deno/openai@7.57.0/node_modules/x"),
    "7.57.0",
  );
  assertEquals(
    resolvedPackageVersion("@a/b", "file:///p/node_modules/.deno/@a+b@2.0.0/node_modules/x"),
    "2.0.0",
  );
  assertEquals(resolvedPackageVersion("openai", "file:///repo/vendor/openai.js"), null);
  // another package's directory does not count
  assertEquals(
    resolvedPackageVersion("openai", "file:///d/npm/registry.npmjs.org/not-openai/1.0.0/i.js"),
    null,
  );
});

Deno.test("prebundle location: one file per package version and Deno version", () => {
  const t = prebundleTarget({
    name: "@a/b",
    version: "1.0.0",
    cacheDir: "/c",
    denoVersion: "2.9.6",
  });
  assertEquals(t.file, "/c/deps/@a__b@1.0.0+deno-2.9.6+f1.js");
  assertEquals(t.marker, "/c/deps/@a__b@1.0.0+deno-2.9.6+f1.js.building");
});

Deno.test("prebundle: only the listed packages, and this run resolves them from npm", () => {
  assert(RUNS_FROM_SOURCE_FILES, "the tests run the source files");
  assertEquals(prebundleFor("yaml", { getEnv: env({ KIMI_CACHE_DIR: "/c" }) }), null);
  for (const name of PREBUNDLED_PACKAGES) {
    const t = located(prebundleFor(name, { getEnv: env({ KIMI_CACHE_DIR: "/c" }) }), name);
    assert(t.file.startsWith(`/c/deps/${name}@`), t.file);
    assert(t.file.endsWith(`+deno-${Deno.version.deno}+f1.js`), t.file);
  }
});

Deno.test("prebundle: a KIMI_CACHE_DIR is a control path the file tools refuse", () => {
  const [cp] = cacheControlPaths(env({ KIMI_CACHE_DIR: "/var/cache/kimi-x" }));
  assertEquals(cp.path, "/var/cache/kimi-x");
  assertEquals(cp.kind, "dir");
  assertEquals(cp.secret, false);
  const controls = new ControlPathSet("/s", { cache: [cp] });
  const hit = matchControlPath("/var/cache/kimi-x/deps/openai@1+deno-2.js", controls.list());
  assertEquals(hit?.path, "/var/cache/kimi-x");
  // the default cache is inside the share dir, itself a control path
  assertEquals(cacheControlPaths(env({ HOME: "/h" }))[0].path, "/h/.kimi/cache");
  assertEquals(cacheControlPaths(env({})), []);
});

Deno.test("prebundle marker: one build at a time; stale and failed markers expire", async () => {
  await inTempDir(async (dir) => {
    const marker = join(dir, "x.js.building");
    assert(claimPrebundleMarker(marker));
    assert(!claimPrebundleMarker(marker), "a running build holds it");
    const now = Date.now();
    assert(claimPrebundleMarker(marker, now + MARKER_TTL_MS.building + 1000), "stale build");
    await Deno.writeTextFile(marker, "failed: boom\n");
    assert(!claimPrebundleMarker(marker, now + MARKER_TTL_MS.building + 1000), "failed lasts");
    assert(claimPrebundleMarker(marker, now + MARKER_TTL_MS.failed + 1000), "failed expires");
    assertStringIncludes(await Deno.readTextFile(marker), `building ${Deno.pid}`);
  });
});

Deno.test("prebundle: build, load without the package, remove a broken bundle", async () => {
  await inTempDir(async (cache) => {
    const target = targetIn(cache, "openai");
    await Deno.mkdir(join(cache, "deps"));
    await Deno.writeTextFile(target.marker, "building 1\n");
    // a build killed long ago left its temp dir; a running one's is recent
    const base = target.file.slice(target.file.lastIndexOf("/") + 1);
    const abandoned = join(cache, "deps", `.${base}.killed`);
    const running = join(cache, "deps", `.${base}.running`);
    await Deno.mkdir(abandoned);
    await Deno.mkdir(running);
    const old = new Date(Date.now() - ABANDONED_BUILD_MS - 60_000);
    await Deno.utime(abandoned, old, old);
    // bundles this one supersedes go; another package's stays
    await Deno.writeTextFile(join(cache, "deps", "openai@7.0.0+deno-2.0.0+f1.js"), "old\n");
    await Deno.writeTextFile(join(cache, "deps", "openai-extra@1.0.0+deno-2.9.6+f1.js"), "x\n");
    const built = await buildPrebundle(target);
    assertEquals(built, { ok: true });
    assert((await Deno.stat(target.file)).size > 100_000, "a real bundle");
    assertEquals(await Deno.stat(target.marker).catch(() => null), null, "marker removed");
    assertEquals(
      [...Deno.readDirSync(join(cache, "deps"))].map((e) => e.name).sort(),
      [`.${base}.running`, "openai-extra@1.0.0+deno-2.9.6+f1.js", base].sort(),
      "the abandoned build's temp dir and the superseded bundle are gone",
    );
    await Deno.remove(running);

    // the bundle serves the SDK: `load` (the npm import) is not called
    type Sdk = typeof import("openai");
    const sdk = await withPrebundle<Sdk>("openai", () => {
      throw new Error("the npm package was loaded");
    }, { getEnv: env({ KIMI_CACHE_DIR: cache }) });
    const client = new sdk.OpenAI({ apiKey: "k", baseURL: "http://127.0.0.1:9/v1" });
    assertEquals(typeof client.chat.completions.create, "function");
    assertEquals(typeof sdk.OpenAI.APIError, "function");

    // a planted or damaged bundle does not load: it is removed and the package loads as usual
    // (another file: this process has the good one loaded)
    const damaged = { ...target, file: `${target.file}.damaged.js` };
    await Deno.writeTextFile(damaged.file, "export const ns = ; // damaged\n");
    assertEquals(await importPrebundle(damaged), null);
    assertEquals(await Deno.stat(damaged.file).catch(() => null), null, "broken bundle removed");
  });
});

Deno.test("prebundle: a failed build keeps its reason in the marker", async () => {
  await inTempDir(async (cache) => {
    const target = prebundleTarget({
      name: "openai",
      version: "0.0.0-does-not-exist",
      cacheDir: cache,
      denoVersion: Deno.version.deno,
    });
    await Deno.mkdir(join(cache, "deps"));
    await Deno.writeTextFile(target.marker, "building 1\n");
    // a deno that cannot bundle: the build fails without touching the network
    const built = await buildPrebundle({ ...target, deno: join(cache, "no-such-deno") });
    assert(!built.ok);
    assertStringIncludes(await Deno.readTextFile(target.marker), "failed: ");
    assertEquals(await Deno.stat(target.file).catch(() => null), null);
    assertEquals(
      [...Deno.readDirSync(join(cache, "deps"))].map((e) => e.name),
      [target.marker.slice(target.marker.lastIndexOf("/") + 1)],
      "no temp dir left behind",
    );
  });
});

Deno.test("prebundle: commander's bundle loads its Node built-ins on first use, and works", async () => {
  await inTempDir(async (cache) => {
    const target = targetIn(cache, "commander");
    assertEquals(await buildPrebundle(target), { ok: true });
    const text = await Deno.readTextFile(target.file);
    assert(!/^import \w+ from "node:(child_process|fs|process)";$/m.test(text), "deferred");
    assertStringIncludes(text, '__kimiLazyBuiltin("node:child_process")');
    const ns = located(await importPrebundle<typeof import("commander")>(target), "bundle");
    const out: string[] = [];
    const cmd = new ns.Command("demo")
      .option("-n, --num <n>", "a number")
      .exitOverride()
      .configureOutput({ writeOut: (s) => out.push(s), writeErr: () => {} });
    cmd.parse(["-n", "3"], { from: "user" });
    assertEquals(cmd.opts(), { num: "3" });
    let code = "";
    try {
      cmd.parse(["--help"], { from: "user" });
    } catch (err) {
      code = (err as { code?: string }).code ?? "";
    }
    assertEquals(code, "commander.helpDisplayed");
    assertStringIncludes(out.join(""), "Usage: demo [options]");
  });
});
