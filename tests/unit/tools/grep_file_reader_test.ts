/**
 * The TS Grep engine's file reads: one buffer reused from file to file (grown for a larger
 * file), and a FIFO put where the walk saw a file reads as empty instead of blocking the process.
 */
import { join } from "node:path";
import { assertEquals } from "../../helpers/assert.ts";
import { makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { grepToolWith } from "../../../tools/grep.ts";
import { FileReader } from "../../../lib/search/ts_grep.ts";

Deno.test("FileReader: files larger than the buffer, then smaller ones, read whole", async () => {
  const dir = await Deno.makeTempDir({ prefix: "grep_reader_" });
  try {
    const sizes = [0, 1, 65_535, 65_536, 65_537, 200_000, 3_000_000, 10, 70_000];
    const reader = new FileReader();
    for (const size of sizes) {
      const bytes = new Uint8Array(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 31 + size) % 251;
      const path = join(dir, `f${size}`);
      await Deno.writeFile(path, bytes);
      const got = reader.read(path);
      assertEquals(got.length, size, `size ${size}`);
      assertEquals(got, bytes, `content of ${size}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FileReader: a FIFO reads as empty, without blocking", async () => {
  const dir = await Deno.makeTempDir({ prefix: "grep_fifo_" });
  try {
    const fifo = join(dir, "pipe");
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assertEquals(made.success, true);
    assertEquals(new FileReader().read(fifo).length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Grep TS engine: matches across a big file's buffer boundaries, CRLF, non-UTF-8", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "grep_big_" }));
  try {
    // Lines of 100 bytes: line i starts at byte 100 * i, so the needles sit before, across and
    // after the 64 KiB and 128 KiB marks, and on the last line (no final newline).
    const lines = Array.from({ length: 3000 }, (_, i) => `row ${i} `.padEnd(99, "."));
    for (const i of [0, 654, 655, 1310, 1311, 2999]) lines[i] = `needle ${i}`.padEnd(99, "-");
    await Deno.writeTextFile(join(dir, "big.txt"), lines.join("\n"));
    await Deno.writeTextFile(join(dir, "crlf.txt"), "a\r\nneedle crlf\r\nb\r\n");
    await Deno.writeFile(
      join(dir, "latin1.txt"),
      new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x0a]),
    );
    await Deno.writeTextFile(join(dir, "small.txt"), "x\nneedle small\n");
    const env = makeToolEnv({ workDir: dir, shareDir: join(dir, ".share") });
    const ts = (await grepToolWith({ engine: "typescript" })(env))!;
    const rv = await runTool(ts, { pattern: "needle", output_mode: "content", head_limit: 0 });
    assertEquals(
      String(rv.output).split("\n"),
      [
        ...[0, 654, 655, 1310, 1311, 2999].map((i) =>
          `./big.txt:${i + 1}:${`needle ${i}`.padEnd(99, "-")}`
        ),
        "./crlf.txt:2:needle crlf\r",
        "./latin1.txt:1:caf\ufffd needle",
        "./small.txt:2:needle small",
      ],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
