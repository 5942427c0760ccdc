import { DenwaRenji } from "../../../lib/soul/dmail.ts";
import { assertEquals, assertStringIncludes } from "../../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../../helpers/kimi_process.ts";

Deno.test("DenwaRenji validation messages", () => {
  const d = new DenwaRenji(() => 2);
  assertEquals(d.send(-1, "x"), "The checkpoint ID can not be negative");
  assertEquals(d.send(2, "x"), "There is no checkpoint with the given ID");
  assertEquals(d.send(1, "x"), null);
  assertEquals(d.send(0, "y"), "Only one D-Mail can be sent at a time");
  assertEquals(d.take(), { checkpointId: 1, message: "x", restoreFiles: false });
  assertEquals(d.take(), null);
});

Deno.test("okabe: SendDMail reverts the context to the checkpoint and injects the message", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([
      "text: one",
      toolCallLine("d1", "SendDMail", { checkpoint_id: 1, message: "  use plan B  " }),
      "text: after",
      toolCallLine("d2", "SendDMail", { checkpoint_id: 99, message: "x" }),
      "text: done",
    ]);
    const r = await sb.run([
      "--print",
      "--agent",
      "okabe",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
    ], {
      stdin: '{"role":"user","content":"first"}\n{"role":"user","content":"second"}\n' +
        '{"role":"user","content":"third"}\n',
    });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const [dir] = await sb.sessionDirs();
    const ctx = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    const text = (c: { role: string; content?: unknown; id?: number }) =>
      c.role.startsWith("_")
        ? `${c.role}${c.id ?? ""}`
        : `${c.role}:${typeof c.content === "string" ? c.content : JSON.stringify(c.content)}`;
    const seq = ctx.map(text);
    assertEquals(seq.slice(0, 10), [
      "_system_prompt",
      "_checkpoint0",
      "user:<system>CHECKPOINT 0</system>",
      "user:first",
      "_checkpoint1",
      "user:<system>CHECKPOINT 1</system>",
      seq[6],
      "_checkpoint2",
      "user:<system>CHECKPOINT 2</system>",
      "assistant:after",
    ]);
    assertStringIncludes(seq[6], "You just got a D-Mail from your future self.");
    assertStringIncludes(seq[6], "D-Mail content:\n\nuse plan B</system>");
    // A D-Mail to a checkpoint that does not exist is refused with the reference message.
    assertStringIncludes(
      r.stdout,
      "Failed to send D-Mail. Error: There is no checkpoint with the given ID",
    );
    const rotated = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
      n.startsWith("context_")
    );
    assertEquals(rotated, ["context_1.jsonl"]);
  } finally {
    await sb.cleanup();
  }
});
