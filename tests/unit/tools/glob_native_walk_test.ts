/**
 * Glob's two engines give the same answers: the native walker (GNU find listing a `**` subtree
 * in one pass) and the `readDir` walk, on a planted tree (symlinks to files and directories, a
 * dangling symlink, symlink loops, hidden entries, a directory named `x.py`, a fifo, names with
 * spaces, newlines and bytes that are not UTF-8), for patterns with `**` anywhere, `..`, a
 * trailing `/` and `[...]`/`?` segments. The walker honours `--deny-read` as `readDir` does,
 * falls back when it cannot give the listings (missing, too many entries), dies on abort, and
 * Glob still works (through the `readDir` walk) in a run without `--allow-run`.
 */
import { join } from "node:path";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { globTool, globToolWith } from "../../../tools/glob.ts";
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { comparePathParts, firstPaths, pathGlob } from "../../../lib/search/path_glob.ts";
import {
  findFindBinary,
  findWalker,
  shareSubtrees,
  type SubtreeWalker,
} from "../../../lib/search/native_walk.ts";

const FIND = findFindBinary();

const REPO = new URL("../../../", import.meta.url).pathname;

/** Plant the tree; returns its (real) root. */
async function plant(): Promise<string> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi_glob_walk_" }));
  const files = [
    "src/a.py",
    "src/.hidden.py",
    "src/.hdir/h.py",
    "src/sub/b.py",
    "src/sub/deep/c.txt",
    "src/sub/deep/d.py",
    "src/x.py/inner.py",
    "src/with space.py",
    "src/new\nline.py",
    "src/[x].py",
    "src/e.PY",
    "src/-exec.py",
    "top.py",
    "other/o.py",
  ];
  for (const f of files) {
    await Deno.mkdir(join(root, f, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, f), f);
  }
  await Deno.mkdir(join(root, "src", "empty"));
  await Deno.symlink(join(root, "src", "sub", "b.py"), join(root, "src", "link_file.py"));
  await Deno.symlink(join(root, "src", "sub"), join(root, "src", "link_dir"));
  await Deno.symlink(join(root, "src", "sub"), join(root, "src", "link_dir.py"));
  await Deno.symlink(join(root, "nowhere.py"), join(root, "src", "dangling.py"));
  await Deno.symlink("loop.py", join(root, "src", "loop.py"));
  await Deno.symlink("loop_b", join(root, "src", "sub", "loop_a"));
  await Deno.symlink("loop_a", join(root, "src", "sub", "loop_b"));
  await Deno.symlink(root, join(root, "src", "sub", "up"));
  // A fifo, and names that are not UTF-8 (a file, and a directory holding a file).
  const made = await new Deno.Command("sh", {
    args: [
      "-c",
      'mkfifo "$1/src/pipe.py" && : > "$1/src/bad$(printf "\\377").py" && ' +
      'mkdir "$1/src/dir$(printf "\\376")" && : > "$1/src/dir$(printf "\\376")/in.py"',
      "sh",
      root,
    ],
  }).output();
  assert(made.success, new TextDecoder().decode(made.stderr));
  return root;
}

const PATTERNS = [
  "src/**/*.py",
  "src/**/*.py/",
  "src/**",
  "src/**/",
  "src/**/*",
  "src/**/.*",
  "src/**/b.py",
  "src/**/sub",
  "src/**/[!a]*.py",
  "src/**/?.py",
  "src/**/[[]x].py",
  "src/**/*space*",
  "src/**/-exec*",
  "src/**/(*",
  "src/**/!*",
  "src/**/*\n*",
  "src/../src/**/*.py",
  "src/sub/../**/*.py",
  "src/sub/**/../*.py",
  "*/**/*.py",
  "**/*.py",
  "src/**/sub/**/*.py",
  "src/**/deep/**",
  "src/link_dir/**/*.py",
  "src/link_dir.py/**",
  "src/x.py/**",
  "src/*/**/*.py",
  "src/**/*.txt",
  "missing/**/*.py",
];

/** A walker that counts the calls it answered (so a silent fallback would show). */
function counting(inner: SubtreeWalker): { walker: SubtreeWalker; answered: () => number } {
  let n = 0;
  return {
    walker: async (starts, opts) => {
      const got = await inner(starts, opts);
      if (got !== null) n++;
      return got;
    },
    answered: () => n,
  };
}

async function run(root: string, pattern: string, filesOnly: boolean, walker?: SubtreeWalker) {
  const linked = new Set<string>();
  const found = await pathGlob(root, pattern, { filesOnly, linked, walker });
  return { found: [...found].sort(), linked: [...linked].sort(), count: found.length };
}

Deno.test({
  name: "Glob: the native walker and the readDir walk give identical results",
  ignore: FIND === null,
  fn: async () => {
    const root = await plant();
    try {
      for (const pattern of PATTERNS) {
        for (const filesOnly of [false, true]) {
          const a = await run(root, pattern, filesOnly);
          // One find per walk, and one per subdirectory of the start (finds running at once).
          for (const processes of [1, 3]) {
            const native = counting(findWalker(FIND!, { processes }));
            const b = await run(root, pattern, filesOnly, native.walker);
            const what = `${JSON.stringify(pattern)} filesOnly=${filesOnly} ×${processes}`;
            assertEquals(b, a, what);
            if (!pattern.startsWith("missing")) assert(native.answered() > 0, what);
          }
        }
      }
      // The planted cases are really in the answers.
      const all = await run(root, "src/**", false);
      for (
        const p of [
          "src/link_dir",
          "src/dangling.py",
          "src/loop.py",
          "src/new\nline.py",
          "src/bad\uFFFD.py",
          "src/dir\uFFFD",
          "src/pipe.py",
        ]
      ) assert(all.found.includes(p), p);
      assert(!all.found.some((p) => p.startsWith("src/link_dir/")), "symlinked dirs not walked");
      assert(!all.found.includes("src/dir\uFFFD/in.py"), "readDir cannot open the bad name");
      assertEquals(
        (await run(root, "src/**/*.py", true)).found,
        [
          "src/-exec.py",
          "src/.hdir/h.py",
          "src/.hidden.py",
          "src/[x].py",
          "src/a.py",
          "src/bad\uFFFD.py",
          "src/link_file.py",
          "src/new\nline.py",
          "src/sub/b.py",
          "src/sub/deep/d.py",
          "src/with space.py",
          "src/x.py/inner.py",
        ].sort(),
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "Glob's native walker: too many entries or a missing binary fall back to readDir",
  ignore: FIND === null,
  fn: async () => {
    const root = await plant();
    try {
      const small = findWalker(FIND!, { maxEntries: 3 });
      assertEquals(await small([join(root, "src")], {}), null);
      assertEquals(await findWalker(FIND!, { maxEntries: 3, processes: 1 })([root], {}), null);
      assertEquals(await findWalker(join(root, "no-such-find"))([join(root, "src")], {}), null);
      for (const walker of [small, findWalker(join(root, "no-such-find"))]) {
        assertEquals(
          await run(root, "src/**/*.py", true, walker),
          await run(root, "src/**/*.py", true),
        );
      }
      // A candidate anyone may write is never run.
      const planted = join(root, "find");
      await Deno.writeTextFile(planted, "#!/bin/sh\n");
      await Deno.chmod(planted, 0o777);
      assertEquals(findFindBinary([planted]), null);
      assertEquals(findFindBinary([join(root, "none"), ...(FIND ? [FIND] : [])]), FIND);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "Glob's native walker: an abort kills find and rejects with the reason",
  ignore: FIND === null,
  fn: async () => {
    const ac = new AbortController();
    const walk = findWalker(FIND!)(["/"], { signal: ac.signal });
    ac.abort(new Error("stopped by the user"));
    await assertRejects(() => walk, /stopped by the user/);
  },
});

Deno.test({
  name: "Glob tool: the same output and message with find and with the readDir walk",
  ignore: FIND === null,
  fn: async () => {
    const root = await plant();
    try {
      const env = makeToolEnv({ workDir: root });
      const withFind = (await globTool(env))!;
      const withReadDir = (await globToolWith({ walk: "readDir" })(env))!;
      for (const pattern of PATTERNS) {
        for (const include_dirs of [true, false]) {
          const args = { pattern, include_dirs };
          const a = await runTool(withReadDir, args);
          assertEquals(await runTool(withFind, args), a, JSON.stringify(args));
        }
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "Glob with find: a walk through a symlinked start leading out is still left out",
  ignore: FIND === null,
  fn: async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi_glob_walk_" }));
    try {
      await Deno.mkdir(join(root, "work", "src"), { recursive: true });
      await Deno.mkdir(join(root, "outside", "deep"), { recursive: true });
      await Deno.writeTextFile(join(root, "outside", "deep", "b.py"), "");
      await Deno.writeTextFile(join(root, "work", "src", "a.py"), "");
      await Deno.symlink(join(root, "outside"), join(root, "work", "src", "out"));
      const env = makeToolEnv({ workDir: join(root, "work") });
      for (const factory of [globTool, globToolWith({ walk: "readDir" })]) {
        const glob = (await factory(env))!;
        const rv = await runTool(glob, { pattern: "src/out/**/*.py" });
        assertEquals(rv.output, "");
        assertEquals(
          rv.message,
          "No matches found for pattern `src/out/**/*.py`. Left out 1 match(es) that lead " +
            "outside the workspace or this run's read scope, or onto kimi's own secret files.",
        );
        assertEquals((await runTool(glob, { pattern: "src/**/*.py" })).output, "src/a.py");
      }
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

/** Run Glob in a child deno with `flags`; its output and message. */
async function globInChild(
  root: string,
  flags: string[],
  pattern: string,
): Promise<{ output: string; message: string; run: string }> {
  const script = join(root, "glob_child.ts");
  const imp = (p: string) => JSON.stringify(new URL(p, `file://${REPO}`).href);
  await Deno.writeTextFile(
    script,
    `import { makeCallContext, makeToolEnv, runTool } from ${imp("tests/helpers/tool_env.ts")};\n` +
      `import { globTool } from ${imp("tools/glob.ts")};\n` +
      `import { DenoPermissionScope } from ${imp("lib/tooling/scope.ts")};\n` +
      `const env = makeToolEnv({ workDir: ${
        JSON.stringify(root)
      }, scope: new DenoPermissionScope() });\n` +
      `const rv = await runTool((await globTool(env))!, { pattern: ${
        JSON.stringify(pattern)
      }, include_dirs: false }, makeCallContext());\n` +
      `const run = Deno.permissions.querySync({ name: "run", command: ${
        JSON.stringify(FIND ?? "find")
      } }).state;\n` +
      `console.log(JSON.stringify({ output: rv.output, message: rv.message, run }));\n`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", `--config=${join(REPO, "deno.json")}`, ...flags, script],
    cwd: REPO,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("Glob works without --allow-run (the readDir walk) and honours --deny-read", async () => {
  const root = await plant();
  try {
    await Deno.mkdir(join(root, "src", "locked"));
    await Deno.writeTextFile(join(root, "src", "locked", "l.py"), "");
    const read = `--allow-read=${root},${REPO}`;
    const deny = `--deny-read=${join(root, "src", "locked")}`;
    const expected = [
      "src/-exec.py",
      "src/.hdir/h.py",
      "src/.hidden.py",
      "src/[x].py",
      "src/a.py",
      "src/bad\uFFFD.py",
      "src/link_file.py",
      "src/new\nline.py",
      "src/sub/b.py",
      "src/sub/deep/d.py",
      "src/with space.py",
      "src/x.py/inner.py",
    ].join("\n");
    const noRun = await globInChild(root, [read, "--allow-env", deny], "src/**/*.py");
    assertEquals(noRun.run, "prompt");
    assertEquals(noRun.output, expected);
    assertEquals(noRun.message, "Found 12 matches for pattern `src/**/*.py`.");
    if (FIND !== null) {
      // With find allowed (and readable, to check who owns it), the same answer: the locked
      // directory is not listed either.
      const withRun = await globInChild(
        root,
        [`${read},${FIND}`, "--allow-env", deny, `--allow-run=${FIND}`],
        "src/**/*.py",
      );
      assertEquals(withRun.run, "granted");
      assertEquals(withRun, { ...noRun, run: "granted" });
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("firstPaths gives the first k paths of the full sort", () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const names = ["a", "a.py", "a-b", "b", "B", "a b", ".x", "é", "a/b", "z"];
  for (let round = 0; round < 300; round++) {
    const n = rand(60);
    const paths: string[] = [];
    for (let i = 0; i < n; i++) {
      const depth = 1 + rand(3);
      paths.push(Array.from({ length: depth }, () => names[rand(names.length)]).join("/"));
    }
    const k = rand(n + 3);
    const expected = [...paths].sort(comparePathParts).slice(0, k);
    assertEquals(firstPaths([...paths], k), expected, `n=${n} k=${k}`);
  }
});

Deno.test("shareSubtrees: the finds get the big subtrees evenly, whatever the listing order", async () => {
  const root = await Deno.makeTempDir();
  try {
    // Listing order puts the two heavy directories at even places: a round-robin over it gave
    // both to one find.
    const names = ["a_heavy", "b_light", "c_heavy", "d_light"];
    for (const n of names) {
      await Deno.mkdir(`${root}/${n}`);
      if (n.endsWith("heavy")) {
        for (let i = 0; i < 20; i++) await Deno.mkdir(`${root}/${n}/sub${i}`);
      }
    }
    const groups = shareSubtrees(names.map((n) => `${root}/${n}`), 2);
    assertEquals(groups.length, 2);
    for (const g of groups) {
      assertEquals(g.filter((p) => p.endsWith("heavy")).length, 1, JSON.stringify(groups));
    }
    assertEquals(groups.flat().sort(), names.map((n) => `${root}/${n}`));
    // More finds than directories: one each; none: no group.
    assertEquals(shareSubtrees([`${root}/a_heavy`], 4), [[`${root}/a_heavy`]]);
    assertEquals(shareSubtrees([], 4), []);
    // A path that is gone still goes to a find (which reports it).
    assertEquals(shareSubtrees([`${root}/gone`], 2), [[`${root}/gone`]]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
