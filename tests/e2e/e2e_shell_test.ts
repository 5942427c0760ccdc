/**
 * End-to-end tests of the interactive shell: `main.ts` in a real PTY under tmux.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { TmuxKimi } from "../helpers/tmux.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

async function withShell(
  fn: (sb: KimiSandbox) => Promise<void>,
): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

async function contextText(sb: KimiSandbox): Promise<string> {
  const dirs = await sb.sessionDirs();
  let all = "";
  for (const d of dirs) all += await Deno.readTextFile(`${d}/context.jsonl`).catch(() => "");
  return all;
}

Deno.test(
  "shell: approve a Shell call through the select, then reject one with feedback",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig([
        `text: Running it.\n${toolCallLine("c1", "Shell", { command: "echo approved-output-42" })}`,
        "text: First turn finished.",
        toolCallLine("c2", "Shell", { command: "rm -rf build" }),
        "text: Understood, I will not delete anything.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        await t.type("run the command");
        await t.keys("Enter");
        let screen = await t.waitFor("Allow this action?");
        assertStringIncludes(screen, "Shell wants to run command");
        assertStringIncludes(screen, "$ echo approved-output-42");
        assertStringIncludes(screen, "› 1. Approve once");
        await t.keys("Enter");
        screen = await t.waitFor((s) => s.includes("First turn finished.") && promptReady(s));
        assertStringIncludes(screen, "✓ Approved");
        assertStringIncludes(screen, "• Used Shell (echo approved-output-42)");
        assertStringIncludes(screen, "│ approved-output-42");

        await t.type("clean up");
        await t.keys("Enter");
        screen = await t.waitFor("Allow this action?");
        // Options: once, `rm` for the session, always (save rule), reject, reject with feedback.
        assertStringIncludes(screen, "5. Reject, and tell the model what to do instead");
        await t.keys("5");
        await t.waitFor("What should the model do instead?");
        await t.type("keep the build dir");
        await t.keys("Enter");
        screen = await t.waitFor((s) => s.includes("I will not delete anything") && promptReady(s));
        assertStringIncludes(screen, "✗ Rejected: keep the build dir");
        const ctx = await contextText(sb);
        assertStringIncludes(ctx, "User feedback: keep the build dir");
        assertStringIncludes(ctx, "approved-output-42");
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: Ctrl-C during a long Shell command kills it and the prompt comes back",
  opts,
  () =>
    withShell(async (sb) => {
      const marker = 4000 + Math.floor(Math.random() * 900);
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: `sleep ${marker}`, timeout: 300 }),
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"]);
      try {
        await t.waitFor(promptReady);
        await t.type("wait a while");
        await t.keys("Enter");
        await t.waitFor(`Using Shell (sleep ${marker})`);
        // the tool line is drawn when the call arrives; the child starts just after
        const started = Date.now() + 30_000;
        while (!(await childAlive(`sleep ${marker}`)) && Date.now() < started) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert(await childAlive(`sleep ${marker}`), "the child should be running");
        await t.keys("C-c");
        const screen = await t.waitFor((s) => s.includes("Interrupted by user") && promptReady(s));
        assert(!screen.includes("Using Shell"), "the spinner line is gone");
        const deadline = Date.now() + 5000;
        while (await childAlive(`sleep ${marker}`) && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert(!(await childAlive(`sleep ${marker}`)), "the child process is gone");
        // a second Ctrl-C at the empty prompt asks to confirm; a third exits
        await t.keys("C-c");
        await t.waitFor("Press Ctrl-C again to exit");
        await t.keys("C-c");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
    }),
);

async function childAlive(pattern: string): Promise<boolean> {
  const out = await new Deno.Command("pgrep", { args: ["-f", `^${pattern}$`], stdout: "piped" })
    .output();
  return out.code === 0;
}

Deno.test(
  "shell: history is recalled with Up after a restart; Tab completes @file and /cmd",
  opts,
  () =>
    withShell(async (sb) => {
      await Deno.writeTextFile(`${sb.workDir}/notes_unique_file.txt`, "x");
      const config = await sb.scriptedConfig(["text: noted."]);
      const t1 = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t1.waitFor(promptReady);
        await t1.type("remember history-entry-123");
        await t1.keys("Enter");
        await t1.waitFor((s) => s.includes("noted.") && promptReady(s));
        await t1.keys("C-d");
        await t1.waitFor("[exit 0]");
      } finally {
        await t1.close();
      }
      const hist = [];
      for await (const e of Deno.readDir(`${sb.shareDir}/user-history`)) hist.push(e.name);
      assertEquals(hist.length, 1);
      assertMatch(hist[0], /^[0-9a-f]{32}\.jsonl$/);

      const t2 = await TmuxKimi.start(sb, ["--config-file", await sb.scriptedConfig([])]);
      try {
        await t2.waitFor(promptReady);
        await t2.keys("Up");
        await t2.waitFor(/^✨ remember history-entry-123$/m);
        await t2.keys("C-u");
        await t2.type("look at @notes_u");
        await t2.keys("Tab");
        await t2.waitFor(/^✨ look at @notes_unique_file\.txt$/m);
        await t2.keys("C-u");
        await t2.type("/vers");
        await t2.keys("Tab");
        await t2.waitFor(/^✨ \/version$/m);
        await t2.keys("Enter");
        await t2.waitFor(/kimi, version \d+\.\d+\.\d+/);
        await t2.type("/nonsense");
        await t2.keys("Enter");
        await t2.waitFor('Unknown slash command "/nonsense".');
      } finally {
        await t2.close();
      }
    }),
);

Deno.test(
  "shell: /sessions refuses a session another process is using, naming it, and stays put",
  opts,
  () =>
    withShell(async (sb) => {
      const mock = await startMockOpenAI();
      let holder: Deno.ChildProcess | null = null;
      try {
        const t1 = await TmuxKimi.start(sb, [
          "--config-file",
          await sb.scriptedConfig(["text: one."]),
        ]);
        try {
          await t1.waitFor(promptReady);
          await t1.type("busy-session-message");
          await t1.keys("Enter");
          await t1.waitFor((s) => s.includes("one.") && promptReady(s));
          await t1.keys("C-d");
          await t1.waitFor("[exit 0]");
        } finally {
          await t1.close();
        }
        const [busy] = await sb.sessionDirs();
        const busyId = busy.split("/").at(-1)!;
        // Another kimi works in that session: its model call hangs until it is killed.
        mock.enqueue({ text: "late", delayMs: 600_000 });
        const held = sb.run(
          [
            "--print",
            "--session",
            busyId,
            "--config-file",
            await sb.openaiConfig(mock.url),
            "-p",
            "x",
          ],
          { onSpawn: (c) => (holder = c) },
        );
        while (mock.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
        const t2 = await TmuxKimi.start(sb, [
          "--config-file",
          await sb.scriptedConfig(["text: two."]),
        ]);
        try {
          await t2.waitFor(promptReady);
          await t2.type("/sessions");
          await t2.keys("Enter");
          await t2.waitFor("Resume a session");
          await t2.keys("Enter");
          const screen = await t2.waitFor("is in use by another kimi process");
          assertMatch(
            screen.replace(/\n/g, ""),
            new RegExp(
              `Session ${busyId} is in use by another kimi process \\(pid ${holder!.pid}, since`,
            ),
          );
          await t2.type("/usage");
          await t2.keys("Enter");
          const usage = await t2.waitFor("Session:  ");
          assert(!usage.includes(`Session:  ${busyId}`), "the shell stayed on its own session");
          await t2.type("still here");
          await t2.keys("Enter");
          await t2.waitFor((s) => s.includes("two.") && promptReady(s));
        } finally {
          await t2.close();
        }
        (holder as Deno.ChildProcess | null)?.kill("SIGKILL");
        await held;
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell: /sessions picks an earlier session and resumes it",
  opts,
  () =>
    withShell(async (sb) => {
      const t1 = await TmuxKimi.start(sb, [
        "--config-file",
        await sb.scriptedConfig(["text: one."]),
      ]);
      try {
        await t1.waitFor(promptReady);
        await t1.type("first-session-message");
        await t1.keys("Enter");
        await t1.waitFor((s) => s.includes("one.") && promptReady(s));
        await t1.keys("C-d");
        await t1.waitFor("[exit 0]");
      } finally {
        await t1.close();
      }
      const [first] = await sb.sessionDirs();
      const firstId = first.split("/").at(-1)!;
      const t2 = await TmuxKimi.start(sb, [
        "--config-file",
        await sb.scriptedConfig(["text: two."]),
      ]);
      try {
        await t2.waitFor(promptReady);
        await t2.type("/sessions");
        await t2.keys("Enter");
        const screen = await t2.waitFor("Resume a session");
        assertStringIncludes(screen, "first-session-message");
        await t2.keys("Enter");
        await t2.waitFor(`Resumed session ${firstId}`);
        await t2.type("/usage");
        await t2.keys("Enter");
        await t2.waitFor(`Session:  ${firstId}`);
        await t2.type("second message");
        await t2.keys("Enter");
        await t2.waitFor((s) => s.includes("two.") && promptReady(s));
      } finally {
        await t2.close();
      }
      const ctx = await Deno.readTextFile(`${first}/context.jsonl`);
      assertStringIncludes(ctx, "first-session-message");
      assertStringIncludes(ctx, "second message");
    }),
);

Deno.test(
  "shell: first run opens /setup, which writes a config a new run uses",
  opts,
  () =>
    withShell(async (sb) => {
      const mock = await startMockOpenAI({ models: ["alpha-model", "beta-model"] });
      try {
        const t = await TmuxKimi.start(sb, []);
        try {
          await t.waitFor("Select a platform");
          await t.keys("8"); // any OpenAI-compatible API
          await t.waitFor("Base URL");
          await t.type(mock.url);
          await t.keys("Enter");
          await t.waitFor("API key");
          await t.type("sk-secret-xyz");
          // wait for the typed key to be drawn (masked) rather than reading the screen at once
          let screen = await t.waitFor("Key: *************");
          assert(!screen.includes("sk-secret-xyz"), "the key is masked");
          assertStringIncludes(screen, "Key: *************");
          await t.keys("Enter");
          screen = await t.waitFor("Select a model");
          assertStringIncludes(screen, "alpha-model");
          await t.keys("Down", "Enter");
          // the endpoint does not report context sizes: the wizard asks
          await t.waitFor("Context window of beta-model");
          await t.type("131072");
          await t.keys("Enter");
          await t.waitFor((s) => s.includes("Saved") && promptReady(s));
          await t.keys("C-d");
          await t.waitFor("[exit 0]");
        } finally {
          await t.close();
        }
        const toml = await Deno.readTextFile(`${sb.shareDir}/config.toml`);
        assertStringIncludes(toml, `default_model = "beta-model"`);
        assertStringIncludes(toml, `base_url = "${mock.url}"`);
        assertStringIncludes(toml, `api_key = "sk-secret-xyz"`);
        assertStringIncludes(toml, "max_context_size = 131072");
        const models = mock.requests.filter((r) => r.path === "/v1/models");
        assertEquals(models.length, 1);
        assertEquals(models[0].headers.authorization, "Bearer sk-secret-xyz");

        mock.enqueue({ text: "hello from the mock" });
        const t2 = await TmuxKimi.start(sb, []);
        try {
          const screen = await t2.waitFor(promptReady);
          assertStringIncludes(screen, "Model: beta-model");
          await t2.type("hi");
          await t2.keys("Enter");
          await t2.waitFor((s) => s.includes("hello from the mock") && promptReady(s));
        } finally {
          await t2.close();
        }
        const chat = mock.requests.filter((r) => r.path === "/v1/chat/completions");
        assertEquals(chat.at(-1)?.body?.model, "beta-model");
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell: screen after a turn with markdown, a diff and a todo list matches the snapshot",
  opts,
  () =>
    withShell(async (sb) => {
      await Deno.writeTextFile(`${sb.workDir}/app.txt`, "alpha\nbeta\ngamma\n");
      const config = await sb.scriptedConfig([
        `text: I will **update** the file.\n${
          toolCallLine("c1", "SetTodoList", {
            todos: [
              { title: "Read app.txt", status: "done" },
              { title: "Edit app.txt", status: "in_progress" },
              { title: "Report back", status: "pending" },
            ],
          })
        }`,
        toolCallLine("c2", "StrReplaceFile", {
          path: "app.txt",
          edit: { old: "beta", new: "BETA" },
        }),
        "text: Done: `app.txt` now says **BETA** — 宽字符 ✅ wrap check.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"], {
        width: 80,
        height: 30,
      });
      try {
        await t.waitFor(promptReady);
        await t.type("edit the file");
        await t.keys("Enter");
        const screen = await t.waitFor((s) => s.includes("wrap check.") && promptReady(s));
        const normalized = screen
          .replaceAll(sb.workDir, "<WORK>")
          .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<ID>");
        const golden = new URL("../golden/shell_turn.txt", import.meta.url);
        if (Deno.env.get("UPDATE_GOLDEN")) await Deno.writeTextFile(golden, normalized + "\n");
        assertEquals(normalized + "\n", await Deno.readTextFile(golden));
      } finally {
        await t.close();
      }
    }),
);

Deno.test("shell: /mcp lists servers, their status and tools", opts, () =>
  withShell(async (sb) => {
    const fixture = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;
    const denoJson = new URL("../../deno.json", import.meta.url).pathname;
    const mcp = JSON.stringify({
      mcpServers: {
        tester: {
          command: Deno.execPath(),
          args: ["run", "-A", "--config", denoJson, "--no-lock", fixture],
        },
        ghost: { command: "/nonexistent/mcp-server" },
      },
    });
    const config = await sb.scriptedConfig([]);
    const t = await TmuxKimi.start(sb, ["--config-file", config, "--mcp-config", mcp]);
    try {
      await t.waitFor(promptReady);
      const deadline = Date.now() + 20_000;
      let screen = "";
      while (Date.now() < deadline) {
        await t.type("/mcp");
        await t.keys("Enter");
        await t.waitFor(promptReady);
        screen = await t.screen();
        if (screen.includes("tester (connected)")) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      assertMatch(screen, /MCP: 1\/2 servers connected, 3 tools/);
      assertMatch(screen, /tester \(connected\): ping, crash, whoami/);
      assertMatch(screen, /ghost \(failed\): no tools/);
      await t.keys("C-d");
      await t.waitFor("[exit 0]");
    } finally {
      await t.close();
    }
  }));

/** The messages of the session's context.jsonl (records with a role). */
async function contextMessages(sb: KimiSandbox): Promise<{ role: string; text: string }[]> {
  const out: { role: string; text: string }[] = [];
  for (const line of (await contextText(sb)).split("\n")) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line);
    if (typeof rec.role !== "string" || rec.role.startsWith("_")) continue;
    const text = typeof rec.content === "string"
      ? rec.content
      : Array.isArray(rec.content)
      ? rec.content.map((p: { text?: string }) => p.text ?? "").join("")
      : "";
    out.push({ role: rec.role, text });
  }
  return out;
}

Deno.test(
  "shell: text typed during a turn and sent with Ctrl-S steers it after the current step",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: "sleep 2 && echo slept-ok" }),
        "text: I saw your steer.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"]);
      try {
        await t.waitFor(promptReady);
        await t.type("start the long command");
        await t.keys("Enter");
        await t.waitFor("Using Shell (sleep 2 && echo slept-ok)");
        await t.type("steer-text-77");
        // the input line stays editable under the output while the turn runs
        let screen = await t.waitFor(/^✨ steer-text-77$/m);
        assertStringIncludes(screen.split("\n").at(-1)!, "ctrl-s: steer");
        await t.keys("C-s");
        screen = await t.waitFor("steer-text-77 (sent after the current step)");
        assert(!/^✨ steer-text-77$/m.test(screen), "the input line is cleared");
        screen = await t.waitFor((s) => s.includes("I saw your steer.") && promptReady(s));
        // the steer is in the transcript after the tool result and before the model's reply
        const lines = screen.split("\n");
        const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
        const used = at(/• Used Shell/);
        const steer = at(/^✨ steer-text-77$/);
        const reply = at(/I saw your steer\./);
        assert(used >= 0 && used < steer && steer < reply, `order wrong:\n${screen}`);
        assert(!screen.includes("sent after the current step"), "the pending line is gone");
        const msgs = await contextMessages(sb);
        const i = msgs.findIndex((m) => m.role === "user" && m.text === "steer-text-77");
        assert(i > 0, `steer not in context: ${JSON.stringify(msgs)}`);
        assertEquals(msgs[i - 1].role, "tool");
        assertStringIncludes(msgs[i - 1].text, "slept-ok");
        assertEquals(msgs[i + 1]?.role, "assistant");
        assertEquals(msgs[i + 1]?.text, "I saw your steer.");
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: text typed during a turn without Enter is still in the prompt after the turn",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: "sleep 1.5" }),
        "text: First turn done.",
        "text: Got the draft.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"]);
      try {
        await t.waitFor(promptReady);
        await t.type("first");
        await t.keys("Enter");
        await t.waitFor("Using Shell (sleep 1.5)");
        await t.type("draft-keep");
        await t.keys("Left", "Left", "Left", "Left");
        await t.type("55-");
        await t.waitFor(/^✨ draft-55-keep$/m);
        const screen = await t.waitFor((s) =>
          s.includes("First turn done.") && s.split("\n").at(-1)!.includes("ctrl-x: shell mode")
        );
        assertEquals(screen.split("\n").at(-2), "✨ draft-55-keep");
        await t.type("!");
        await t.waitFor(/^✨ draft-55-!keep$/m);
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Got the draft.") && promptReady(s));
        const users = (await contextMessages(sb)).filter((m) => m.role === "user");
        assertEquals(users.map((m) => m.text), ["first", "draft-55-!keep"]);
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: Ctrl-C during a turn keeps the typed text, including an unsent steer",
  opts,
  () =>
    withShell(async (sb) => {
      const marker = 5000 + Math.floor(Math.random() * 900);
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: `sleep ${marker}`, timeout: 300 }),
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"]);
      try {
        await t.waitFor(promptReady);
        await t.type("go");
        await t.keys("Enter");
        await t.waitFor(`Using Shell (sleep ${marker})`);
        await t.type("never-consumed");
        await t.keys("C-s");
        await t.waitFor("never-consumed (sent after the current step)");
        await t.type("half typed");
        await t.keys("C-c");
        const screen = await t.waitFor((s) =>
          s.includes("Interrupted by user") && s.split("\n").at(-1)!.includes("ctrl-x")
        );
        const lines = screen.split("\n");
        assertEquals(lines.slice(-3, -1), ["✨ never-consumed", "   half typed"]);
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: the prompt is on screen after each of several turns in a row",
  opts,
  () =>
    withShell(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        const config = await sb.openaiConfig(mock.url, { capabilities: ["thinking"] });
        const t = await TmuxKimi.start(sb, ["--config-file", config], { width: 80, height: 24 });
        try {
          await t.waitFor(promptReady);
          for (let i = 0; i < 6; i++) {
            const words = Array.from({ length: 60 }, (_, k) => `w${k}`).join(" ");
            mock.enqueue({
              reasoning: ["thinking ", "about it"],
              text: [
                `## Part ${i}\n\n`,
                `${words}\n\n`,
                "```ts\nconst x = 1;\n```\n\n",
                `end-${i}.`,
              ],
              chunkDelayMs: 40,
              usage: { prompt_tokens: 1000 * (i + 1), completion_tokens: 50 },
            });
            await t.type(`turn number ${i}`);
            await t.keys("Enter");
            await t.waitFor((s) => s.includes(`end-${i}.`) && promptReady(s));
            // the prompt stays drawn: nothing from the finished turn draws over it later
            for (let k = 0; k < 5; k++) {
              await new Promise((r) => setTimeout(r, 60));
              const screen = await t.screen();
              assert(promptReady(screen), `prompt gone after turn ${i}:\n${screen}`);
            }
          }
        } finally {
          await t.close();
        }
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell: /editor hands the terminal to $EDITOR without losing the first key",
  opts,
  () =>
    withShell(async (sb) => {
      // An "editor" that reads one line from the terminal and saves it as the message.
      const editor = `${sb.root}/line-editor.sh`;
      await Deno.writeTextFile(
        editor,
        `#!/bin/sh\n: > '${sb.root}/editor-started'\nIFS= read -r line\nprintf "%s\\n" "$line" > "$1"\n`,
      );
      await Deno.chmod(editor, 0o755);
      const config = await sb.scriptedConfig(["text: got it."]);
      const t = await TmuxKimi.start(sb, ["--config-file", config], { env: { EDITOR: editor } });
      try {
        await t.waitFor(promptReady);
        await t.type("/editor");
        await t.keys("Enter");
        // Type once the editor runs (its marker file exists), not after a guessed delay.
        for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
          if (await Deno.stat(`${sb.root}/editor-started`).then(() => true, () => false)) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await t.type("hello from the editor");
        await t.keys("Enter");
        // The composed text comes back into the prompt, complete, for a last look.
        await t.waitFor(/^✨ hello from the editor$/m);
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("got it.") && promptReady(s));
        const ctx = await contextText(sb);
        assertStringIncludes(ctx, '{"role":"user","content":"hello from the editor"}');
        await t.keys("C-d");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
    }),
);
