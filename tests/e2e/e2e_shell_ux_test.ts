/**
 * End-to-end tests of the shell as a new user meets it (issue 19): streamed markdown, resizing,
 * resuming, and messages. `main.ts` runs in a real PTY under tmux against the mock
 * OpenAI-compatible server; every wait polls the screen (no fixed sleeps).
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { TmuxKimi } from "../helpers/tmux.ts";
import { findBwrap, probeBwrap } from "../../lib/sandbox/bwrap.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };
const BWRAP = findBwrap();
// Without a usable bwrap (a developer machine; never under CI) there is no pid namespace to give.
const NO_BWRAP = (BWRAP === null || await probeBwrap(BWRAP) !== null) && !Deno.env.get("CI");

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

/** Whether the shell-mode prompt waits for input: an empty `$` line above its status bar. */
function shellPromptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^\$\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: agent mode");
}

async function withSandbox(fn: (sb: KimiSandbox) => Promise<void>): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

/** The transcript rows between the echo of `input` and the next prompt echo or live area. */
function turnOutput(screen: string, input: string): string[] {
  const lines = screen.split("\n");
  const start = lines.findIndex((l) => l === `✨ ${input}`);
  assert(start >= 0, `no echo of ${input} in:\n${screen}`);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => l.startsWith("✨"));
  return (end < 0 ? rest : rest.slice(0, end)).map((l) => l.trimEnd());
}

const MARKDOWN = [
  "# Release notes",
  "",
  "The first paragraph has `inline code` and *emphasis*.",
  "It continues on a second line.",
  "",
  "- a list item with `code`, **bold** and [a link](http://example.com)",
  "- a second *item*",
  "",
  "```ts",
  "const answer = 42;",
  "```",
  "",
  "| name | value |",
  "|------|-------|",
  "| x    | 1     |",
  "",
  "## Next steps",
  "",
  "Last paragraph.",
].join("\n");

const RENDERED = [
  "# Release notes",
  "",
  "The first paragraph has inline code and emphasis. It continues on a second line.",
  "",
  "  * a list item with code, bold and a link (http://example.com)",
  "  * a second item",
  "",
  "  const answer = 42;",
  "",
  "┌──────┬───────┐",
  "│ name │ value │",
  "├──────┼───────┤",
  "│ x    │ 1     │",
  "└──────┴───────┘",
  "",
  "## Next steps",
  "",
  "Last paragraph.",
];

Deno.test(
  "shell: markdown streamed in 4-character chunks renders like the whole text (blank lines between blocks, inline markup in list items)",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        mock.enqueue({ text: MARKDOWN, chunkChars: 4 }, { text: MARKDOWN });
        const config = await sb.openaiConfig(mock.url);
        const t = await TmuxKimi.start(sb, ["--config-file", config], { width: 100, height: 60 });
        try {
          await t.waitFor(promptReady);
          await t.type("chunked");
          await t.keys("Enter");
          await t.waitFor((s) => s.includes("Last paragraph.") && promptReady(s));
          await t.type("whole");
          await t.keys("Enter");
          const screen = await t.waitFor((s) =>
            s.split("Last paragraph.").length === 3 && promptReady(s)
          );
          assertEquals(turnOutput(screen, "chunked"), RENDERED);
          assertEquals(turnOutput(screen, "whole"), RENDERED);
        } finally {
          await t.close();
        }
      } finally {
        await mock.close();
      }
    }),
);

/** The prompt holds `input` (wrapped at any width) above the status line, and nothing else. */
function promptAt(screen: string, input = ""): boolean {
  const lines = screen.split("\n");
  const at = lines.findLastIndex((l) => l.startsWith("✨"));
  if (at < 0 || !lines.at(-1)!.startsWith("model:")) return false;
  const squash = (t: string) => t.replace(/\s/g, "");
  return squash(lines.slice(at, -1).join("")) === squash(`✨${input}`);
}

/**
 * The prompt holds `input` laid out by the shell for width `w`: on as many rows as it takes at
 * that width (a terminal's re-wrap keeps rows a wider window would join) above the status line
 * as drawn for `w` (cut with `…` when wider, whole when it fits).
 */
function promptDrawnFor(screen: string, input: string, status: string, w: number): boolean {
  if (!promptAt(screen, input)) return false;
  const lines = screen.split("\n");
  const at = lines.findLastIndex((l) => l.startsWith("✨"));
  // "✨ " takes three columns; the cursor after the text stays on its last row at these widths
  const rows = Math.ceil((3 + input.length) / w);
  const last = lines.at(-1)!;
  const fitted = status.length <= w ? last === status : last.endsWith("…") && last.length <= w;
  return lines.length - 1 - at === rows && fitted;
}

Deno.test(
  "shell: resizing during a stream and at an idle prompt leaves no duplicated fragments or stale prompts",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        const paras = Array.from(
          { length: 16 },
          (_, i) =>
            `para-${String(i).padStart(2, "0")} ` +
            "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ".repeat(
              6,
            )
              .trim(),
        );
        mock.enqueue({ text: paras.join("\n\n"), chunkChars: 4, chunkDelayMs: 4 });
        const config = await sb.openaiConfig(mock.url);
        const t = await TmuxKimi.start(sb, ["--config-file", config], { width: 110, height: 40 });
        try {
          await t.waitFor(promptReady);
          await t.type("stream a lot");
          await t.keys("Enter");
          // mid-paragraph (several live rows of pending text) at each resize
          await t.waitFor(/para-02 lorem.*dolor.*\n.*elit/);
          await t.resize(64, 40);
          assert(!(await t.screen()).includes("para-15"), "the resize happened mid-stream");
          await t.waitFor(/para-06 lorem.*\n.*\n.*elit/);
          await t.resize(100, 40);
          await t.waitFor(/para-10 lorem.*\n.*elit/);
          await t.resize(58, 40);
          await t.waitFor((s) =>
            s.includes("para-15") && s.includes("model:") && !s.includes("Writing")
          );
          await t.resize(110, 40);
          await t.waitFor(promptReady);
          // idle prompt with a long input line that wraps once narrowed
          const typed = "a long unsent input line ".repeat(3).trim();
          await t.type(typed);
          const statusRow = (await t.waitFor((s) => promptAt(s, typed))).split("\n").at(-1)!;
          for (const w of [60, 100, 45, 90]) {
            await t.resize(w, 40);
            // the shell's redraw for this width, not the terminal's re-wrap of the last one
            // (which shows the same text): the next resize must not overtake it
            await t.waitFor((s) => promptDrawnFor(s, typed, statusRow, w));
          }
          await t.keys("C-u");
          await t.waitFor(promptReady);
          const all = await t.history();
          const lines = all.split("\n");
          for (let i = 0; i < 16; i++) {
            const marker = `para-${String(i).padStart(2, "0")}`;
            const n = lines.filter((l) => l.includes(marker)).length;
            assertEquals(n, 1, `${marker} appears ${n} times:\n${all}`);
          }
          const prompts = lines.filter((l) => l.startsWith("✨") && !l.includes("stream a lot"));
          assertEquals(prompts, ["✨"], `stale prompt rows:\n${all}`);
          const status = lines.filter((l) => l.startsWith("model:"));
          assertEquals(status.length, 1, `stale status rows:\n${all}`);
          assert(!all.includes("esc to interrupt"), `a stale spinner row:\n${all}`);
          assert(!all.includes("long unsent"), `stale input rows:\n${all}`);
        } finally {
          await t.close();
        }
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell: -p on a terminal runs once in the shell UI and exits; -S picks a session whose conversation is redrawn; an unknown --session id says new session",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([
        `text: First answer with \`code\`.\n${toolCallLine("c1", "Shell", { command: "echo hi" })}`,
        "text: Done after the tool.",
        "text: Second answer.",
      ]);
      const t1 = await TmuxKimi.start(sb, ["--config-file", config, "--yolo", "-p", "first q"]);
      try {
        const s = await t1.waitFor("[exit 0]");
        assertStringIncludes(s, "✨ first q");
        assertStringIncludes(s, "First answer with code.");
        assertStringIncludes(s, "• Used Shell (echo hi)");
        assertStringIncludes(s, "To resume this session: kimi --work-dir ");
        assert(!s.includes("Welcome to Kimi"), s);
      } finally {
        await t1.close();
      }
      const printed = await sb.run([
        "--print",
        "--config-file",
        await sb.scriptedConfig(["text: printed."]),
        "-p",
        "from print mode",
      ]);
      assertEquals(printed.code, 0, printed.stderr);
      const t2 = await TmuxKimi.start(sb, ["--config-file", config, "-S"]);
      try {
        let s = await t2.waitFor("Resume a session");
        assert(/\d\. from print mode +just now · [0-9a-f]{8} · --print run/.test(s), s);
        assert(/\d\. first q +just now · [0-9a-f]{8}$/m.test(s), s);
        await t2.keys("Down");
        await t2.waitFor(/› \d\. first q/);
        await t2.keys("Enter");
        s = await t2.waitFor(promptReady);
        // the earlier conversation, tool output collapsed, before the prompt
        assertStringIncludes(s, "✨ first q\nFirst answer with code.\n• Used Shell (echo hi)");
        assertStringIncludes(s, "Done after the tool.");
        assert(!s.includes("│ hi"), "tool output stays collapsed");
        await t2.keys("C-d");
        await t2.waitFor("[exit 0]");
      } finally {
        await t2.close();
      }
      // -C continues the session last used here, redrawn the same way
      const t4 = await TmuxKimi.start(sb, ["--config-file", config, "-C"]);
      try {
        const s = await t4.waitFor(promptReady);
        assertStringIncludes(s, "✨ first q\nFirst answer with code.\n• Used Shell (echo hi)");
      } finally {
        await t4.close();
      }
      const t3 = await TmuxKimi.start(sb, ["--config-file", config, "--session", "no-such-id-1"]);
      try {
        const s = await t3.waitFor(promptReady);
        assertStringIncludes(s, "New session no-such-id-1 (no session with that ID");
        assertStringIncludes(s, "no session no-such-id-1 in ");
      } finally {
        await t3.close();
      }
    }),
);

Deno.test(
  "shell: Esc interrupts a running turn like Ctrl-C; the spinner shows the elapsed time",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        mock.enqueue({ text: "slow ".repeat(400), chunkChars: 4, chunkDelayMs: 30 });
        const config = await sb.openaiConfig(mock.url);
        const t = await TmuxKimi.start(sb, ["--config-file", config]);
        try {
          await t.waitFor(promptReady);
          await t.type("go slowly");
          await t.keys("Enter");
          await t.waitFor(/Writing… \d+s · esc to interrupt/);
          await t.keys("Escape");
          const s = await t.waitFor((x) => x.includes("Interrupted by user") && promptReady(x));
          assert(!s.includes("esc to interrupt"), s);
        } finally {
          await t.close();
        }
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell: without run permission, Ctrl-X shell mode explains the missing permission and no confinement warning is shown",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([]);
      const t = await TmuxKimi.start(sb, ["--config-file", config], {
        permissions: ["--allow-read", "--allow-env", `--allow-write=${sb.shareDir}`],
      });
      try {
        await t.waitFor(promptReady);
        await t.keys("C-x");
        await t.type("echo from-shell-mode");
        await t.keys("Enter");
        const s = await t.waitFor("Shell mode cannot run commands");
        assertStringIncludes(s.replace(/\n/g, " "), "deno task workspace");
        assert(!/NotCapable|Requires run access/.test(s), s);
        assert(!/not confined/.test(s), s);
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: a Ctrl-X shell-mode command runs in a pid namespace of its own, as hooks and MCP servers do",
  { ...opts, ignore: NO_BWRAP },
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        await t.keys("C-x");
        await t.type("echo ns=$(readlink /proc/self/ns/pid)");
        await t.keys("Enter");
        const s = await t.waitFor((x) => /^ns=pid:\[\d+\]$/m.test(x) && shellPromptReady(x));
        const ns = /^ns=(pid:\[\d+\])$/m.exec(s)![1];
        assert(
          ns !== await Deno.readLink("/proc/self/ns/pid"),
          `the shell-mode command ran in kimi's pid namespace (${ns})`,
        );
        // Ctrl-C still stops a command inside the namespace, and what it started with it. (Each
        // shell-mode command gets a namespace of its own: its sleeps are found by theirs.)
        await t.type(
          `sleep 300 & echo bg=$(readlink /proc/self/ns/pid); sleep 301; echo done-$((1+1))`,
        );
        await t.keys("Enter");
        const started = await t.waitFor(/^bg=pid:\[\d+\]$/m);
        const ns2 = /^bg=(pid:\[\d+\])$/m.exec(started)![1];
        const sleeps = async () => {
          let n = 0;
          for await (const e of Deno.readDir("/proc")) {
            if (!/^\d+$/.test(e.name)) continue;
            try {
              const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`);
              if (
                /^sleep\0(300|301)\0$/.test(cmd) &&
                (await Deno.readLink(`/proc/${e.name}/ns/pid`)) === ns2
              ) n++;
            } catch {
              // gone meanwhile
            }
          }
          return n;
        };
        // both sleeps run (the second starts right after the echo the test saw)
        for (let i = 0; await sleeps() < 2; i++) {
          assert(i < 600, "the shell-mode command's sleeps never both ran");
          await new Promise((r) => setTimeout(r, 50));
        }
        await t.keys("C-c");
        const after = await t.waitFor((x) => x.includes("Interrupted.") && shellPromptReady(x));
        assert(!/^done-2$/m.test(after), after);
        for (let i = 0; await sleeps() > 0; i++) {
          assert(i < 600, "the shell-mode command's processes outlived its Ctrl-C");
          await new Promise((r) => setTimeout(r, 50));
        }
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: a running Shell command's output streams live under its tool line",
  opts,
  () =>
    withSandbox(async (sb) => {
      const fifo = `${sb.root}/go`;
      // prints a line, then waits until the test has seen it before finishing
      const command = `echo live-line-one; while [ ! -e ${fifo} ]; do sleep 0.05; done; echo after`;
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command }),
        "text: finished.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"]);
      try {
        await t.waitFor(promptReady);
        await t.type("run it");
        await t.keys("Enter");
        const s = await t.waitFor((x) =>
          x.includes("│ live-line-one") && x.includes("Using Shell")
        );
        assert(/Using Shell \(echo live-line-one.*\) · \d+s/.test(s), s);
        await Deno.writeTextFile(fifo, "");
        await t.waitFor((x) => x.includes("finished.") && promptReady(x));
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: approvals show a diff once with only the changed lines; Ctrl-C at an approval says interrupted; MCP approvals name server, tool and arguments",
  opts,
  () =>
    withSandbox(async (sb) => {
      const body = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
      await Deno.writeTextFile(`${sb.workDir}/notes.txt`, body);
      const fixture = new URL("../helpers/mcp_stdio_server.ts", import.meta.url).pathname;
      const denoJson = new URL("../../deno.json", import.meta.url).pathname;
      const mcp = JSON.stringify({
        mcpServers: {
          tester: {
            command: Deno.execPath(),
            args: ["run", "-A", "--config", denoJson, "--no-lock", fixture],
          },
        },
      });
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "StrReplaceFile", {
          path: "notes.txt",
          edit: { old: "line 10\n", new: "line ten\n" },
        }),
        "text: edited.",
        toolCallLine("c2", "Shell", { command: "echo never-run" }),
        toolCallLine("c3", "ping", { text: "hello-mcp" }),
        "text: pinged.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--mcp-config", mcp]);
      try {
        await t.waitFor(promptReady);
        await t.type("edit it");
        await t.keys("Enter");
        let s = await t.waitFor("Allow this action?");
        assertStringIncludes(s, "  10 - line 10");
        assertStringIncludes(s, "  10 + line ten");
        assert(!s.includes("line 9"), `context lines in the approval:\n${s}`);
        await t.keys("Enter");
        s = await t.waitFor((x) => x.includes("edited.") && promptReady(x));
        assertEquals(s.split("\n").filter((l) => l.includes("+ line ten")).length, 1, s);

        await t.type("run something");
        await t.keys("Enter");
        await t.waitFor("Allow this action?");
        s = await t.screen();
        assertEquals(s.split("\n").filter((l) => l.includes("echo never-run")).length, 1, s);
        await t.keys("C-c");
        s = await t.waitFor((x) => x.includes("Interrupted by user") && promptReady(x));
        assertStringIncludes(s, "✗ Interrupted");

        await t.type("ping it");
        await t.keys("Enter");
        s = await t.waitFor("Allow this action?");
        assertStringIncludes(s, "wants to call tool ping from MCP server tester:");
        assertStringIncludes(s, `"text": "hello-mcp"`);
        await t.keys("Enter");
        await t.waitFor((x) => x.includes("pinged.") && promptReady(x));
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: completion shows a menu with descriptions that follows the typing, and Tab cycles",
  opts,
  () =>
    withSandbox(async (sb) => {
      await Deno.mkdir(`${sb.workDir}/src`);
      await Deno.writeTextFile(`${sb.workDir}/src/alpha.ts`, "");
      await Deno.writeTextFile(`${sb.workDir}/src/beta.ts`, "");
      const config = await sb.scriptedConfig([]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        await t.type("/");
        let s = await t.waitFor(/\/add-dir +Add a directory/);
        assertStringIncludes(s, "matches · Tab next · Esc close");
        assert(!s.includes("/?"), "aliases are not listed beside their command");
        await t.type("se");
        s = await t.waitFor((x) => /^✨ \/se$/m.test(x) && !x.includes("/add-dir"));
        assert(/\/sessions +Pick a session/.test(s), s);
        assert(/\/setup/.test(s), s);
        await t.keys("Tab");
        await t.waitFor(/^✨ \/sessions$/m);
        await t.waitFor(/› \/sessions/);
        await t.keys("Tab");
        await t.waitFor(/^✨ \/setup$/m);
        await t.keys("Escape");
        await t.waitFor((x) => /^✨ \/setup$/m.test(x) && !x.includes("/sessions"));
        await t.keys("C-u");
        await t.type("look at @src/");
        s = await t.waitFor((x) => x.includes("@src/alpha.ts") && x.includes("@src/beta.ts"));
        await t.type("b");
        await t.waitFor((x) => x.includes("@src/beta.ts") && !x.includes("@src/alpha.ts"));
        await t.keys("Tab");
        await t.waitFor((x) =>
          /^✨ look at @src\/beta\.ts$/m.test(x) && promptAt(x, "look at @src/beta.ts")
        );
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: /compact reports once; /title skips slash commands; shell-mode and agent history are apart",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig(["text: an answer.", "text: summary"]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        await t.type("/yolo");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("auto-approved") && promptReady(s));
        await t.type("the real question");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("an answer.") && promptReady(s));
        await t.type("/title");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Title: the real question") && promptReady(s));

        await t.type("/compact");
        await t.keys("Enter");
        let s = await t.waitFor((x) =>
          x.includes("The context has been compacted.") && promptReady(x)
        );
        assert(!s.includes("✓ Context compacted."), `reported twice:\n${s}`);
        // (What the usage counts after /compact — the compacted context, as the reference
        // counts it — is checked exactly in e2e_reference_contract_test.ts.)

        // shell-mode history
        await t.keys("C-x");
        await t.type("echo shell-hist-1");
        await t.keys("Enter");
        // the command has finished and the prompt reads keys again (a key typed while the
        // command runs goes to the command)
        await t.waitFor((x) => /^shell-hist-1$/m.test(x) && shellPromptReady(x));
        await t.keys("C-x");
        await t.waitFor((x) => x.split("\n").at(-1)!.includes("ctrl-x: shell mode"));
        await t.keys("Up");
        s = await t.waitFor(/^✨ \/compact$/m);
        await t.keys("C-u");
        await t.keys("C-x");
        await t.keys("Up");
        await t.waitFor(/^\$ echo shell-hist-1$/m);
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: with NO_COLOR, streamed thinking is labelled apart from the answer",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        mock.enqueue({
          reasoning: "I should check the docs first.",
          text: "The answer is 42.",
          chunkChars: 4,
        });
        const path = `${sb.root}/thinking.json`;
        await Deno.writeTextFile(
          path,
          JSON.stringify({
            default_model: "mock",
            show_thinking_stream: true,
            models: {
              mock: {
                provider: "mock",
                model: "mock-model",
                max_context_size: 100000,
                capabilities: ["thinking"],
              },
            },
            providers: { mock: { type: "openai_legacy", base_url: mock.url, api_key: "sk-test" } },
          }),
        );
        const t = await TmuxKimi.start(sb, ["--config-file", path, "--thinking"]);
        try {
          await t.waitFor(promptReady);
          await t.type("think");
          await t.keys("Enter");
          const s = await t.waitFor((x) => x.includes("The answer is 42.") && promptReady(x));
          assertEquals(turnOutput(s, "think"), [
            "✻ Thinking:",
            "│ I should check the docs first.",
            "The answer is 42.",
          ]);
        } finally {
          await t.close();
        }
      } finally {
        await mock.close();
      }
    }),
);
