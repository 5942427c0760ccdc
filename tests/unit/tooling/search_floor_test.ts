/**
 * The floor's checks on search results, as made cheap for big trees (one `realpath` per
 * directory, one `lstat` per Grep result, none per plain Glob entry): the answers stay those of a
 * full resolve — a symlinked directory or file, `..` in a Glob pattern and a hard link to one of
 * kimi's secret files are all still caught — and the path order is the `/`-split order.
 */
import { join } from "node:path";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { grepToolWith } from "../../../tools/grep.ts";
import { globTool } from "../../../tools/glob.ts";
import { readFileTool } from "../../../tools/read_file.ts";
import { comparePathParts } from "../../../lib/search/path_glob.ts";
import { ResultFilter } from "../../../lib/tooling/result_filter.ts";

const SECRET = "sk-hardlinked-secret-91b2";

/** A work dir with a share dir holding a secret config, and a hard link to it in the tree. */
async function tree(): Promise<{ workDir: string; outside: string }> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi_search_floor_" }));
  const workDir = join(root, "work");
  const outside = join(root, "outside");
  await Deno.mkdir(join(workDir, ".kimi-share"), { recursive: true });
  await Deno.mkdir(join(workDir, "src", "deep"), { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(join(workDir, ".kimi-share", "config.toml"), `api_key = "${SECRET}"\n`);
  await Deno.link(join(workDir, ".kimi-share", "config.toml"), join(workDir, "src", "notes.toml"));
  await Deno.writeTextFile(join(workDir, "src", "deep", "a.py"), "api_key = 'not a secret'\n");
  await Deno.writeTextFile(join(outside, "b.py"), "api_key = 'outside'\n");
  await Deno.symlink(outside, join(workDir, "src", "linked"));
  await Deno.symlink(join(outside, "b.py"), join(workDir, "src", "deep", "c.py"));
  return { workDir, outside };
}

Deno.test("Grep (both engines) leaves out a hard link to kimi's secret config", async () => {
  const { workDir } = await tree();
  try {
    const env = makeToolEnv({ workDir });
    for (const engine of ["ripgrep", "typescript"] as const) {
      const grep = (await grepToolWith({ engine })(env))!;
      const rv = await runTool(grep, { pattern: "api_key", output_mode: "content" });
      assert(!String(rv.output).includes(SECRET), `${engine}: ${rv.output}`);
      assertStringIncludes(String(rv.output), "not a secret");
      assertStringIncludes(rv.message, "(config.toml, notes.toml)");
    }
  } finally {
    await Deno.remove(join(workDir, ".."), { recursive: true });
  }
});

Deno.test("ReadFile refuses a hard link to kimi's secret config by its inode", async () => {
  const { workDir } = await tree();
  try {
    const read = (await readFileTool(makeToolEnv({ workDir })))!;
    const rv = await runTool(read, { path: join(workDir, "src", "notes.toml") });
    assert(rv.is_error);
    assert(!String(rv.output).includes(SECRET));
    assertStringIncludes(rv.message, "a hard link to one of kimi's secret files");
    // A file with one link and no secret is read as before.
    const ok = await runTool(read, { path: join(workDir, "src", "deep", "a.py") });
    assert(!ok.is_error, ok.message);
  } finally {
    await Deno.remove(join(workDir, ".."), { recursive: true });
  }
});

Deno.test("Glob still drops matches that lead outside through a symlink or ..", async () => {
  const { workDir } = await tree();
  try {
    const glob = (await globTool(makeToolEnv({ workDir })))!;
    const all = await runTool(glob, { pattern: "src/**/*.py" });
    // src/deep/c.py is a symlink to the outside file; src/linked/ is not walked by `**`.
    assertEquals(String(all.output), "src/deep/a.py");
    assertStringIncludes(all.message, "Left out 1 match(es)");
    const viaLink = await runTool(glob, { pattern: "src/linked/*.py" });
    assertEquals(String(viaLink.output), "");
    const dots = await runTool(glob, { pattern: "src/../../outside/*.py" });
    assertEquals(String(dots.output), "");
  } finally {
    await Deno.remove(join(workDir, ".."), { recursive: true });
  }
});

Deno.test("ResultFilter: a plain entry under a symlinked directory is judged by its directory", async () => {
  const { workDir, outside } = await tree();
  try {
    const filter = new ResultFilter(makeToolEnv({ workDir }), { workspaceOnly: true });
    assertEquals(
      filter.verdict(join(workDir, "src", "linked", "b.py"), { plainEntry: true }),
      "denied",
    );
    assertEquals(filter.verdict(join(workDir, "src", "deep", "a.py"), { plainEntry: true }), "ok");
    assertEquals(filter.verdict(join(workDir, "src", "deep", "c.py")), "denied");
    assertEquals(filter.verdict(join(outside, "b.py")), "denied");
    assertEquals(filter.verdict(join(workDir, "src", "notes.toml")), "secret");
  } finally {
    await Deno.remove(join(workDir, ".."), { recursive: true });
  }
});

Deno.test("comparePathParts orders like comparing the /-split parts", () => {
  const bySplit = (a: string, b: string): number => {
    const pa = a.split("/");
    const pb = b.split("/");
    for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
      if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
    }
    return pa.length - pb.length;
  };
  const alphabet = ["a", "b", "/", ".", "-", "A", "é", "0"];
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const word = () =>
    Array.from({ length: 1 + rand(6) }, () => alphabet[rand(alphabet.length)]).join("");
  for (let i = 0; i < 5000; i++) {
    const a = word();
    const b = rand(3) === 0 ? a + word() : word();
    assertEquals(Math.sign(comparePathParts(a, b)), Math.sign(bySplit(a, b)), `${a} vs ${b}`);
  }
});
