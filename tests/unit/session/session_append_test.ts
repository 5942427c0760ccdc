import { assert, assertEquals } from "../../helpers/assert.ts";
import { appendRecords, type AppendTarget, SessionWriteError } from "../../../lib/session/jsonl.ts";
import { Context } from "../../../lib/soul/context.ts";
import {
  closeDanglingToolCalls,
  INTERRUPTED_TOOL_CALL,
  withToolResults,
} from "../../../lib/soul/tool_pairing.ts";
import type { NormalizedMessage } from "../../../lib/llm/message.ts";

/** A real file whose writes fail with ENOSPC once `budget` more bytes were written. */
async function failingAfter(path: string, budget: number): Promise<AppendTarget> {
  const f = await Deno.open(path, { append: true, create: true });
  let left = budget;
  return {
    stat: () => f.stat(),
    async write(data) {
      if (left <= 0) throw new Error("No space left on device (os error 28)");
      const n = await f.write(data.subarray(0, Math.min(left, data.length, 7)));
      left -= n;
      return n;
    },
    truncate: (len) => f.truncate(len),
    close: () => f.close(),
  };
}

Deno.test("appendRecords: a write failing part-way is cut back to the last complete record", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/context.jsonl`;
    await appendRecords(path, '{"role":"user","content":"one"}\n');
    const before = await Deno.readTextFile(path);
    let err: unknown;
    try {
      await appendRecords(path, '{"role":"assistant","content":"a long answer"}\n', {
        open: (p) => failingAfter(p, 20),
      });
    } catch (e) {
      err = e;
    }
    assert(err instanceof SessionWriteError);
    assertEquals(err.restored, true);
    assertEquals(
      err.message,
      `Could not write ${path}: No space left on device (os error 28). The file was restored ` +
        "to its last complete record; free some disk space, then resume the session.",
    );
    assertEquals(await Deno.readTextFile(path), before);
    await appendRecords(path, '{"role":"user","content":"two"}\n');
    assertEquals(
      await Deno.readTextFile(path),
      before + '{"role":"user","content":"two"}\n',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("Context: a failed append changes neither the file nor the history", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/context.jsonl`;
    const ctx = await Context.restore(path);
    await ctx.append({ role: "user", content: [{ type: "text", text: "hi" }] });
    const text = await Deno.readTextFile(path);
    // Make the next append fail: the file becomes a directory.
    await Deno.remove(path);
    await Deno.mkdir(path);
    let err: unknown;
    try {
      await ctx.append({ role: "assistant", content: [{ type: "text", text: "lost" }] });
    } catch (e) {
      err = e;
    }
    assert(err instanceof SessionWriteError, String(err));
    assertEquals(ctx.history.length, 1);
    let cpErr: unknown;
    try {
      await ctx.checkpoint(true);
    } catch (e) {
      cpErr = e;
    }
    assert(cpErr instanceof SessionWriteError);
    assertEquals(ctx.nCheckpoints, 0);
    assertEquals(ctx.history.length, 1);
    await Deno.remove(path);
    await Deno.writeTextFile(path, text);
    assertEquals(await ctx.checkpoint(), 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const call = (id: string) => ({
  type: "function" as const,
  id,
  function: { name: "Shell", arguments: "{}" },
  extras: null,
});
const text = (t: string) => [{ type: "text" as const, text: t }];

Deno.test("tool pairing: missing results are synthesized after the existing ones", () => {
  const history: NormalizedMessage[] = [
    { role: "user", content: text("go") },
    { role: "assistant", content: text("two calls"), tool_calls: [call("a"), call("b")] },
    { role: "tool", content: text("ok"), tool_call_id: "a" },
    { role: "user", content: text("next") },
    { role: "assistant", content: text("one"), tool_calls: [call("c")] },
  ];
  const out = withToolResults(history);
  assertEquals(out.map((m) => `${m.role}:${m.tool_call_id ?? ""}`), [
    "user:",
    "assistant:",
    "tool:a",
    "tool:b",
    "user:",
    "assistant:",
    "tool:c",
  ]);
  assertEquals(out[3].content, text(`<system>ERROR: ${INTERRUPTED_TOOL_CALL}</system>`));
  const complete = out.slice(0, 4);
  assertEquals(withToolResults(complete), complete);
});

Deno.test("closeDanglingToolCalls: only a dangling tail is answered, in the file too", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/context.jsonl`;
    const ctx = await Context.restore(path);
    await ctx.append(
      { role: "user", content: text("go") },
      { role: "assistant", content: text("calls"), tool_calls: [call("x"), call("y")] },
      { role: "tool", content: text("done"), tool_call_id: "x" },
    );
    assertEquals(await closeDanglingToolCalls(ctx), 1);
    assertEquals(await closeDanglingToolCalls(ctx), 0);
    const reloaded = await Context.restore(path);
    assertEquals(reloaded.history.map((m) => m.tool_call_id ?? m.role), [
      "user",
      "assistant",
      "x",
      "y",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
