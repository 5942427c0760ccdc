/**
 * `kimi --version` and `kimi --help` stay light: the module probe (V8 inspector) shows they
 * compile no MCP, soul, LLM, UI, wire or tool module and no npm package beyond commander (and
 * `strip-ansi`, its colour stripping); the bundle's `--help` starts no Node built-in.
 */
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { bundle } from "../../scripts/bundle.ts";
import { denoDir, MAIN_TS } from "../helpers/kimi_process.ts";
import { probeModules } from "../../scripts/bench/module_probe.ts";

const REPO_ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** Probe `kimi <flag>` run from the source with HOME `home`. */
function probeKimi(flag: string, home: string) {
  return probeModules({
    scriptArgs: [MAIN_TS, flag],
    denoFlags: ["--no-prompt", "-A"],
    cwd: home,
    env: {
      HOME: home,
      KIMI_SHARE_DIR: `${home}/.kimi`,
      DENO_DIR: denoDir(),
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
    "strip-ansi",
    "ansi-regex",
  ]]] as const
) {
  Deno.test(`kimi ${flag} loads no MCP, zod, soul or provider module`, async () => {
    const home = await Deno.makeTempDir({ prefix: "kimi-probe-" });
    try {
      const probe = await probeKimi(flag, home);
      assertEquals(probe.code, 0, probe.stdout);
      assertEquals(probe.localModules.filter((m) => HEAVY_LOCAL.test(m)), []);
      const npm = probe.npmPackages.map((p) => p.slice(0, p.lastIndexOf("@")));
      assertEquals(npm.filter((n) => !(allowedNpm as readonly string[]).includes(n)), []);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}

Deno.test("the bundle's kimi --help starts no Node built-in and prints the source's help", async () => {
  const home = await Deno.makeTempDir({ prefix: "kimi-probe-" });
  try {
    const { outDir } = await bundle({ outDir: `${home}/bundle` });
    const env = {
      HOME: home,
      KIMI_SHARE_DIR: `${home}/.kimi`,
      DENO_DIR: denoDir(),
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    };
    const probe = await probeModules({
      scriptArgs: [`${outDir}/main.js`, "--help"],
      denoFlags: ["--no-prompt", "-A"],
      cwd: home,
      env,
      repoRoot: REPO_ROOT,
      timeoutMs: 120_000,
    });
    assertEquals(probe.code, 0, probe.stdout);
    // commander's EventEmitter is the bundled port, its colour stripping kimi's, the log's
    // async context made on first use: nothing starts Node's compatibility layer.
    assertEquals(probe.nodeModules, []);
    const source = await probeKimi("--help", home);
    assertEquals(probe.stdout, source.stdout);
    assertStringIncludes(probe.stdout, "Usage: kimi [options] [command]");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
