/**
 * Glob's streamed `**`: a `**` followed by a last segment with a wildcard is matched as find's
 * entries stream (no listings kept). Its answers — results, what the judge is asked, what it
 * leaves out — are those of the `readDir` walk, including the cases it hands back (a directory
 * named with U+FFFD, overlapping starts) and a walker failing after it streamed entries.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { globTool, globToolWith } from "../../../tools/glob.ts";
import {
  comparePathParts,
  FirstPaths,
  pathGlob,
  type ResultJudge,
} from "../../../lib/search/path_glob.ts";
import {
  type EntrySink,
  findFindBinary,
  findWalker,
  type SubtreeWalker,
} from "../../../lib/search/native_walk.ts";

const FIND = findFindBinary();

/** A tree with a directory named with a (valid) U+FFFD, one not valid UTF-8, links out. */
async function plant(): Promise<{ root: string; work: string }> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi_glob_stream_" }));
  const work = join(root, "work");
  const files = [
    "src/a.py",
    "src/sub/b.py",
    "src/sub/deep/c.py",
    "src/sub/deep/d.txt",
    "src/odd\uFFFDdir/e.py",
    "src/odd\uFFFDdir/inner/f.py",
    "src/dir.py/g.py",
    "lib/h.py",
  ];
  for (const f of files) {
    await Deno.mkdir(join(work, f, ".."), { recursive: true });
    await Deno.writeTextFile(join(work, f), f);
  }
  await Deno.mkdir(join(root, "outside"));
  await Deno.writeTextFile(join(root, "outside", "secret.py"), "");
  await Deno.symlink(join(root, "outside", "secret.py"), join(work, "src", "sub", "out.py"));
  await Deno.symlink(join(root, "outside"), join(work, "src", "outdir.py"));
  await Deno.symlink(join(work, "src", "a.py"), join(work, "src", "sub", "in.py"));
  // A directory whose name is not valid UTF-8, holding a file.
  const made = await new Deno.Command("sh", {
    args: [
      "-c",
      'mkdir "$1/src/bad$(printf "\\376")" && : > "$1/src/bad$(printf "\\376")/z.py"',
      "sh",
      work,
    ],
  }).output();
  assert(made.success, new TextDecoder().decode(made.stderr));
  return { root, work };
}

const PATTERNS = [
  "src/**/*.py",
  "src/**/*.py/",
  "src/**/*",
  "src/**/*dir*",
  "src/**/[a-c].py",
  "*/**/*.py",
  "src/*/../**/*.py",
  "src/../src/**/*.py",
  "src/odd\uFFFDdir/**/*.py",
];

/** A judge that refuses `src/sub`'s plain entries wholesale and every `out` result, recording. */
function recordingJudge(): { judge: ResultJudge; asked: string[]; kept: string[] } {
  const asked: string[] = [];
  const kept: string[] = [];
  return {
    asked,
    kept,
    judge: {
      plainEntriesOk: (dir) => {
        asked.push(`dir ${dir}`);
        return !dir.endsWith("/src/sub");
      },
      keep: (rel, plain) => {
        asked.push(`${plain ? "plain" : "linked"} ${rel}`);
        const ok = !rel.includes("out");
        if (ok) kept.push(rel);
        return ok;
      },
    },
  };
}

async function globWith(root: string, pattern: string, filesOnly: boolean, walker?: SubtreeWalker) {
  const { judge, asked } = recordingJudge();
  const plainDirs = new Set<string>();
  const found = await pathGlob(root, pattern, { filesOnly, walker, judge, plainDirs });
  return { found: [...found].sort(), asked: asked.sort(), plainDirs: [...plainDirs].sort() };
}

/** A walker counting the calls that streamed entries into a sink and were answered. */
function streaming(inner: SubtreeWalker): { walker: SubtreeWalker; streamed: () => number } {
  let n = 0;
  return {
    walker: async (starts, opts) => {
      const got = await inner(starts, opts);
      if (got !== null && opts.sink) n++;
      return got;
    },
    streamed: () => n,
  };
}

Deno.test({
  name: "Glob's streamed **: the same results, judge questions and trusted dirs as readDir",
  ignore: FIND === null,
  fn: async () => {
    const { root, work } = await plant();
    try {
      for (const pattern of PATTERNS) {
        for (const filesOnly of [false, true]) {
          const expected = await globWith(work, pattern, filesOnly);
          for (const processes of [1, 3]) {
            const s = streaming(findWalker(FIND!, { processes }));
            const got = await globWith(work, pattern, filesOnly, s.walker);
            const what = `${JSON.stringify(pattern)} filesOnly=${filesOnly} ×${processes}`;
            assertEquals(got, expected, what);
            // Overlapping starts are not streamed (a path could be met twice), nor a start
            // named with U+FFFD (left to readDir, as a name not valid UTF-8 would be).
            if (pattern.startsWith("src/*/..") || pattern.includes("\uFFFD")) {
              assertEquals(s.streamed(), 0, what);
            } else {
              assert(s.streamed() > 0, what);
            }
          }
        }
      }
      // The directory named with U+FFFD is walked (by readDir), the one not UTF-8 is not.
      const all = await globWith(work, "src/**/*.py", true, findWalker(FIND!));
      assert(all.found.includes("src/odd\uFFFDdir/inner/f.py"), all.found.join(", "));
      assert(!all.found.some((p) => p.endsWith("z.py")), all.found.join(", "));
      // A plain entry of a refused directory and a symlink are asked about one by one.
      assert(all.asked.includes("plain src/sub/b.py"), all.asked.join(", "));
      assert(all.asked.includes("linked src/sub/in.py"), all.asked.join(", "));
      assert(!all.asked.includes("plain src/a.py"), all.asked.join(", "));
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "Glob's streamed **: a walk failing after streaming entries leaves nothing behind",
  ignore: FIND === null,
  fn: async () => {
    const { root, work } = await plant();
    try {
      const inner = findWalker(FIND!);
      let fed = 0;
      let calls = 0;
      const failing: SubtreeWalker = async (starts, opts) => {
        calls++;
        const sink: EntrySink | undefined = opts.sink;
        const counted: EntrySink | undefined = sink && ((t, s, e, named) => {
          fed++;
          sink(t, s, e, named);
        });
        await inner(starts, { ...opts, sink: counted });
        return null; // as a find failing at its end (exit status 1)
      };
      for (const pattern of PATTERNS) {
        assertEquals(
          await globWith(work, pattern, true, failing),
          await globWith(work, pattern, true),
          pattern,
        );
      }
      assert(fed > 0, "the failing walker streamed entries first");
      // Once failed, the same tree is not listed again by the walker: readDir walks it.
      calls = 0;
      await globWith(work, "src/**/*.py", true, failing);
      assertEquals(calls, 1);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "Glob tool with the streamed **: the same output and message as the readDir walk",
  ignore: FIND === null,
  fn: async () => {
    const { root, work } = await plant();
    try {
      const env = makeToolEnv({ workDir: work });
      const withFind = (await globTool(env))!;
      const withReadDir = (await globToolWith({ walk: "readDir" })(env))!;
      for (const pattern of PATTERNS) {
        for (const include_dirs of [true, false]) {
          const args = { pattern, include_dirs };
          assertEquals(
            await runTool(withFind, args),
            await runTool(withReadDir, args),
            JSON.stringify(args),
          );
        }
      }
      // The links leading out are left out, and said so.
      const rv = await runTool(withFind, { pattern: "src/**/*.py", include_dirs: false });
      assert(!String(rv.output).includes("out"), String(rv.output));
      assert(String(rv.output).includes("src/sub/in.py"), String(rv.output));
      assertEquals(
        rv.message,
        "Found 7 matches for pattern `src/**/*.py`. Left out 1 match(es) that lead outside " +
          "the workspace or this run's read scope, or onto kimi's own secret files.",
      );
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "Glob's streamed **: find's output read across many chunks gives every entry once",
  ignore: FIND === null,
  fn: async () => {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi_glob_stream_" }));
    try {
      // About 600 KB of find output: records cut at every chunk boundary, long and short ones.
      const expected: string[] = [];
      for (let d = 0; d < 12; d++) {
        const dir = join(root, "src", `d${d}`, "x".repeat(d * 20));
        await Deno.mkdir(dir, { recursive: true });
        for (let i = 0; i < 250; i++) {
          const name = `${"n".repeat((i * 7) % 150)}${i}.py`;
          await Deno.writeTextFile(join(dir, name), "");
          await Deno.writeTextFile(join(dir, `${i}.txt`), "");
          expected.push(`src/d${d}/${"x".repeat(d * 20)}/${name}`.replace("//", "/"));
        }
      }
      for (const processes of [1, 2]) {
        for (const filesOnly of [true, false]) {
          const s = streaming(findWalker(FIND!, { processes }));
          const found = await pathGlob(root, "src/**/*.py", { filesOnly, walker: s.walker });
          assertEquals(s.streamed(), 1);
          assertEquals(found.length, expected.length);
          assertEquals([...found].sort(), [...expected].sort());
        }
      }
      // With the name filter off (a `?`), every entry comes through the sink and is tested.
      const q = await pathGlob(root, "src/**/?.py", { walker: findWalker(FIND!) });
      assertEquals(q.sort(), expected.filter((p) => /\/\d\.py$/.test(p)).sort());
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "Glob's streamed **: kimi's secret files under the work dir stay out, as with readDir",
  ignore: FIND === null,
  fn: async () => {
    const work = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi_glob_stream_" }));
    try {
      // The share dir (makeToolEnv's default, `<work>/.kimi-share`) holds the secret config and
      // credentials; a hard link to the config sits among plain files.
      await Deno.mkdir(join(work, ".kimi-share", "credentials"), { recursive: true });
      await Deno.writeTextFile(join(work, ".kimi-share", "config.toml"), "api_key = 'sk-x'\n");
      await Deno.writeTextFile(join(work, ".kimi-share", "credentials", "kimi.toml"), "t\n");
      await Deno.mkdir(join(work, "src", "conf"), { recursive: true });
      await Deno.writeTextFile(join(work, "src", "conf", "app.toml"), "name = 'app'\n");
      await Deno.link(
        join(work, ".kimi-share", "config.toml"),
        join(work, "src", "conf", "x.toml"),
      );
      const env = makeToolEnv({ workDir: work });
      const withFind = (await globTool(env))!;
      const withReadDir = (await globToolWith({ walk: "readDir" })(env))!;
      for (const pattern of ["*/**/*.toml", ".kimi-share/**/*.toml", "src/**/*.toml"]) {
        const args = { pattern, include_dirs: false };
        const rv = await runTool(withFind, args);
        assertEquals(rv, await runTool(withReadDir, args), pattern);
        assert(!String(rv.output).includes(".kimi-share"), `${pattern}: ${rv.output}`);
      }
      const src = await runTool(withFind, { pattern: "src/**/*.toml", include_dirs: false });
      // (A hard link shows nothing of the file but its name: it is listed, as with readDir.)
      assertEquals(String(src.output), "src/conf/app.toml\nsrc/conf/x.toml");
      const all = await runTool(withFind, { pattern: "*/**/*.toml", include_dirs: false });
      assert(all.message.includes("Left out 2 match(es)"), all.message);
    } finally {
      await Deno.remove(work, { recursive: true });
    }
  },
});

Deno.test("FirstPaths keeps the k first paths of the full sort as they come, and counts all", () => {
  let seed = 11;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const names = ["a", "a.py", "a-b", "b", "B", "a b", ".x", "é", "z", "a/b"];
  for (let round = 0; round < 300; round++) {
    const n = rand(200);
    const paths: string[] = [];
    for (let i = 0; i < n; i++) {
      const depth = 1 + rand(3);
      paths.push(Array.from({ length: depth }, () => names[rand(names.length)]).join("/"));
    }
    const k = rand(40);
    const first = new FirstPaths(k);
    for (const p of paths) first.push(p);
    const what = `n=${n} k=${k}`;
    assertEquals(first.length, n, what);
    assertEquals(first.sorted(), [...paths].sort(comparePathParts).slice(0, k), what);
  }
  const first = new FirstPaths(2);
  for (const p of ["c", "b", "a", "d"]) first.push(p);
  first.clear();
  assertEquals([first.length, first.sorted()], [0, []]);
  first.push("z");
  assertEquals([first.length, first.sorted()], [1, ["z"]]);
});
