/**
 * StrReplaceFile: single and multiple edits, replace_all, counts in the message (occurrences in
 * the original content), approvals, plan mode and errors.
 */
import { join } from "node:path";
import { assertEquals } from "../../helpers/assert.ts";
import { makeCallContext, makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { strReplaceFileTool } from "../../../tools/str_replace_file.ts";
import { briefOf, REJECTED_MESSAGE } from "../../../lib/tooling/result.ts";
import type { Tool } from "../../../lib/tooling/tool.ts";

async function setup(content: string): Promise<{ dir: string; file: string; tool: Tool }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "strreplace_" }));
  const file = join(dir, "f.txt");
  await Deno.writeTextFile(file, content);
  return { dir, file, tool: (await strReplaceFileTool(makeToolEnv({ workDir: dir })))! };
}

Deno.test("StrReplaceFile replaces the first occurrence and shows the diff", async () => {
  const { dir, file, tool } = await setup("hello\nhello\n");
  try {
    const ctx = makeCallContext();
    const rv = await runTool(tool, { path: "f.txt", edit: { old: "hello", new: "hi" } }, ctx);
    const display = [{
      type: "diff",
      path: file,
      old_text: "hello\nhello",
      new_text: "hi\nhello",
      old_start: 1,
      new_start: 1,
      is_summary: false,
    }];
    assertEquals(rv, {
      is_error: false,
      output: "",
      message: "File successfully edited. Applied 1 edit(s) with 1 total replacement(s).",
      display,
      extras: null,
    });
    assertEquals(ctx.approvals, [{
      action: "edit file",
      description: `Edit file \`${file}\``,
      display,
      subject: { kind: "file", path: file },
    }]);
    assertEquals(await Deno.readTextFile(file), "hi\nhello\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StrReplaceFile counts replacements in the original content", async () => {
  const { dir, file, tool } = await setup("a a a b\n");
  try {
    const all = await runTool(tool, {
      path: "f.txt",
      edit: { old: "a", new: "x", replace_all: true },
    });
    assertEquals(
      all.message,
      "File successfully edited. Applied 1 edit(s) with 3 total replacement(s).",
    );
    assertEquals(await Deno.readTextFile(file), "x x x b\n");

    // Edits apply in order; the count looks at the original text: "x" occurs 3 times there
    // (replace_all), "b" once, and "zzz" not at all.
    const list = await runTool(tool, {
      path: "f.txt",
      edit: [
        { old: "x", new: "y", replace_all: true },
        { old: "b", new: "c" },
        { old: "zzz", new: "q" },
      ],
    });
    assertEquals(
      list.message,
      "File successfully edited. Applied 3 edit(s) with 4 total replacement(s).",
    );
    assertEquals(await Deno.readTextFile(file), "y y y c\n");

    // A later edit may match text produced by an earlier one; it still counts 0 (not in the
    // original), as the reference does.
    const chained = await runTool(tool, {
      path: "f.txt",
      edit: [{ old: "c", new: "NEW" }, { old: "NEW", new: "newer" }],
    });
    assertEquals(
      chained.message,
      "File successfully edited. Applied 2 edit(s) with 1 total replacement(s).",
    );
    assertEquals(await Deno.readTextFile(file), "y y y newer\n");

    // `$` patterns in the replacement are literal.
    await runTool(tool, { path: "f.txt", edit: { old: "newer", new: "$& $1 $$" } });
    assertEquals(await Deno.readTextFile(file), "y y y $& $1 $$\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StrReplaceFile keeps CRLF line endings", async () => {
  const { dir, file, tool } = await setup("one\r\ntwo\r\nthree\r\n");
  try {
    const rv = await runTool(tool, { path: "f.txt", edit: { old: "one\ntwo", new: "1\n2" } });
    assertEquals(rv.is_error, false);
    assertEquals(await Deno.readTextFile(file), "1\r\n2\r\nthree\r\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StrReplaceFile errors", async () => {
  const { dir, file, tool } = await setup("content\n");
  try {
    const none = await runTool(tool, { path: "f.txt", edit: { old: "absent", new: "x" } });
    assertEquals(
      [none.is_error, none.message, briefOf(none)],
      [
        true,
        "No replacements were made. The old string was not found in the file.",
        "No replacements made",
      ],
    );
    const missing = await runTool(tool, { path: "nope.txt", edit: { old: "a", new: "b" } });
    assertEquals([missing.message, briefOf(missing)], [
      "`nope.txt` does not exist.",
      "File not found",
    ]);
    const dirTarget = await runTool(tool, { path: ".", edit: { old: "a", new: "b" } });
    assertEquals([dirTarget.message, briefOf(dirTarget)], ["`.` is not a file.", "Invalid path"]);
    const rel = await runTool(tool, { path: "../f.txt", edit: { old: "a", new: "b" } });
    assertEquals(
      rel.message,
      "`../f.txt` is not an absolute path. You must provide an absolute path to edit a file " +
        "outside the working directory.",
    );
    const empty = await runTool(tool, { path: "f.txt", edit: { old: "", new: "b" } });
    assertEquals([empty.message, briefOf(empty)], [
      "The `old` string cannot be empty.",
      "Invalid edit",
    ]);
    const rejected = await runTool(
      tool,
      { path: "f.txt", edit: { old: "content", new: "x" } },
      makeCallContext({ approve: false }),
    );
    assertEquals(rejected.message, REJECTED_MESSAGE);
    assertEquals(await Deno.readTextFile(file), "content\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StrReplaceFile in plan mode", async () => {
  const { dir, tool: _, file } = await setup("x\n");
  try {
    const planFile = join(dir, "plan.md");
    const tool = (await strReplaceFileTool(
      makeToolEnv({ workDir: dir, planMode: { active: true, planFile } }),
    ))!;
    const other = await runTool(tool, { path: file, edit: { old: "x", new: "y" } });
    assertEquals(briefOf(other), "Plan mode restriction");
    const notYet = await runTool(tool, { path: planFile, edit: { old: "x", new: "y" } });
    assertEquals(
      [notYet.message, briefOf(notYet)],
      [
        "The current plan file does not exist yet. Use WriteFile to create it before calling StrReplaceFile.",
        "Plan file not created",
      ],
    );
    await Deno.writeTextFile(planFile, "# draft\n");
    const ctx = makeCallContext({ approve: false });
    const ok = await runTool(tool, { path: planFile, edit: { old: "draft", new: "plan" } }, ctx);
    assertEquals(ok.is_error, false);
    assertEquals(ctx.approvals, []);
    assertEquals(await Deno.readTextFile(planFile), "# plan\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
