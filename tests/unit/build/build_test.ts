/**
 * `deno task build` (scripts/build.ts): where `deno compile` cannot download its runtime it
 * stops with one clear line naming `DENORT_BIN`; it compiles with deno.json minus
 * `lazy-dynamic-imports`, under which `deno compile` would leave dynamically imported modules out.
 *
 * @module
 */
import {
  binaryName,
  COMPILE_CONFIG,
  compileArgs,
  compileConfig,
  TARGETS,
} from "../../../scripts/build.ts";
import { DENO_V8_FLAGS_ARG } from "../../../lib/runtime_flags.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";

const ROOT = new URL("../../../", import.meta.url).pathname.replace(/\/$/, "");

async function runBuild(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "build", ...args],
    cwd: ROOT,
    clearEnv: true,
    env: {
      NO_COLOR: "1",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("build: without a downloadable runtime it stops with one line naming DENORT_BIN", async () => {
  const outDir = await Deno.makeTempDir({ prefix: "kimi-build-" });
  try {
    // Any download goes to a closed port on 127.0.0.1, so the runtime cannot be fetched.
    const r = await runBuild([`--out=${outDir}`], {
      HTTPS_PROXY: "http://127.0.0.1:9",
      HTTP_PROXY: "http://127.0.0.1:9",
    });
    assertEquals(r.code, 1);
    const lines = r.stderr.trim().split("\n");
    assertEquals(lines.length, 1, r.stderr);
    assertStringIncludes(lines[0], "cannot download its runtime");
    assertStringIncludes(lines[0], "set DENORT_BIN=");
    assertEquals([...Deno.readDirSync(outDir)], []);
  } finally {
    await Deno.remove(outDir, { recursive: true });
  }
});

Deno.test("build: a DENORT_BIN that does not exist is named in one line", async () => {
  const r = await runBuild(["--out=/nonexistent-kimi-out"], { DENORT_BIN: "/nonexistent/denort" });
  assertEquals(r.code, 1);
  assertEquals(r.stderr.trim().split("\n").length, 1, r.stderr);
  assertStringIncludes(r.stderr, "DENORT_BIN=/nonexistent/denort does not exist");
});

Deno.test("build: --dry-run prints one deno compile per target with the compile config", async () => {
  const r = await runBuild(["--dry-run", "--out=/out"], {});
  assertEquals(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assertEquals(lines.length, TARGETS.length);
  TARGETS.forEach((target, i) => {
    const line = lines[i];
    assert(line.startsWith("deno compile "), line);
    assertStringIncludes(line, ` --target=${target} `);
    assertStringIncludes(line, ` --output=/out/${binaryName(target)} `);
    assertStringIncludes(line, ` --config=/out/${COMPILE_CONFIG} `);
    assert(line.endsWith(`${ROOT}/main.ts`));
  });
  assertEquals(binaryName("x86_64-pc-windows-msvc"), "kimi-x86_64-pc-windows-msvc.exe");
});

Deno.test("build: the compile config is deno.json without lazy dynamic imports, with its lock", async () => {
  const denoJson = await Deno.readTextFile(`${ROOT}/deno.json`);
  assert(JSON.parse(denoJson).unstable.includes("lazy-dynamic-imports"), "deno.json sets it");
  const config = JSON.parse(compileConfig(denoJson, "/repo"));
  assertEquals(config.unstable, undefined);
  assertEquals(config.lock, { path: "/repo/deno.lock" });
  assertEquals(config.imports, JSON.parse(denoJson).imports);
  const other = JSON.parse(compileConfig('{"unstable": ["lazy-dynamic-imports", "kv"]}', "/r"));
  assertEquals(other.unstable, ["kv"]);
});

Deno.test("build: every compile target gets the V8 flags, the compile config and main.ts", () => {
  for (const target of TARGETS) {
    const args = compileArgs(target, "/out", { root: "/repo", config: "/out/c.json" });
    assertEquals(args.at(-1), "/repo/main.ts");
    assert(args.includes(`--target=${target}`));
    assert(args.includes("--config=/out/c.json"));
    assert(args.includes(DENO_V8_FLAGS_ARG), `compile for ${target} misses the V8 flags`);
  }
});
