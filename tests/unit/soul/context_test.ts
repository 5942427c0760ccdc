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
