/**
 * `deno task build` (scripts/build.ts): where `deno compile` cannot download its runtime it
 * stops with one clear line naming `DENORT_BIN`; its command lines include every lazily
 * imported module.
 *
 * @module
 */
import { LAZY_MODULES } from "../../../scripts/lazy_modules.ts";
import { binaryName, TARGETS } from "../../../scripts/build.ts";
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

Deno.test("build: --dry-run prints one deno compile per target with every lazy module included", async () => {
  const r = await runBuild(["--dry-run", "--out=/out"], {});
  assertEquals(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split("\n");
  assertEquals(lines.length, TARGETS.length);
  TARGETS.forEach((target, i) => {
    const line = lines[i];
    assert(line.startsWith("deno compile "), line);
    assertStringIncludes(line, ` --target=${target} `);
    assertStringIncludes(line, ` --output=/out/${binaryName(target)} `);
    for (const m of LAZY_MODULES) assertStringIncludes(line, ` --include=${ROOT}/${m} `);
    assert(line.endsWith(`${ROOT}/main.ts`));
  });
  assertEquals(binaryName("x86_64-pc-windows-msvc"), "kimi-x86_64-pc-windows-msvc.exe");
});
