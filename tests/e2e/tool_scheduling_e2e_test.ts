/**
 * Scheduling of one response's tool calls through main.ts (print mode, `_scripted_echo`): calls
 * that touch the same file run one after the other, in call order (the second edit applies to
 * the text the first one left, the appends land in order), and no more calls run at once than
 * `loop_control.max_parallel_tool_calls` allows.
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

Deno.test("one response with many Shell calls runs at most loop_control.max_parallel_tool_calls at once", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.mkdir(`${sb.workDir}/running`);
    const n = 24;
    // Each command marks itself running, records how many are running, then unmarks itself.
    const calls = Array.from({ length: n }, (_, i) =>
      toolCallLine(`tc_${i}`, "Shell", {
        command: `touch running/c${i} && ls running | wc -l >> counts.txt && sleep 0.2 && ` +
          `rm running/c${i}`,
      }));
    const config = await sb.scriptedConfig([calls.join("\n"), "text: done"], {
      loop_control: { max_parallel_tool_calls: 3 },
    });
    const r = await sb.run([
      "--print",
      "--output-format",
      "stream-json",
      "--config-file",
      config,
      "-p",
      "run them",
    ]);
    assertEquals(r.code, 0, r.stderr);
    const tools = jsonLines(r.stdout).filter((l) => l.role === "tool");
    assertEquals(tools.length, n);
    const counts = (await Deno.readTextFile(`${sb.workDir}/counts.txt`)).trim().split("\n")
      .map((l) => Number(l.trim()));
    assertEquals(counts.length, n);
    const peak = Math.max(...counts);
    assertEquals(peak <= 3, true, `at most 3 commands at once, saw ${peak}`);
  } finally {
    await sb.cleanup();
  }
});
