/**
 * Tool calls of one response that touch the same file run one after the other, in call order,
 * through main.ts (print mode, `_scripted_echo`): the second edit applies to the text the first
 * one left, and the appends land in order.
 */
import { assertEquals } from "../helpers/assert.ts";
import { kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

Deno.test("one response, same file: edits and appends run in call order", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.writeTextFile(`${sb.workDir}/f.txt`, "one\n");
    const config = await sb.scriptedConfig([
      [
        toolCallLine("tc_1", "StrReplaceFile", { path: "f.txt", edit: { old: "one", new: "two" } }),
        toolCallLine("tc_2", "StrReplaceFile", { path: "f.txt", edit: { old: "two", new: "3" } }),
        toolCallLine("tc_3", "WriteFile", { path: "log.txt", content: "a", mode: "append" }),
        toolCallLine("tc_4", "WriteFile", { path: "log.txt", content: "b", mode: "append" }),
        toolCallLine("tc_5", "WriteFile", { path: "log.txt", content: "c", mode: "append" }),
      ].join("\n"),
      "text: done",
    ]);
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "edit",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const tools = jsonLines(r.stdout).filter((l) => l.role === "tool");
    // (results are printed as they finish; the two files are independent of each other)
    assertEquals(tools.map((t) => t.tool_call_id).sort(), ["tc_1", "tc_2", "tc_3", "tc_4", "tc_5"]);
    for (const t of tools) {
      assertEquals(JSON.stringify(t.content).includes("ERROR"), false, JSON.stringify(t));
    }
    assertEquals(await Deno.readTextFile(`${sb.workDir}/f.txt`), "3\n");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/log.txt`), "abc");
  } finally {
    await sb.cleanup();
  }
});
