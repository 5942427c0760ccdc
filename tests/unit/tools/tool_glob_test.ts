/**
 * Glob: pathlib semantics (`*` in one segment, `**` zero or more directories, hidden files,
 * trailing `/`), the `**` refusal with the work-dir listing, the 1000-match cap, the workspace
 * rule, and sorted relative output.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { globTool } from "../../../tools/glob.ts";
import { briefOf } from "../../../lib/tooling/result.ts";
import type { Tool } from "../../../lib/tooling/tool.ts";

const FILES = [
  "main.py",
  "setup.py",
  "README.md",
  "src/main.py",
  "src/utils.py",
  "src/notes.md",
  "src/app/core.py",
  "src/app/models/user.py",
  "src/app/models/order.py",
  "src/.hidden/secret.py",
  "docs/guide.md",
];

async function fixture(): Promise<{ dir: string; tool: Tool }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "glob_" }));
  for (const f of FILES) {
    await Deno.mkdir(join(dir, f, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, f), f);
  }
  await Deno.mkdir(join(dir, "empty"));
  return { dir, tool: (await globTool(makeToolEnv({ workDir: dir })))! };
}

Deno.test("Glob `*.py` matches the top level only", async () => {
  const { dir, tool } = await fixture();
  try {
    const rv = await runTool(tool, { pattern: "*.py" });
    assertEquals(rv.is_error, false);
    assertEquals(rv.output, "main.py\nsetup.py");
    assertEquals(rv.message, "Found 2 matches for pattern `*.py`.");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Glob `src/**/*.py` matches at every depth, src/main.py included", async () => {
  const { dir, tool } = await fixture();
  try {
    const rv = await runTool(tool, { pattern: "src/**/*.py" });
    assertEquals(
      rv.output,
      [
        "src/.hidden/secret.py",
        "src/app/core.py",
        "src/app/models/order.py",
        "src/app/models/user.py",
        "src/main.py",
        "src/utils.py",
      ].join("\n"),
    );
    assertEquals(rv.message, "Found 6 matches for pattern `src/**/*.py`.");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Glob directories, include_dirs and the directory parameter", async () => {
  const { dir, tool } = await fixture();
  try {
    assertEquals(
      (await runTool(tool, { pattern: "src/*" })).output,
      "src/.hidden\nsrc/app\nsrc/main.py\nsrc/notes.md\nsrc/utils.py",
    );
    assertEquals(
      (await runTool(tool, { pattern: "src/*", include_dirs: false })).output,
      "src/main.py\nsrc/notes.md\nsrc/utils.py",
    );
    assertEquals((await runTool(tool, { pattern: "src/*/" })).output, "src/.hidden\nsrc/app");
    assertEquals(
      (await runTool(tool, { pattern: "src/**" })).output.toString().split("\n").slice(0, 3),
      ["src", "src/.hidden", "src/.hidden/secret.py"],
    );
    const sub = await runTool(tool, { pattern: "*.py", directory: join(dir, "src/app/models") });
    assertEquals(sub.output, "order.py\nuser.py");
    assertEquals(
      (await runTool(tool, { pattern: "[mu]*.py", directory: join(dir, "src") })).output,
      "main.py\nutils.py",
    );
    assertEquals((await runTool(tool, { pattern: "?ain.py" })).output, "main.py");
    const none = await runTool(tool, { pattern: "*.rs" });
    assertEquals([none.is_error, none.output, none.message], [
      false,
      "",
      "No matches found for pattern `*.rs`.",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Glob refuses ** behind leading ./ segments as it refuses a leading **", async () => {
  const { dir, tool } = await fixture();
  try {
    for (const pattern of ["./**/*.py", ".//**", "././**/x"]) {
      const rv = await runTool(tool, { pattern });
      assertEquals(briefOf(rv), "Unsafe pattern", pattern);
    }
    const ok = await runTool(tool, { pattern: "./src/*.py" });
    assertEquals(ok.is_error, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Glob refuses patterns starting with ** and lists the work dir", async () => {
  const { dir, tool } = await fixture();
  try {
    const rv = await runTool(tool, { pattern: "**/*.py" });
    assertEquals(rv.is_error, true);
    assertEquals(briefOf(rv), "Unsafe pattern");
    assertEquals(
      rv.message,
      "Pattern `**/*.py` starts with '**' which is not allowed. This would recursively search " +
        "all directories and may include large directories like `node_modules`. Use more " +
        "specific patterns instead. For your convenience, a list of all files and directories " +
        "in the top level of the working directory is provided below.",
    );
    assertEquals(
      rv.output,
      [
        "├── docs/",
        "│   └── guide.md",
        "├── empty/",
        "├── src/",
        "│   ├── .hidden/",
        "│   ├── app/",
        "│   ├── main.py",
        "│   ├── notes.md",
        "│   └── utils.py",
        "├── README.md",
        "├── main.py",
        "└── setup.py",
      ].join("\n"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Glob caps results at 1000", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "glob_many_" }));
  try {
    await Deno.mkdir(join(dir, "d"));
    for (let i = 0; i < 1005; i++) {
      await Deno.writeTextFile(join(dir, "d", `f${String(i).padStart(4, "0")}.txt`), "");
    }
    const tool = (await globTool(makeToolEnv({ workDir: dir })))!;
    const rv = await runTool(tool, { pattern: "d/*.txt" });
    const lines = (rv.output as string).split("\n");
    assertEquals(lines.length, 1000);
    assertEquals([lines[0], lines[999]], ["d/f0000.txt", "d/f0999.txt"]);
    assertEquals(
      rv.message,
      "Found 1005 matches for pattern `d/*.txt`. Only the first 1000 matches are returned. " +
        "You may want to use a more specific pattern.",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Glob directory errors", async () => {
  const { dir, tool } = await fixture();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "glob_out_" }));
  try {
    const rel = await runTool(tool, { pattern: "*", directory: "src" });
    assertEquals(
      [rel.message, briefOf(rel)],
      [
        "`src` is not an absolute path. You must provide an absolute path to search.",
        "Invalid directory",
      ],
    );
    const out = await runTool(tool, { pattern: "*", directory: outside });
    assertEquals(
      out.message,
      `\`${outside}\` is outside the workspace. You can only search within the working ` +
        "directory, additional directories, and skills directories.",
    );
    const missing = await runTool(tool, { pattern: "*", directory: join(dir, "nope") });
    assertEquals([missing.message, briefOf(missing)], [
      `\`${join(dir, "nope")}\` does not exist.`,
      "Directory not found",
    ]);
    const file = await runTool(tool, { pattern: "*", directory: join(dir, "main.py") });
    assertEquals([file.message, briefOf(file)], [
      `\`${join(dir, "main.py")}\` is not a directory.`,
      "Invalid directory",
    ]);
    const added = (await globTool(makeToolEnv({ workDir: dir, additionalDirs: [outside] })))!;
    await Deno.writeTextFile(join(outside, "x.txt"), "");
    assertEquals((await runTool(added, { pattern: "*.txt", directory: outside })).output, "x.txt");
    const abs = await runTool(tool, { pattern: "/etc/*" });
    assertEquals(briefOf(abs), "Glob failed");
    assert(abs.message.startsWith("Failed to search for pattern /etc/*. Error: "));
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});
