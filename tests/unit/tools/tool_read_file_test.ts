/**
 * ReadFile: the reference goldens (§7.2), every message and limit, tail mode, and refusals.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { readFileTool } from "../../../tools/read_file.ts";
import { briefOf } from "../../../lib/tooling/result.ts";
import type { Tool } from "../../../lib/tooling/tool.ts";
import { denialMessage, type PermissionScope } from "../../../lib/tooling/scope.ts";

const FIVE_LINES = "Line 1: Hello World\nLine 2: Second line\nLine 3: Third line\n" +
  "Line 4: Fourth line\nLine 5: End of file";

async function setup(): Promise<{ dir: string; tool: Tool; cleanup: () => Promise<void> }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "readfile_" }));
  await Deno.writeTextFile(join(dir, "five.txt"), FIVE_LINES);
  const tool = (await readFileTool(makeToolEnv({ workDir: dir })))!;
  return { dir, tool, cleanup: () => Deno.remove(dir, { recursive: true }) };
}

Deno.test("ReadFile goldens of the five-line file", async (t) => {
  const { dir, tool, cleanup } = await setup();
  try {
    await t.step("whole file", async () => {
      const rv = await runTool(tool, { path: "five.txt" });
      assertEquals(rv.is_error, false);
      assertEquals(
        rv.output,
        "     1\tLine 1: Hello World\n     2\tLine 2: Second line\n     3\tLine 3: Third line\n" +
          "     4\tLine 4: Fourth line\n     5\tLine 5: End of file",
      );
      assertEquals(
        rv.message,
        "5 lines read from file starting from line 1. Total lines in file: 5. End of file reached.",
      );
      assertEquals(rv.display, []);
    });
    await t.step("n_lines=2", async () => {
      const rv = await runTool(tool, { path: join(dir, "five.txt"), n_lines: 2 });
      assertEquals(rv.output, "     1\tLine 1: Hello World\n     2\tLine 2: Second line\n");
      assertEquals(
        rv.message,
        "2 lines read from file starting from line 1. Total lines in file: 5.",
      );
    });
    await t.step("offset 3", async () => {
      const rv = await runTool(tool, { path: "five.txt", line_offset: 3 });
      assertEquals(
        rv.output,
        "     3\tLine 3: Third line\n     4\tLine 4: Fourth line\n     5\tLine 5: End of file",
      );
      assertEquals(
        rv.message,
        "3 lines read from file starting from line 3. Total lines in file: 5. End of file reached.",
      );
    });
    await t.step("offset past the end", async () => {
      const rv = await runTool(tool, { path: "five.txt", line_offset: 10 });
      assertEquals(rv.output, "");
      assertEquals(
        rv.message,
        "No lines read from file. Total lines in file: 5. End of file reached.",
      );
    });
    await t.step("empty file", async () => {
      await Deno.writeTextFile(join(dir, "empty.txt"), "");
      const rv = await runTool(tool, { path: "empty.txt" });
      assertEquals(rv.is_error, false);
      assertEquals(rv.output, "");
      assertEquals(
        rv.message,
        "No lines read from file. Total lines in file: 0. End of file reached.",
      );
    });
    await t.step("trailing newline does not add a line; CRLF is kept", async () => {
      await Deno.writeTextFile(join(dir, "crlf.txt"), "a\r\nb\r\n");
      const rv = await runTool(tool, { path: "crlf.txt" });
      assertEquals(rv.output, "     1\ta\r\n     2\tb\r\n");
      assertEquals(
        rv.message,
        "2 lines read from file starting from line 1. Total lines in file: 2. End of file reached.",
      );
    });
  } finally {
    await cleanup();
  }
});

Deno.test("ReadFile tail mode", async (t) => {
  const { dir, tool, cleanup } = await setup();
  try {
    await t.step("last two lines", async () => {
      const rv = await runTool(tool, { path: "five.txt", line_offset: -2 });
      assertEquals(rv.output, "     4\tLine 4: Fourth line\n     5\tLine 5: End of file");
      assertEquals(
        rv.message,
        "2 lines read from file starting from line 4. Total lines in file: 5. End of file reached.",
      );
    });
    await t.step("n_lines counts from the head of the tail window", async () => {
      const rv = await runTool(tool, { path: "five.txt", line_offset: -3, n_lines: 1 });
      assertEquals(rv.output, "     3\tLine 3: Third line\n");
      assertEquals(
        rv.message,
        "1 lines read from file starting from line 3. Total lines in file: 5.",
      );
    });
    await t.step("window larger than the file", async () => {
      const rv = await runTool(tool, { path: "five.txt", line_offset: -100 });
      assertEquals(
        rv.message,
        "5 lines read from file starting from line 1. Total lines in file: 5. End of file reached.",
      );
    });
    await t.step("tail of an empty file", async () => {
      await Deno.writeTextFile(join(dir, "empty.txt"), "");
      const rv = await runTool(tool, { path: "empty.txt", line_offset: -5 });
      assertEquals(rv.output, "");
      assertEquals(
        rv.message,
        "No lines read from file. Total lines in file: 0. End of file reached.",
      );
    });
    await t.step("byte cap keeps the newest lines", async () => {
      const line = "x".repeat(999) + "\n"; // 1000 bytes per line
      await Deno.writeTextFile(join(dir, "wide.txt"), line.repeat(300));
      const rv = await runTool(tool, { path: "wide.txt", line_offset: -300 });
      // 102 lines (102,000 bytes) fit in 102,400; the 103rd would not.
      assertEquals(
        rv.message,
        "102 lines read from file starting from line 199. Total lines in file: 300. Max 102400 bytes reached.",
      );
      assert((rv.output as string).startsWith("   199\t"));
      assert((rv.output as string).endsWith("   300\t" + line));
    });
  } finally {
    await cleanup();
  }
});

Deno.test("ReadFile limits: long lines, byte cap, line cap", async (t) => {
  const { dir, tool, cleanup } = await setup();
  try {
    await t.step("lines over 2000 characters are cut with ...", async () => {
      await Deno.writeTextFile(
        join(dir, "long.txt"),
        "short\n" + "a".repeat(2500) + "\n" + "b".repeat(20_000) + "\r\nend",
      );
      const rv = await runTool(tool, { path: "long.txt" });
      const lines = (rv.output as string).split(/(?<=\n)/);
      assertEquals(lines[0], "     1\tshort\n");
      assertEquals(lines[1], "     2\t" + "a".repeat(1996) + "...\n");
      assertEquals(lines[2], "     3\t" + "b".repeat(1995) + "...\r\n");
      assertEquals(lines[3], "     4\tend");
      assertEquals(
        rv.message,
        "4 lines read from file starting from line 1. Total lines in file: 4. End of file reached. " +
          "Lines [2, 3] were truncated.",
      );
    });
    await t.step("multi-byte characters count as one", async () => {
      await Deno.writeTextFile(join(dir, "cjk.txt"), "你".repeat(1999) + "\n");
      const rv = await runTool(tool, { path: "cjk.txt" });
      assertEquals(rv.output, "     1\t" + "你".repeat(1999) + "\n");
    });
    await t.step("100 KiB byte cap", async () => {
      await Deno.writeTextFile(join(dir, "bytes.txt"), ("y".repeat(1000) + "\n").repeat(200));
      const rv = await runTool(tool, { path: "bytes.txt" });
      // 1001 bytes a line: line 103 brings the total to 103,103 >= 102,400.
      assertEquals(
        rv.message,
        "103 lines read from file starting from line 1. Total lines in file: 200. Max 102400 bytes reached.",
      );
    });
    await t.step("1000-line cap", async () => {
      await Deno.writeTextFile(join(dir, "many.txt"), "l\n".repeat(1500));
      const def = await runTool(tool, { path: "many.txt" });
      assertEquals(
        def.message,
        "1000 lines read from file starting from line 1. Total lines in file: 1500.",
      );
      const more = await runTool(tool, { path: "many.txt", n_lines: 5000 });
      assertEquals(
        more.message,
        "1000 lines read from file starting from line 1. Total lines in file: 1500. Max 1000 lines reached.",
      );
      const from = await runTool(tool, { path: "many.txt", line_offset: 1001 });
      assertEquals(
        from.message,
        "500 lines read from file starting from line 1001. Total lines in file: 1500. End of file reached.",
      );
      assert((from.output as string).startsWith("  1001\tl\n"));
    });
  } finally {
    await cleanup();
  }
});

Deno.test("ReadFile errors", async (t) => {
  const { dir, tool, cleanup } = await setup();
  try {
    const check = async (args: Record<string, unknown>, message: string, brief: string) => {
      const rv = await runTool(tool, args);
      assertEquals(rv.is_error, true);
      assertEquals(rv.message, message);
      assertEquals(briefOf(rv), brief);
    };
    await t.step(
      "empty path",
      () => check({ path: "" }, "File path cannot be empty.", "Empty file path"),
    );
    await t.step(
      "missing file",
      () => check({ path: "nope.txt" }, "`nope.txt` does not exist.", "File not found"),
    );
    await t.step("directory", async () => {
      await Deno.mkdir(join(dir, "sub"));
      await check({ path: "sub" }, "`sub` is not a file.", "Invalid path");
    });
    await t.step("relative path outside the work dir", () =>
      check(
        { path: "../outside.txt" },
        "`../outside.txt` is not an absolute path. You must provide an absolute path to read a " +
          "file outside the working directory.",
        "Invalid path",
      ));
    await t.step("image", async () => {
      await Deno.writeFile(
        join(dir, "pic.png"),
        new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 0, 0]),
      );
      await check(
        { path: "pic.png" },
        "`pic.png` is a image file. Use other appropriate tools to read image or video files.",
        "Unsupported file type",
      );
    });
    await t.step("image sniffed despite a text extension", async () => {
      await Deno.writeFile(join(dir, "pic.txt"), new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2]));
      await check(
        { path: "pic.txt" },
        "`pic.txt` is a image file. Use other appropriate tools to read image or video files.",
        "Unsupported file type",
      );
    });
    await t.step("binary", async () => {
      await Deno.writeFile(join(dir, "blob.dat"), new Uint8Array([1, 0, 2, 3]));
      const rv = await runTool(tool, { path: "blob.dat" });
      assertEquals(briefOf(rv), "File not readable");
      assert(rv.message.startsWith("`blob.dat` seems not readable."));
      await Deno.writeTextFile(join(dir, "doc.pdf"), "plain text but a pdf name");
      assertEquals(briefOf(await runTool(tool, { path: "doc.pdf" })), "File not readable");
    });
    await t.step("sensitive files", async () => {
      const message = (p: string) =>
        `\`${p}\` appears to contain secrets (matched sensitive file pattern). ` +
        "Reading this file is blocked to protect credentials.";
      for (const name of [".env", ".env.local", "id_rsa", "id_ed25519", "credentials"]) {
        await Deno.writeTextFile(join(dir, name), "SECRET=1\n");
        await check({ path: name }, message(name), "Sensitive file");
      }
      await Deno.mkdir(join(dir, ".aws"));
      await Deno.writeTextFile(join(dir, ".aws", "credentials"), "k");
      await check({ path: ".aws/credentials" }, message(".aws/credentials"), "Sensitive file");
      await Deno.writeTextFile(join(dir, ".env.example"), "SECRET=\n");
      assertEquals((await runTool(tool, { path: ".env.example" })).is_error, false);
    });
    await t.step("the share dir's config and credentials", async () => {
      const share = join(dir, "share");
      await Deno.mkdir(join(share, "credentials"), { recursive: true });
      await Deno.writeTextFile(join(share, "config.toml"), "api_key = 'x'\n");
      await Deno.writeTextFile(join(share, "credentials", "kimi-code.json"), "{}");
      await Deno.writeTextFile(join(share, "other.toml"), "ok\n");
      const shared = (await readFileTool(makeToolEnv({ workDir: dir, shareDir: share })))!;
      for (const p of [join(share, "config.toml"), join(share, "credentials", "kimi-code.json")]) {
        const rv = await runTool(shared, { path: p });
        assertEquals(briefOf(rv), "Sensitive file");
      }
      assertEquals((await runTool(shared, { path: join(share, "other.toml") })).is_error, false);
    });
    await t.step("sandbox denial touches nothing", async () => {
      const seen: string[] = [];
      const scope: PermissionScope = {
        check: (kind, target) => {
          seen.push(`${kind}:${target}`);
          return { allowed: false, message: denialMessage(kind, target) };
        },
      };
      const denied = (await readFileTool(makeToolEnv({ workDir: dir, scope })))!;
      const rv = await runTool(denied, { path: "nope.txt" });
      assertEquals(rv.message, denialMessage("read", join(dir, "nope.txt")));
      assertEquals(briefOf(rv), "Sandbox denied");
      assertEquals(seen, [`read:${join(dir, "nope.txt")}`]);
    });
  } finally {
    await cleanup();
  }
});

Deno.test("ReadFile outside the workspace", async () => {
  const { dir, cleanup } = await setup();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "readfile_out_" }));
  try {
    await Deno.writeTextFile(join(outside, "o.txt"), "outside\n");
    const work = join(dir, "work");
    await Deno.mkdir(work);
    const tool = (await readFileTool(makeToolEnv({ workDir: work })))!;
    const abs = await runTool(tool, { path: join(outside, "o.txt") });
    assertEquals(abs.output, "     1\toutside\n");
    const rel = await runTool(tool, { path: "../five.txt" });
    assertEquals(
      rel.message,
      "`../five.txt` is not an absolute path. You must provide an absolute path to read a file " +
        "outside the working directory.",
    );
    // A symlink inside the work dir that points outside counts as outside.
    await Deno.symlink(join(outside, "o.txt"), join(work, "link.txt"));
    assertEquals(briefOf(await runTool(tool, { path: "link.txt" })), "Invalid path");
    // Additional dirs are part of the workspace: relative paths into them are fine.
    const withAdd = (await readFileTool(makeToolEnv({ workDir: work, additionalDirs: [dir] })))!;
    assertEquals(
      (await runTool(withAdd, { path: "../five.txt", n_lines: 1 })).output,
      "     1\tLine 1: Hello World\n",
    );
  } finally {
    await cleanup();
    await Deno.remove(outside, { recursive: true });
  }
});
