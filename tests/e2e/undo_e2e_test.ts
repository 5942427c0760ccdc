import { exists } from "../../lib/fs/exists.ts";
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";

/** Records of a session's `context.jsonl`. */
async function contextRecords(dir: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${dir}/context.jsonl`);
  return text.trim().split("\n").map((l) => JSON.parse(l));
}

/** The scripts of a turn that edits three files: a new one, an overwrite and a replacement. */
const EDIT_TURN = [
  toolCallLine("w1", "WriteFile", { path: "new.txt", content: "brand new\n" }),
  toolCallLine("w2", "WriteFile", { path: "over.txt", content: "overwritten\n" }),
  toolCallLine("s1", "StrReplaceFile", {
    path: "edit.txt",
    edit: { old: "beta", new: "BETA" },
  }),
  "text: edited three files",
];

const OVER = new Uint8Array([0x6f, 0x6c, 0x64, 0x0d, 0x0a, 0x00, 0xff, 0x0a]); // binary-ish
const EDIT = "alpha\r\nbeta\r\ngamma"; // CRLF, no final newline

async function seedFiles(sb: KimiSandbox): Promise<void> {
  await Deno.writeFile(`${sb.workDir}/over.txt`, OVER);
  await Deno.writeTextFile(`${sb.workDir}/edit.txt`, EDIT);
}

function printArgs(config: string, extra: string[] = []): string[] {
  return [
    "--print",
    "--yolo",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--config-file",
    config,
    ...extra,
  ];
}

Deno.test("/undo restores the three files of the last turn byte for byte and rewinds the context", async () => {
  const sb = await kimiSandbox();
  try {
    await seedFiles(sb);
    const config = await sb.scriptedConfig(["text: hello", ...EDIT_TURN]);
    const stdin = ['{"role":"user","content":"say hi"}', '{"role":"user","content":"edit"}']
      .join("\n") + "\n";
    const first = await sb.run(printArgs(config), { stdin });
    assertEquals(first.code, 0, first.stdout + first.stderr);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/new.txt`), "brand new\n");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/over.txt`), "overwritten\n");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/edit.txt`), "alpha\r\nBETA\r\ngamma");
    const [dir] = await sb.sessionDirs();
    const before = await contextRecords(dir);
    const editAt = before.findIndex((r) => r.role === "user" && r.content === "edit");
    // The edit turn starts with its checkpoint, right before the user message.
    assertEquals(before[editAt - 1].role, "_checkpoint");

    const id = dir.slice(dir.lastIndexOf("/") + 1);
    const config2 = await sb.scriptedConfig([]);
    const undo = await sb.run(printArgs(config2, ["--session", id]), {
      stdin: '{"role":"user","content":"/undo"}\n',
    });
    assertEquals(undo.code, 0, undo.stdout + undo.stderr);
    assertStringIncludes(
      undo.stdout,
      "Undid the last turn.\\nRestored 3 files: new.txt, over.txt, edit.txt.",
    );
    assertEquals(await exists(`${sb.workDir}/new.txt`), false);
    assertEquals(await Deno.readFile(`${sb.workDir}/over.txt`), OVER);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/edit.txt`), EDIT);
    // The context is back to before the edit turn's checkpoint.
    assertEquals(await contextRecords(dir), before.slice(0, editAt - 1));

    // Undoing more turns than there are is refused; the last one can still be undone.
    const config3 = await sb.scriptedConfig([]);
    const more = await sb.run(printArgs(config3, ["--session", id]), {
      stdin: '{"role":"user","content":"/undo 2"}\n{"role":"user","content":"/undo"}\n' +
        '{"role":"user","content":"/undo"}\n',
    });
    assertEquals(more.code, 0, more.stdout + more.stderr);
    assertStringIncludes(
      more.stdout,
      "There is only 1 turn to undo; nothing was undone. Use /undo 1 to undo it.",
    );
    assertStringIncludes(
      more.stdout,
      "Undid the last turn.\\nNo files had been changed by the agent since.",
    );
    assertStringIncludes(
      more.stdout,
      "There is nothing to undo: the conversation has no turns yet.",
    );
    assertEquals((await contextRecords(dir)).map((r) => r.role), ["_system_prompt"]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("/undo leaves a file edited outside the agent alone and reports it", async () => {
  const sb = await kimiSandbox();
  try {
    await seedFiles(sb);
    const config = await sb.scriptedConfig(EDIT_TURN);
    const first = await sb.run(printArgs(config), {
      stdin: '{"role":"user","content":"edit"}\n',
    });
    assertEquals(first.code, 0, first.stdout + first.stderr);
    await Deno.writeTextFile(`${sb.workDir}/over.txt`, "the user's own edit\n");

    const [dir] = await sb.sessionDirs();
    const id = dir.slice(dir.lastIndexOf("/") + 1);
    const config2 = await sb.scriptedConfig([]);
    const undo = await sb.run(printArgs(config2, ["--session", id]), {
      stdin: '{"role":"user","content":"/undo"}\n',
    });
    assertEquals(undo.code, 0, undo.stdout + undo.stderr);
    assertStringIncludes(
      undo.stdout,
      "Undid the last turn.\\nRestored 2 files: new.txt, edit.txt.\\n" +
        "`over.txt` was changed outside the agent since; left as it is.",
    );
    assertEquals(await Deno.readTextFile(`${sb.workDir}/over.txt`), "the user's own edit\n");
    assertEquals(await exists(`${sb.workDir}/new.txt`), false);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/edit.txt`), EDIT);
    assertEquals((await contextRecords(dir)).map((r) => r.role), ["_system_prompt"]);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("okabe: SendDMail with restore_files puts back files changed after the checkpoint", async () => {
  const sb = await kimiSandbox();
  try {
    await Deno.writeTextFile(`${sb.workDir}/keep.txt`, "k0");
    await Deno.writeTextFile(`${sb.workDir}/f.txt`, "f0");
    const config = await sb.scriptedConfig([
      // turn 1 (checkpoints 0, 1): a change that stays
      toolCallLine("k", "WriteFile", { path: "keep.txt", content: "k1" }),
      "text: kept",
      // turn 2 (checkpoints 3, 4, 5): edits, then a D-Mail back to its start
      toolCallLine("a", "WriteFile", { path: "f.txt", content: "f1" }),
      toolCallLine("b", "WriteFile", { path: "g.txt", content: "created" }),
      toolCallLine("d", "SendDMail", {
        checkpoint_id: 3,
        message: "try again",
        restore_files: true,
      }),
      "text: after the D-Mail",
    ]);
    const r = await sb.run([
      ...printArgs(config),
      "--agent",
      "okabe",
    ], {
      stdin: '{"role":"user","content":"first"}\n{"role":"user","content":"second"}\n',
    });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(await Deno.readTextFile(`${sb.workDir}/keep.txt`), "k1");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/f.txt`), "f0");
    assertEquals(await exists(`${sb.workDir}/g.txt`), false);
    const [dir] = await sb.sessionDirs();
    const ctx = await contextRecords(dir);
    const dmail = ctx.find((c) => JSON.stringify(c.content ?? "").includes("D-Mail content"));
    assertStringIncludes(JSON.stringify(dmail), "try again");
  } finally {
    await sb.cleanup();
  }
});
