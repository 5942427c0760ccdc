import { join } from "node:path";
import { assertEquals } from "../../helpers/assert.ts";
import {
  CHILD_ENTRY_LIMIT,
  listWorkDir,
  ROOT_ENTRY_LIMIT,
} from "../../../lib/agent/work_dir_listing.ts";

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "work_dir_listing_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.chmod(dir, 0o755).catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
}

const isWindows = Deno.build.os === "windows";

Deno.test("tree golden: dirs first, children expanded, symlinks followed", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "regular.txt"), "hello");
    await Deno.mkdir(join(dir, "adir"));
    await Deno.writeTextFile(join(dir, "adir", "inside.txt"), "world");
    await Deno.mkdir(join(dir, "emptydir"));
    await Deno.writeFile(join(dir, "largefile.bin"), new Uint8Array(100_000));
    if (!isWindows) {
      await Deno.symlink(join(dir, "regular.txt"), join(dir, "link_to_regular"));
      await Deno.symlink(join(dir, "missing.txt"), join(dir, "link_to_regular_missing"));
      await Deno.symlink(join(dir, "adir"), join(dir, "link_dir"));
    }
    const expected = isWindows
      ? "├── adir/\n│   └── inside.txt\n├── emptydir/\n├── largefile.bin\n└── regular.txt"
      : [
        "├── adir/",
        "│   └── inside.txt",
        "├── emptydir/",
        "├── link_dir/",
        "│   └── inside.txt",
        "├── largefile.bin",
        "├── link_to_regular",
        "├── link_to_regular_missing",
        "└── regular.txt",
      ].join("\n");
    assertEquals(await listWorkDir(dir), expected);
  });
});

Deno.test("directories sort before files, each group by name (code point order)", async () => {
  await withTempDir(async (dir) => {
    for (const f of ["zebra.txt", "beta.txt", "B.txt"]) await Deno.writeTextFile(join(dir, f), "");
    for (const d of ["omega", "alpha", "Zed"]) await Deno.mkdir(join(dir, d));
    assertEquals(
      await listWorkDir(dir),
      [
        "├── Zed/",
        "├── alpha/",
        "├── omega/",
        "├── B.txt",
        "├── beta.txt",
        "└── zebra.txt",
      ].join("\n"),
    );
  });
});

Deno.test("last root directory uses a blank prefix for its children", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "only"));
    await Deno.mkdir(join(dir, "only", "sub"));
    await Deno.writeTextFile(join(dir, "only", "f.txt"), "");
    assertEquals(await listWorkDir(dir), "└── only/\n    ├── sub/\n    └── f.txt");
  });
});

Deno.test("root is capped at 30 entries with a footer", async () => {
  await withTempDir(async (dir) => {
    const overflow = 50;
    for (let i = 0; i < ROOT_ENTRY_LIMIT + overflow; i++) {
      await Deno.writeTextFile(join(dir, `file_${String(i).padStart(4, "0")}.txt`), "");
    }
    const lines = (await listWorkDir(dir)).split("\n");
    assertEquals(ROOT_ENTRY_LIMIT, 30);
    assertEquals(lines.length, ROOT_ENTRY_LIMIT + 1);
    assertEquals(lines[0], "├── file_0000.txt");
    assertEquals(lines[ROOT_ENTRY_LIMIT - 1], "├── file_0029.txt");
    assertEquals(lines.at(-1), `└── ... and ${overflow} more entries`);
  });
});

Deno.test("children are capped at 10 with a footer; last dir shown when root truncated", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "subdir"));
    for (let i = 0; i < CHILD_ENTRY_LIMIT + 5; i++) {
      await Deno.writeTextFile(join(dir, "subdir", `child_${String(i).padStart(3, "0")}.txt`), "");
    }
    const lines = (await listWorkDir(dir)).split("\n");
    assertEquals(CHILD_ENTRY_LIMIT, 10);
    assertEquals(lines.length, 1 + CHILD_ENTRY_LIMIT + 1);
    assertEquals(lines[0], "└── subdir/");
    assertEquals(lines[1], "    ├── child_000.txt");
    assertEquals(lines[CHILD_ENTRY_LIMIT], "    ├── child_009.txt");
    assertEquals(lines.at(-1), "    └── ... and 5 more");
  });
  await withTempDir(async (dir) => {
    // 31 dirs: the 30th is not last (a footer follows), so its children use "│   ".
    for (let i = 0; i < ROOT_ENTRY_LIMIT + 1; i++) {
      await Deno.mkdir(join(dir, `d${String(i).padStart(2, "0")}`));
    }
    await Deno.writeTextFile(join(dir, "d29", "x"), "");
    const lines = (await listWorkDir(dir)).split("\n");
    assertEquals(lines.slice(-3), ["├── d29/", "│   └── x", "└── ... and 1 more entries"]);
  });
});

Deno.test("empty directory", async () => {
  await withTempDir(async (dir) => {
    assertEquals(await listWorkDir(dir), "(empty directory)");
  });
});

Deno.test({
  name: "unreadable child directory shows [not readable]",
  ignore: isWindows || Deno.uid?.() === 0,
  fn: async () => {
    await withTempDir(async (dir) => {
      await Deno.mkdir(join(dir, "locked"));
      await Deno.writeTextFile(join(dir, "locked", "secret"), "");
      await Deno.mkdir(join(dir, "open"));
      await Deno.chmod(join(dir, "locked"), 0o000);
      try {
        assertEquals(
          await listWorkDir(dir),
          "├── locked/\n│   └── [not readable]\n└── open/",
        );
      } finally {
        await Deno.chmod(join(dir, "locked"), 0o755);
      }
    });
  },
});

Deno.test("directory the run may not read shows [not readable] (Deno --deny-read)", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "locked"));
    await Deno.writeTextFile(join(dir, "locked", "secret"), "");
    await Deno.mkdir(join(dir, "open"));
    const moduleUrl = new URL("../../../lib/agent/work_dir_listing.ts", import.meta.url);
    const code = `import { listWorkDir } from ${JSON.stringify(moduleUrl.href)};\n` +
      `console.log(JSON.stringify(await listWorkDir(${JSON.stringify(dir)})));`;
    const script = join(dir, "run.ts");
    await Deno.writeTextFile(script, code);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-prompt",
        "--no-config",
        `--allow-read=${dir},${new URL("../../../", import.meta.url).pathname}`,
        `--deny-read=${join(dir, "locked")}`,
        script,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stderr);
    assertEquals(
      JSON.parse(new TextDecoder().decode(out.stdout)),
      "├── locked/\n│   └── [not readable]\n├── open/\n└── run.ts",
    );
  });
});

Deno.test("missing directory does not throw", async () => {
  await withTempDir(async (dir) => {
    assertEquals(await listWorkDir(join(dir, "nope")), "[not readable]");
  });
});
