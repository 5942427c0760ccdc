import { Context } from "../../../lib/soul/context.ts";
import { assertEquals, assertRejects } from "../../helpers/assert.ts";

Deno.test("context: restore skips a torn last line and malformed records", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/context.jsonl`;
  const ctx = await Context.restore(file);
  await ctx.writeSystemPrompt("SYS");
  await ctx.checkpoint();
  await ctx.append({ role: "user", content: [{ type: "text", text: "hello world!" }] });
  await ctx.updateTokenCount(10);
  await ctx.append({ role: "assistant", content: [{ type: "text", text: "abcdefgh" }] });
  await Deno.writeTextFile(file, '{"role": "bogus"}\n{"role":"user","content":"tor', {
    append: true,
  });
  const back = await Context.restore(file);
  assertEquals(back.systemPrompt, "SYS");
  assertEquals(back.nCheckpoints, 1);
  assertEquals(back.history.map((m) => m.role), ["user", "assistant"]);
  assertEquals(back.tokenCount, 10);
  assertEquals(back.tokenCountWithPending, 12);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("context: revertTo rotates the file and keeps the prefix before the checkpoint", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/context.jsonl`;
  const ctx = await Context.restore(file);
  await ctx.writeSystemPrompt("SYS");
  await ctx.checkpoint();
  await ctx.append({ role: "user", content: [{ type: "text", text: "one" }] });
  await ctx.checkpoint();
  await ctx.append({ role: "assistant", content: [{ type: "text", text: "two" }] });
  await ctx.revertTo(1);
  assertEquals(ctx.history.map((m) => m.role), ["user"]);
  assertEquals(ctx.nCheckpoints, 1);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  assertEquals(names, ["context.jsonl", "context_1.jsonl"]);
  assertEquals((await Deno.readTextFile(file)).trim().split("\n").length, 3);
  await assertRejects(() => ctx.revertTo(5), RangeError);
  await ctx.clear();
  assertEquals(ctx.history.length, 0);
  assertEquals([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
    "context.jsonl",
    "context_1.jsonl",
    "context_2.jsonl",
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("context: restore of a multi-megabyte file equals a line-by-line read; only a torn tail gets a newline", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/context.jsonl`;
    // records that straddle the 1 MiB reads, a 2.5 MB line spanning three, multi-byte text
    const records: string[] = [JSON.stringify({ role: "_system_prompt", content: "S" })];
    for (let i = 0; i < 300; i++) {
      records.push(JSON.stringify({ role: "user", content: `${i} é😀 ${"x".repeat(7_000 + i)}` }));
      records.push(JSON.stringify({ role: "_usage", token_count: i }));
    }
    records.push(JSON.stringify({ role: "assistant", content: "log\n".repeat(650_000) }));
    records.push(JSON.stringify({ role: "user", content: "last" }));
    const text = records.join("\n") + "\n";
    await Deno.writeTextFile(file, text);
    const back = await Context.restore(file);
    const users = records.slice(1).map((l) => JSON.parse(l)).filter((r) => r.role !== "_usage");
    assertEquals(
      back.history.map((m) => m.content.map((p) => (p.type === "text" ? p.text : ""))),
      users.map((r) => [r.content]),
    );
    assertEquals(back.tokenCount, 299);
    assertEquals(back.systemPrompt, "S");
    // ends with a newline: not touched
    assertEquals(await Deno.readTextFile(file), text);

    // a torn tail: ended with one newline, once
    await Deno.writeTextFile(file, '{"role":"user","content":"to', { append: true });
    assertEquals((await Context.restore(file)).history.length, users.length);
    assertEquals(await Deno.readTextFile(file), text + '{"role":"user","content":"to\n');
    await Context.restore(file);
    assertEquals(await Deno.readTextFile(file), text + '{"role":"user","content":"to\n');
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("context: restore from a FIFO reads it without blocking the process", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fifo = `${dir}/context.jsonl`;
    const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    assertEquals(made.success, true);
    const lines = [
      JSON.stringify({ role: "_system_prompt", content: "S" }),
      JSON.stringify({ role: "user", content: "from a pipe" }),
    ];
    // The writer opens the FIFO only once this process is waiting in restore: a synchronous
    // open or read would block the event loop and the writer would never be driven.
    const restoring = Context.restore(fifo);
    const writer = await Deno.open(fifo, { write: true });
    await writer.write(new TextEncoder().encode(lines.join("\n") + "\n"));
    writer.close();
    const ctx = await restoring;
    assertEquals(ctx.systemPrompt, "S");
    assertEquals(ctx.history, [{ role: "user", content: [{ type: "text", text: "from a pipe" }] }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
