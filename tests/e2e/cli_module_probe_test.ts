/**
 * `kimi --version` and `kimi --help` stay light: the module probe (V8 inspector) shows they
 * compile no MCP, soul, LLM, UI, wire or tool module and no npm package beyond commander.
 */
import { assertEquals } from "../helpers/assert.ts";
import { childCacheEnv, denoDir, MAIN_TS } from "../helpers/kimi_process.ts";
import { probeModules } from "../../scripts/bench/module_probe.ts";
import { prebundleFor } from "../../lib/prebundle/load.ts";
import { buildPrebundle } from "../../lib/prebundle/build.ts";

const REPO_ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** Probe `kimi <flag>` run from the source with HOME `home` and the given kimi cache env. */
function probeKimi(flag: string, home: string, cacheEnv: Record<string, string>) {
  return probeModules({
    scriptArgs: [MAIN_TS, flag],
    denoFlags: ["--no-prompt", "-A"],
    cwd: home,
    env: {
      HOME: home,
      KIMI_SHARE_DIR: `${home}/.kimi`,
      DENO_DIR: denoDir(),
      ...cacheEnv,
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    },
    repoRoot: REPO_ROOT,
    timeoutMs: 120_000,
  });
}
const HEAVY_LOCAL = /^(lib\/llm|lib\/mcp|lib\/ui|lib\/app|lib\/soul|lib\/wire|tools)\//;

for (
  const [flag, allowedNpm] of [["--version", []], ["--help", [
    "commander",
    "@commander-js/extra-typings",
  ]]] as const
) {
  Deno.test(`kimi ${flag} loads no MCP, zod, soul or provider module`, async () => {
    const home = await Deno.makeTempDir({ prefix: "kimi-probe-" });
    try {
      const probe = await probeKimi(flag, home, childCacheEnv());
      assertEquals(probe.code, 0, probe.stdout);
      assertEquals(probe.localModules.filter((m) => HEAVY_LOCAL.test(m)), []);
      const npm = probe.npmPackages.map((p) => p.slice(0, p.lastIndexOf("@")));
      assertEquals(npm.filter((n) => !(allowedNpm as readonly string[]).includes(n)), []);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}

/** The built-ins commander imports at load time but needs only for help output and exits. */
const DEFERRED = ["node:child_process", "node:fs", "node:process"];

Deno.test("kimi --help from the source: commander's pre-bundle leaves its Node built-ins unloaded", async () => {
  const home = await Deno.makeTempDir({ prefix: "kimi-probe-" });
  try {
    const cache = `${home}/cache`;
    const target = prebundleFor("commander", {
      getEnv: (k) => k === "KIMI_CACHE_DIR" ? cache : undefined,
    });
    if (target === null) throw new Error("commander has no pre-bundle target");
    const probe = (cacheDir: string) => probeKimi("--help", home, { KIMI_CACHE_DIR: cacheDir });
    // control: a cache that cannot exist (a file stands where its directory would be)
    await Deno.writeTextFile(`${home}/not-a-dir`, "");
    const plain = await probe(`${home}/not-a-dir`);
    assertEquals(plain.code, 0, plain.stdout);
    assertEquals(plain.npmPackages.map((p) => p.slice(0, p.lastIndexOf("@"))), [
      "@commander-js/extra-typings",
      "commander",
    ]);
    assertEquals(DEFERRED.filter((m) => plain.nodeModules.includes(m)), DEFERRED);

    assertEquals(await buildPrebundle(target), { ok: true });
    const bundled = await probe(cache);
    assertEquals(bundled.code, 0, bundled.stdout);
    assertEquals(bundled.stdout, plain.stdout, "the same help text");
    assertEquals(bundled.npmPackages, [], "commander comes from its pre-bundle");
    assertEquals(bundled.localModules.filter((m) => m.includes("/deps/")), [target.file]);
    assertEquals(DEFERRED.filter((m) => bundled.nodeModules.includes(m)), []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
