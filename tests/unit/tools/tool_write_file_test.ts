/**
 * WriteFile: overwrite/append, approvals with diff blocks, rejection, plan mode, workspace rule,
 * and the summary diff of huge files.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../helpers/assert.ts";
import { makeCallContext, makeToolEnv, runTool } from "../../helpers/tool_env.ts";
import { writeFileTool } from "../../../tools/write_file.ts";
import {
  briefOf,
  REJECTED_MESSAGE,
  REJECTED_MESSAGE_SUBAGENT,
} from "../../../lib/tooling/result.ts";
import { denialMessage } from "../../../lib/tooling/scope.ts";
import type { DiffBlock, DisplayBlock } from "../../../lib/wire/display.ts";

/** The [old_text, new_text] pairs of diff blocks. */
function texts(display: DisplayBlock[]): [string, string][] {
  return (display as DiffBlock[]).map((b) => [b.old_text, b.new_text]);
}

async function tempDir(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "writefile_" }));
}

Deno.test("WriteFile creates, overwrites and appends", async () => {
  const dir = await tempDir();
  try {
    const tool = (await writeFileTool(makeToolEnv({ workDir: dir })))!;
    const ctx = makeCallContext();
    const created = await runTool(tool, { path: "a.txt", content: "hello" }, ctx);
    assertEquals(created, {
      is_error: false,
      output: "",
      message: "File successfully overwritten. Current size: 5 bytes.",
      display: [{
        type: "diff",
        path: join(dir, "a.txt"),
        old_text: "",
        new_text: "hello",
        old_start: 1,
        new_start: 1,
        is_summary: false,
      }],
      extras: null,
    });
    assertEquals(ctx.approvals, [{
      action: "edit file",
      description: `Write file \`${join(dir, "a.txt")}\``,
      display: created.display,
      subject: { kind: "file", path: join(dir, "a.txt") },
    }]);
    assertEquals(await Deno.readTextFile(join(dir, "a.txt")), "hello");

    const appended = await runTool(tool, { path: "a.txt", content: " world\n", mode: "append" });
    assertEquals(appended.message, "File successfully appended to. Current size: 12 bytes.");
    assertEquals(texts(appended.display), [["hello", "hello world"]]);
    assertEquals(await Deno.readTextFile(join(dir, "a.txt")), "hello world\n");

    const unicode = await runTool(tool, { path: "u.txt", content: "你好" });
    assertEquals(unicode.message, "File successfully overwritten. Current size: 6 bytes.");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WriteFile diff blocks: one per hunk with 3 lines of context", async () => {
  const dir = await tempDir();
  try {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    await Deno.writeTextFile(join(dir, "f.txt"), lines.join("\n") + "\n");
    const changed = [...lines];
    changed[1] = "LINE 2";
    changed[24] = "LINE 25";
    const tool = (await writeFileTool(makeToolEnv({ workDir: dir })))!;
    const rv = await runTool(tool, { path: "f.txt", content: changed.join("\n") + "\n" });
    assertEquals(rv.display.map((b) => ({ ...b, path: "" })), [
      {
        type: "diff",
        path: "",
        old_text: "line 1\nline 2\nline 3\nline 4\nline 5",
        new_text: "line 1\nLINE 2\nline 3\nline 4\nline 5",
        old_start: 1,
        new_start: 1,
        is_summary: false,
      },
      {
        type: "diff",
        path: "",
        old_text: "line 22\nline 23\nline 24\nline 25\nline 26\nline 27\nline 28",
        new_text: "line 22\nline 23\nline 24\nLINE 25\nline 26\nline 27\nline 28",
        old_start: 22,
        new_start: 22,
        is_summary: false,
      },
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WriteFile on a huge file shows one summary block", async () => {
  const dir = await tempDir();
  try {
    await Deno.writeTextFile(join(dir, "big.txt"), "x\n".repeat(12_000));
    const tool = (await writeFileTool(makeToolEnv({ workDir: dir })))!;
    const same = await runTool(tool, { path: "big.txt", content: "y\n".repeat(12_000) });
    assertEquals(same.display, [{
      type: "diff",
      path: join(dir, "big.txt"),
      old_text: "(12000 lines)",
      new_text: "(12000 lines, modified)",
      old_start: 1,
      new_start: 1,
      is_summary: true,
    }]);
    const shorter = await runTool(tool, { path: "big.txt", content: "z\n" });
    assertEquals(texts(shorter.display), [["(12000 lines)", "(1 lines)"]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WriteFile rejection leaves the file untouched", async () => {
  const dir = await tempDir();
  try {
    await Deno.writeTextFile(join(dir, "a.txt"), "keep");
    const root = (await writeFileTool(makeToolEnv({ workDir: dir })))!;
    const rv = await runTool(
      root,
      { path: "a.txt", content: "x" },
      makeCallContext({ approve: false }),
    );
    assertEquals([rv.is_error, rv.message, briefOf(rv)], [
      true,
      REJECTED_MESSAGE,
      "Rejected by user",
    ]);
    const fb = await runTool(
      root,
      { path: "a.txt", content: "x" },
      makeCallContext({ approve: "use b.txt" }),
    );
    assertEquals(fb.message, "The tool call is rejected by the user. User feedback: use b.txt");
    const sub = (await writeFileTool(makeToolEnv({ workDir: dir, isRoot: false })))!;
    const subRv = await runTool(
      sub,
      { path: "a.txt", content: "x" },
      makeCallContext({ approve: false }),
    );
    assertEquals(subRv.message, REJECTED_MESSAGE_SUBAGENT);
    assertEquals(await Deno.readTextFile(join(dir, "a.txt")), "keep");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WriteFile errors and the workspace rule", async () => {
  const dir = await tempDir();
  const outside = await tempDir();
  try {
    const tool = (await writeFileTool(makeToolEnv({ workDir: dir })))!;
    const empty = await runTool(tool, { path: "", content: "x" });
    assertEquals([empty.message, briefOf(empty)], [
      "File path cannot be empty.",
      "Empty file path",
    ]);
    const noParent = await runTool(tool, { path: "missing/a.txt", content: "x" });
    assertEquals(
      [noParent.message, briefOf(noParent)],
      ["`missing/a.txt` parent directory does not exist.", "Parent directory not found"],
    );
    const rel = await runTool(tool, { path: "../x.txt", content: "x" });
    assertEquals(
      rel.message,
      "`../x.txt` is not an absolute path. You must provide an absolute path to write a file " +
        "outside the working directory.",
    );
    const ctx = makeCallContext();
    const abs = await runTool(tool, { path: join(outside, "x.txt"), content: "x" }, ctx);
    assertEquals(abs.is_error, false);
    assertEquals(ctx.approvals[0].action, "edit file outside of working directory");
    const dirTarget = await runTool(tool, { path: ".", content: "x" });
    assertEquals(briefOf(dirTarget), "Failed to write file");
    assert(dirTarget.message.startsWith("Failed to write to .. Error: "));
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("WriteFile in plan mode writes only the plan file, without approval", async () => {
  const dir = await tempDir();
  try {
    const planFile = join(dir, "plans", "p.md");
    const env = makeToolEnv({ workDir: dir, planMode: { active: true, planFile } });
    const tool = (await writeFileTool(env))!;
    const ctx = makeCallContext({ approve: false });
    const other = await runTool(tool, { path: "a.txt", content: "x" }, ctx);
    assertEquals(
      [other.message, briefOf(other)],
      [
        `Plan mode is active. You may only edit the current plan file: \`${planFile}\`.`,
        "Plan mode restriction",
      ],
    );
    const plan = await runTool(tool, { path: planFile, content: "# Plan\n" }, ctx);
    assertEquals(plan.is_error, false);
    assertEquals(ctx.approvals, []);
    assertEquals(await Deno.readTextFile(planFile), "# Plan\n");
    const missing = (await writeFileTool(
      makeToolEnv({ workDir: dir, planMode: { active: true, planFile: null } }),
    ))!;
    const rv = await runTool(missing, { path: "a.txt", content: "x" });
    assertEquals(
      [rv.message, briefOf(rv)],
      ["Plan mode is active, but the current plan file is unavailable.", "Plan file unavailable"],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("WriteFile sandbox denial touches nothing", async () => {
  const dir = await tempDir();
  try {
    const env = makeToolEnv({
      workDir: dir,
      scope: {
        check: (kind, target) =>
          kind === "write"
            ? { allowed: false, message: denialMessage(kind, target) }
            : { allowed: true },
      },
    });
    const ctx = makeCallContext();
    const rv = await runTool((await writeFileTool(env))!, { path: "a.txt", content: "x" }, ctx);
    assertEquals([rv.message, briefOf(rv)], [
      denialMessage("write", join(dir, "a.txt")),
      "Sandbox denied",
    ]);
    assertEquals(ctx.approvals, []);
    assertEquals([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
