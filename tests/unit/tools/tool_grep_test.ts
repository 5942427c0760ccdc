/**
 * Grep: the ripgrep engine and the pure-TS engine give identical results for the same
 * parameters on a fixture repository (ignore files at several levels, hidden files, binary
 * files, symlinks, odd file names), plus goldens for the post-processing (mtime order,
 * relative paths, sensitive files, count summary, pagination) and rg's arguments.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeCallContext, makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { grepToolWith } from "../../../tools/grep.ts";
import { buildRgArgs, findRipgrep } from "../../../lib/search/ripgrep.ts";
import { briefOf } from "../../../lib/tooling/result.ts";
import type { Tool, ToolReturnValue } from "../../../lib/tooling/tool.ts";
import type { GrepQuery } from "../../../lib/search/grep_query.ts";

/** Fixture files, in mtime order (later = newer). */
const FILES: Record<string, string | Uint8Array> = {
  ".git/info/exclude": "excluded.txt\n",
  ".git/HEAD": "hello from git\n",
  ".gitignore": "dist/\n*.log\n!keep.log\n",
  ".ignore": "ignored_by_dot_ignore.txt\n",
  ".rgignore": "!build/\n",
  "src/main.py": "import os\n\ndef hello():\n    return 'Hello, world'\n\n# TODO: hello again\n",
  "src/util.py": "HELLO = 1\nhello_count = HELLO\n",
  "src/sub/.gitignore": "generated.py\n",
  "src/sub/generated.py": "hello = 'generated'\n",
  "src/sub/real.py": "print('hello')\n",
  "src/sub/deeper/.ignore": "!generated.py\n",
  "src/sub/deeper/generated.py": "hello = 'kept by .ignore'\n",
  ".hidden/config.txt": "hello hidden\n",
  ".hiddenfile": "hello dotfile\n",
  "build/out.txt": "hello build\n",
  "dist/bundle.js": "hello dist\n",
  "app.log": "hello log\n",
  "keep.log": "hello keep\n",
  "excluded.txt": "hello excluded\n",
  "ignored_by_dot_ignore.txt": "hello dot ignore\n",
  "data/.rgignore": "*.csv\n",
  "data/table.csv": "hello,csv\n",
  "data/notes.txt": "hello notes\n",
  "bin.dat": new Uint8Array([0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x77]),
  ".env": "SECRET=hello\n",
  "config/.env.local": "TOKEN=hello\n",
  "config/.env.example": "TOKEN=hello-placeholder\n",
  "docs/multi.md": "foo\nbar\nbaz foo\nbar\nend\n",
  "web/app.ts": "const hello: string = 'ts';\n",
  "web/app.js": "const hello = 'js';\n",
  "ctx.txt": Array.from(
    { length: 20 },
    (_, i) => [4, 6, 14].includes(i) ? `hello ${i + 1}` : `line ${i + 1}`,
  )
    .join("\n") + "\n",
  "weird-1-name/file-2-x.txt": "hello weird\nline two\n",
  "odd:name.txt": "hello colon\n",
  "crlf.txt": "first\r\nhello crlf\r\n",
  "bom.txt": "\ufeffhello bom\n",
};

async function makeRepo(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "grep_repo_" }));
  const base = Date.parse("2024-01-01T00:00:00Z") / 1000;
  let i = 0;
  for (const [name, content] of Object.entries(FILES)) {
    const p = join(dir, name);
    await Deno.mkdir(join(p, ".."), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(p, content);
    else await Deno.writeFile(p, content);
    const t = base + 10 * i++;
    await Deno.utime(p, t, t);
  }
  await Deno.symlink(join(dir, "src", "main.py"), join(dir, "link.py"));
  await Deno.symlink(join(dir, "src"), join(dir, "linkdir"));
  return dir;
}

interface Engines {
  dir: string;
  rg: Tool;
  ts: Tool;
}

async function engines(dir: string): Promise<Engines> {
  const env = makeToolEnv({ workDir: dir, shareDir: join(dir, ".share") });
  return {
    dir,
    rg: (await grepToolWith({ engine: "ripgrep" })(env))!,
    ts: (await grepToolWith({ engine: "typescript" })(env))!,
  };
}

async function both(e: Engines, args: Record<string, unknown>): Promise<ToolReturnValue> {
  const fromRg = await runTool(e.rg, args);
  const fromTs = await runTool(e.ts, args);
  assertEquals(fromTs, fromRg, `engines differ for ${JSON.stringify(args)}`);
  return fromRg;
}

const rgAvailable = (await findRipgrep()) !== null;

Deno.test({
  name: "Grep: ripgrep and the TS engine agree",
  ignore: !rgAvailable,
  fn: async (t) => {
    const dir = await makeRepo();
    const e = await engines(dir);
    const abs = (p: string) => join(dir, p);
    const cases: [string, Record<string, unknown>][] = [
      ["files mode", { pattern: "hello" }],
      ["files mode, absolute path", { pattern: "hello", path: dir }],
      ["files mode, -i", { pattern: "HELLO", "-i": true }],
      ["files mode, subdirectory", { pattern: "hello", path: abs("src") }],
      ["files mode, relative subdirectory", { pattern: "hello", path: "src" }],
      ["files mode, single file", { pattern: "hello", path: abs("src/main.py") }],
      ["content", { pattern: "hello", output_mode: "content", path: dir }],
      ["content, default path", { pattern: "hello", output_mode: "content" }],
      ["content, no line numbers", {
        pattern: "hello",
        output_mode: "content",
        "-n": false,
        path: dir,
      }],
      ["content, -C 1", { pattern: "hello", output_mode: "content", "-C": 1, path: dir }],
      ["content, -A 1 -B 2", {
        pattern: "hello",
        output_mode: "content",
        "-A": 1,
        "-B": 2,
        path: dir,
      }],
      ["content, -A beats -C", {
        pattern: "hello",
        output_mode: "content",
        "-A": 0,
        "-C": 3,
        path: abs("ctx.txt"),
      }],
      ["content, -C 0", { pattern: "hello", output_mode: "content", "-C": 0, path: dir }],
      ["content, context without numbers", {
        pattern: "hello",
        output_mode: "content",
        "-C": 1,
        "-n": false,
        path: dir,
      }],
      ["content, single file with context", {
        pattern: "hello",
        output_mode: "content",
        "-C": 2,
        path: abs("ctx.txt"),
      }],
      ["content, -i", { pattern: "hello", output_mode: "content", "-i": true, path: dir }],
      ["glob *.py", { pattern: "hello", glob: "*.py", path: dir }],
      ["glob with a slash", { pattern: "hello", glob: "src/**/*.py", path: dir }],
      ["glob with braces", {
        pattern: "hello",
        glob: "*.{ts,js}",
        output_mode: "content",
        path: dir,
      }],
      ["negated glob", { pattern: "hello", glob: "!*.txt", path: dir }],
      // Plain-name globs are compared with the entry's name, not run through picomatch.
      ["plain-name glob", { pattern: "hello", glob: "real.py", path: dir }],
      ["plain-name glob with dashes", { pattern: "hello", glob: "file-2-x.txt", path: dir }],
      ["negated plain-name glob", { pattern: "hello", glob: "!generated.py", path: dir }],
      ["plain-name glob naming a directory", { pattern: "hello", glob: "sub", path: dir }],
      ["negated plain-name glob naming a directory", {
        pattern: "hello",
        glob: "!sub",
        path: dir,
      }],
      ["plain-name glob of a dot file", { pattern: "hello", glob: ".hiddenfile", path: dir }],
      ["plain-name glob of a VCS directory", { pattern: "hello", glob: ".git", path: dir }],
      ["plain-name glob with **/", { pattern: "hello", glob: "**/real.py", path: dir }],
      ["anchored plain name", { pattern: "hello", glob: "/keep.log", path: dir }],
      ["plain-name glob, other case", { pattern: "hello", glob: "REAL.PY", path: dir }],
      ["glob whitelists an ignored file", { pattern: "hello", glob: "*.log", path: dir }],
      ["type py", { pattern: "hello", type: "py", output_mode: "content", path: dir }],
      ["type js", { pattern: "hello", type: "js", path: dir }],
      ["type ts", { pattern: "hello", type: "ts", path: dir }],
      ["unknown type", { pattern: "hello", type: "nosuchtype", path: dir }],
      ["multiline content", {
        pattern: "foo.bar",
        multiline: true,
        output_mode: "content",
        path: dir,
      }],
      ["multiline count", {
        pattern: "foo.bar",
        multiline: true,
        output_mode: "count_matches",
        path: dir,
      }],
      ["multiline files", { pattern: "foo\\nbar", multiline: true, path: dir }],
      ["newline without multiline", { pattern: "foo\\nbar", path: dir }],
      ["count", { pattern: "hello", output_mode: "count_matches", path: dir }],
      ["count, -i", { pattern: "hello", output_mode: "count_matches", "-i": true, path: dir }],
      ["count, single file", {
        pattern: "hello",
        output_mode: "count_matches",
        path: abs("ctx.txt"),
      }],
      ["pagination, files", { pattern: "hello", head_limit: 3, offset: 2, path: dir }],
      ["pagination, content", {
        pattern: "hello",
        output_mode: "content",
        head_limit: 4,
        offset: 1,
        path: dir,
      }],
      ["pagination, count", {
        pattern: "hello",
        output_mode: "count_matches",
        head_limit: 2,
        path: dir,
      }],
      ["unlimited", { pattern: "line", output_mode: "content", head_limit: 0, path: dir }],
      ["include_ignored", { pattern: "hello", include_ignored: true, path: dir }],
      ["include_ignored content", {
        pattern: "hello",
        include_ignored: true,
        output_mode: "content",
        path: dir,
      }],
      ["anchors", { pattern: "^hello \\d+$", output_mode: "content", path: dir }],
      ["no match", { pattern: "zzz_not_here", path: dir }],
      ["missing path", { pattern: "hello", path: abs("nope") }],
      ["sensitive single file", { pattern: "hello", path: abs(".env"), output_mode: "content" }],
      ["odd names", { pattern: "weird|colon", output_mode: "content", "-C": 1, path: dir }],
      ["below nested ignore files", { pattern: "hello", path: "src/sub" }],
      ["inside a dir whose parent ignores", { pattern: "hello", path: abs("src/sub/deeper") }],
      ["glob relative to the work dir", { pattern: "hello", path: "src", glob: "src/sub/*.py" }],
      ["anchored glob", { pattern: "hello", glob: "/src/*.py" }],
      ["negative context", { pattern: "hello", output_mode: "content", "-B": -1 }],
      ["inline flags, named groups", { pattern: "(?i)(?P<w>HELLO) \\d", output_mode: "content" }],
    ];
    try {
      for (const [name, args] of cases) {
        await t.step(name, async () => {
          await both(e, args);
        });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "Grep goldens (both engines)",
  ignore: !rgAvailable,
  fn: async (t) => {
    const dir = await makeRepo();
    const e = await engines(dir);
    try {
      await t.step(
        "files mode: newest first, relative, ignore rules, sensitive files dropped",
        async () => {
          const rv = await both(e, { pattern: "hello", path: dir });
          assertEquals(
            rv.output,
            [
              "bom.txt",
              "crlf.txt",
              "odd:name.txt",
              "weird-1-name/file-2-x.txt",
              "ctx.txt",
              "web/app.js",
              "web/app.ts",
              "config/.env.example",
              "data/notes.txt",
              "keep.log",
              "build/out.txt",
              ".hiddenfile",
              ".hidden/config.txt",
              "src/sub/deeper/generated.py",
              "src/sub/real.py",
              "src/util.py",
              "src/main.py",
            ].join("\n"),
          );
          assertEquals(
            rv.message,
            "Skipped 2 sensitive file(s) (.env, .env.local) to protect secrets. These files may " +
              "contain credentials or private keys.",
          );
        },
      );
      await t.step(
        "the default path prints ./-prefixed paths; a glob beats ignore files",
        async () => {
          const rv = await both(e, { pattern: "hello", glob: "*.py" });
          assertEquals(
            rv.output,
            "./src/sub/deeper/generated.py\n./src/sub/real.py\n./src/sub/generated.py\n./src/util.py\n./src/main.py",
          );
        },
      );
      await t.step("content with context, sorted by path", async () => {
        const rv = await both(e, {
          pattern: "hello [57]$",
          output_mode: "content",
          "-C": 1,
          path: dir,
        });
        assertEquals(
          rv.output,
          "ctx.txt-4-line 4\nctx.txt:5:hello 5\nctx.txt-6-line 6\nctx.txt:7:hello 7\nctx.txt-8-line 8",
        );
        assertEquals(rv.message, "");
        const two = await both(e, {
          pattern: "hello (15|weird)",
          output_mode: "content",
          "-B": 1,
          path: dir,
        });
        assertEquals(
          two.output,
          "ctx.txt-14-line 14\nctx.txt:15:hello 15\n--\nweird-1-name/file-2-x.txt:1:hello weird",
        );
      });
      await t.step("count summary", async () => {
        const rv = await both(e, {
          pattern: "hello",
          output_mode: "count_matches",
          path: join(dir, "src"),
        });
        assertEquals(rv.output, "main.py:2\nsub/deeper/generated.py:1\nsub/real.py:1\nutil.py:1");
        assertEquals(rv.message, "Found 5 total occurrences across 4 files.");
      });
      await t.step("pagination message", async () => {
        const rv = await both(e, {
          pattern: "hello",
          output_mode: "count_matches",
          head_limit: 2,
          offset: 1,
          path: join(dir, "src"),
        });
        assertEquals(rv.output, "sub/deeper/generated.py:1\nsub/real.py:1");
        assertEquals(
          rv.message,
          "Found 5 total occurrences across 4 files. Results truncated to 2 lines (total: 4). Use offset=3 to see more.",
        );
      });
      await t.step("no matches", async () => {
        const rv = await both(e, { pattern: "zzz_not_here" });
        assertEquals([rv.is_error, rv.output, rv.message], [false, "", "No matches found."]);
      });
      await t.step("errors", async () => {
        const rv = await both(e, { pattern: "hello", type: "nosuchtype" });
        assertEquals([rv.message, briefOf(rv)], [
          "Failed to grep. Error: rg: unrecognized file type: nosuchtype\n",
          "Failed to grep",
        ]);
        const nl = await both(e, { pattern: "a\\nb" });
        assert(
          nl.message.startsWith(
            'Failed to grep. Error: rg: the literal "\\n" is not allowed in a regex',
          ),
        );
      });
      await t.step("the share dir's config is sensitive", async () => {
        await Deno.mkdir(join(dir, ".share"));
        await Deno.writeTextFile(join(dir, ".share", "config.toml"), "api_key = 'hello'\n");
        const rv = await both(e, { pattern: "api_key", include_ignored: true });
        assertEquals(rv.output, "");
        assertEquals(
          rv.message,
          "No matches found. Skipped 1 sensitive file(s) (config.toml) to protect secrets. " +
            "These files may contain credentials or private keys.",
        );
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("Grep TS engine: abort and timeout", async () => {
  const dir = await makeRepo();
  try {
    const env = makeToolEnv({ workDir: dir });
    const ts = (await grepToolWith({ engine: "typescript", timeoutMs: 0 })(env))!;
    const timedOut = await runTool(ts, { pattern: "hello" });
    assertEquals(
      [timedOut.is_error, timedOut.message, briefOf(timedOut)],
      [true, "Grep timed out after 0s. Try a more specific path or pattern.", "Grep timed out"],
    );
    const ctx = makeCallContext();
    ctx.controller.abort(new Error("cancelled"));
    let caught: unknown;
    try {
      await runTool(
        (await grepToolWith({ engine: "typescript" })(env))!,
        { pattern: "hello" },
        ctx,
      );
    } catch (err) {
      caught = err;
    }
    assertEquals((caught as Error)?.message, "cancelled");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Grep falls back to the TS engine when rg may not run", async () => {
  const dir = await makeRepo();
  try {
    const runs: string[] = [];
    const env = makeToolEnv({
      workDir: dir,
      scope: {
        check: (kind, target) => {
          if (kind === "run") {
            runs.push(target ?? "");
            return { allowed: false, message: "no run" };
          }
          return { allowed: true };
        },
      },
    });
    const rv = await runTool((await grepToolWith({})(env))!, { pattern: "hello weird", path: dir });
    assertEquals(rv.output, "weird-1-name/file-2-x.txt");
    assertEquals(runs.length, rgAvailable ? 1 : 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ripgrep arguments follow the reference", () => {
  const q: GrepQuery = {
    pattern: "-x",
    path: "/w",
    cwd: "/w",
    glob: "*.py",
    outputMode: "content",
    before: 1,
    after: 2,
    context: 3,
    lineNumber: true,
    ignoreCase: true,
    type: "py",
    multiline: true,
    includeIgnored: true,
  };
  assertEquals(buildRgArgs(q), [
    "--hidden",
    "--no-ignore",
    "--glob",
    "!.git",
    "--glob",
    "!.svn",
    "--glob",
    "!.hg",
    "--glob",
    "!.bzr",
    "--glob",
    "!.jj",
    "--glob",
    "!.sl",
    "--ignore-case",
    "--multiline",
    "--multiline-dotall",
    "--before-context",
    "1",
    "--after-context",
    "2",
    "--context",
    "3",
    "--line-number",
    "--glob",
    "*.py",
    "--type",
    "py",
    "--",
    "-x",
    "/w",
  ]); // deno-fmt-ignore
  assertEquals(
    buildRgArgs({ ...q, outputMode: "files_with_matches", includeIgnored: false, glob: null, type: null, ignoreCase: false, multiline: false }, { singleThreaded: true }),
    [
      "--max-columns", "500", "--hidden",
      "--glob", "!.git", "--glob", "!.svn", "--glob", "!.hg", "--glob", "!.bzr", "--glob", "!.jj", "--glob", "!.sl",
      "-j", "1", "--files-with-matches", "--", "-x", "/w",
    ],
  ); // deno-fmt-ignore
  assertEquals(buildRgArgs({ ...q, outputMode: "count_matches" }).slice(-4), ["--count-matches", "--", "-x", "/w"]);
});

Deno.test("Grep: the count summary agrees with the output, single-file searches included", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "grep_count_" }));
  try {
    await Deno.writeTextFile(join(dir, "a.txt"), "hello\nhello hello\nx\n");
    await Deno.writeTextFile(join(dir, "b.txt"), "hello\n");
    const env = makeToolEnv({ workDir: dir, shareDir: join(dir, ".share") });
    const engines = rgAvailable ? ["ripgrep", "typescript"] as const : ["typescript"] as const;
    for (const engine of engines) {
      const grep = (await grepToolWith({ engine })(env))!;
      const single = await runTool(grep, {
        pattern: "hello",
        output_mode: "count_matches",
        path: join(dir, "a.txt"),
      });
      assertEquals(single.output, "3", engine);
      assertEquals(single.message, "Found 3 total occurrences across 1 files.", engine);
      const all = await runTool(grep, { pattern: "hello", output_mode: "count_matches" });
      assertEquals(all.output, "./a.txt:3\n./b.txt:1", engine);
      assertEquals(all.message, "Found 4 total occurrences across 2 files.", engine);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Grep TS engine: on a larger tree every file is searched exactly once", async () => {
  // The reads are spread over turns of the event loop: a file searched twice, skipped or given
  // another file's count shows here as a duplicate, missing or wrong line.
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "grep_lanes_" }));
  try {
    const expected: string[] = [];
    for (let d = 0; d < 12; d++) {
      await Deno.mkdir(join(dir, `d${d}`));
      for (let f = 0; f < 100; f++) {
        const i = d * 100 + f;
        const hits = i % 7 === 3 ? 0 : (i % 5) + 1;
        await Deno.writeTextFile(
          join(dir, `d${d}`, `f${i}.txt`),
          `line ${i}\n` + "needle here\n".repeat(hits) + "tail\n",
        );
        if (hits > 0) expected.push(`d${d}/f${i}.txt:${hits}`);
      }
    }
    const env = makeToolEnv({ workDir: dir, shareDir: join(dir, ".share") });
    const ts = (await grepToolWith({ engine: "typescript" })(env))!;
    const counts = await runTool(ts, {
      pattern: "needle",
      output_mode: "count_matches",
      path: dir,
      head_limit: 0,
    });
    assertEquals(String(counts.output).split("\n").sort(), expected.sort());
    const files = await runTool(ts, { pattern: "needle", path: dir, head_limit: 0 });
    assertEquals(
      String(files.output).split("\n").sort(),
      expected.map((l) => l.slice(0, l.lastIndexOf(":"))).sort(),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
