/**
 * PTY tests (tmux) of the shell's commands and keys: /usage, /btw, /changelog, /hooks,
 * /feedback, /fork, /reload, /task, notifications at an idle prompt, Shift-Tab, Ctrl-O, paste
 * folding, Ctrl-V (a fake clipboard tool) and @image attachments against the mock model.
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

async function withShell(fn: (sb: KimiSandbox) => Promise<void>): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

async function contextOf(dir: string): Promise<string> {
  return await Deno.readTextFile(`${dir}/context.jsonl`).catch(() => "");
}

/** Type a line and press Enter, then wait for `until` and an idle prompt. */
async function send(t: TmuxKimi, line: string, until: string | RegExp): Promise<string> {
  await t.type(line);
  await t.keys("Enter");
  const test = typeof until === "string"
    ? (s: string) => s.includes(until)
    : (s: string) => until.test(s);
  return await t.waitFor((s) => test(s) && promptReady(s));
}

Deno.test(
  "shell: /usage totals, /btw, /changelog, /hooks, /feedback and /fork",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig([
        "usage: input_other=100 output=20 input_cache_read=30\ntext: First reply.",
        "text: Side answer 7.",
      ], { hooks: [{ event: "UserPromptSubmit", command: "true", matcher: "" }] });
      const t = await TmuxKimi.start(sb, ["--config-file", config], { height: 50 });
      try {
        await t.waitFor(promptReady);
        await send(t, "hello there", "First reply.");

        let screen = await send(t, "/usage", "Tokens:");
        assertStringIncludes(
          screen,
          "Tokens:   input 130 (cached 30, cache writes 0) · output 20 · 1 step(s) with usage",
        );

        screen = await send(t, "/btw what number?", "Side answer 7.");
        assertStringIncludes(screen, "💭 btw: what number?");

        screen = await send(t, "/changelog", "What's new in kimi 1.49.0");
        assertStringIncludes(screen, "• One Deno program");

        screen = await send(t, "/hooks", "Hooks (1)");
        assertStringIncludes(screen, "UserPromptSubmit → $ true (timeout 30s)");
        assertMatch(screen, /last run \d\d:\d\d:\d\d: allowed in \d+ ms/);

        screen = await send(t, "/feedback", "Diagnostics saved to");
        assertStringIncludes(screen, "Report problems with this build (kimi for Deno");
        assert(!screen.includes("MoonshotAI/kimi-cli"), screen);
        // not signed in to Kimi Code: nothing is asked or sent, only where to report
        assert(!screen.includes("Enter your feedback"), screen);
        const feedbackDir = `${sb.shareDir}/feedback`;
        const files = await Array.fromAsync(Deno.readDir(feedbackDir));
        assertEquals(files.length, 1);
        const diag = await Deno.readTextFile(`${feedbackDir}/${files[0].name}`);
        assertStringIncludes(diag, "- kimi: 1.49.0");
        assertStringIncludes(diag, "- model: scripted (scripted_echo: scripted_echo)");

        const [original] = await sb.sessionDirs();
        screen = await send(t, "/fork", "The original is kept");
        assertStringIncludes(screen, `(resume it with kimi -r ${original.split("/").at(-1)})`);
        assertMatch(screen, /Forked into session \S+: Fork of hello there/);
        // the fork runs a new agent, whose scripted model starts its script again
        await send(t, "continue in the fork", /continue in the fork\nFirst reply\./);
        const dirs = await sb.sessionDirs();
        assertEquals(dirs.length, 2);
        const fork = dirs.find((d) => d !== original)!;
        const forkCtx = await contextOf(fork);
        assertStringIncludes(forkCtx, "hello there"); // the history came along
        assertStringIncludes(forkCtx, "continue in the fork");
        const origCtx = await contextOf(original);
        assertStringIncludes(origCtx, "First reply.");
        assert(!origCtx.includes("continue in the fork"), "the original is untouched");
        // the side question never entered either conversation
        assert(!origCtx.includes("Side answer") && !forkCtx.includes("what number"));
        const state = JSON.parse(await Deno.readTextFile(`${fork}/state.json`));
        assertEquals(state.custom_title, "Fork of hello there");
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: /reload picks up config and skill changes without restarting",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig(["text: unused"]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        const cfg = JSON.parse(await Deno.readTextFile(config));
        cfg.models.renamed = { ...cfg.models.scripted };
        cfg.default_model = "renamed";
        await Deno.writeTextFile(config, JSON.stringify(cfg));
        const skill = `${sb.workDir}/.kimi/skills/fresh-skill`;
        await Deno.mkdir(skill, { recursive: true });
        await Deno.writeTextFile(
          `${skill}/SKILL.md`,
          "---\nname: fresh-skill\ndescription: Added while running\n---\nDo the fresh thing.\n",
        );
        const screen = await send(t, "/reload", "Reloaded: model renamed");
        assertStringIncludes(screen, "no MCP servers");
        assert(screen.split("\n").at(-1)!.includes("renamed"), "the status line shows the model");
        const help = await send(t, "/help", "Agent commands");
        assertStringIncludes(help, "/skill:fresh-skill");
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell: a finished background task shows a line at the idle prompt; /task shows and stops tasks",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig([
        toolCallLine("bg1", "Shell", {
          command: "while [ ! -f go ]; do sleep 0.05; done; echo bg-output-77",
          run_in_background: true,
          description: "wait for go",
        }),
        "text: Started it.",
        toolCallLine("bg2", "Shell", {
          command: "sleep 300",
          run_in_background: true,
          description: "long sleeper",
        }),
        "text: Started the sleeper.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"], { height: 50 });
      try {
        await t.waitFor(promptReady);
        await send(t, "start it", "Started it.");
        await Deno.writeTextFile(`${sb.workDir}/go`, "");
        // nobody presses a key: the line appears at the idle prompt
        let screen = await t.waitFor((s) =>
          s.includes("● Background task completed: wait for go (task ") && promptReady(s)
        );

        await send(t, "start another", "Started the sleeper.");
        await t.type("/task");
        await t.keys("Enter");
        screen = await t.waitFor("Background tasks");
        assertMatch(screen, /▶ \S+ {2}running {2}long sleeper/);
        assertMatch(screen, /✓ \S+ {2}completed \(exit 0\) {2}wait for go/);
        await t.keys("Down", "Enter"); // the finished one (newest first)
        screen = await t.waitFor((s) => s.includes("│ bg-output-77") && promptReady(s));
        assertStringIncludes(screen, "command: while [ ! -f go ]");

        await t.type("/task");
        await t.keys("Enter");
        await t.waitFor("Background tasks");
        await t.keys("Enter"); // the sleeper
        await t.waitFor("is running");
        await t.keys("1"); // Stop it
        screen = await t.waitFor((s) => /Stopped task \S+ \(killed\)/.test(s) && promptReady(s));
        const id = screen.match(/Stopped task (\S+) \(killed\)/)![1];
        screen = await send(t, `/task stop ${id}`, "has already finished");
        screen = await send(t, "/task nope-123", "No background task nope-123");
      } finally {
        await t.close();
      }
    }),
);

/** A bin dir with the few programs the shell needs, and no clipboard tool. */
async function minimalBin(sb: KimiSandbox): Promise<string> {
  const bin = `${sb.root}/bin`;
  await Deno.mkdir(bin, { recursive: true });
  for (const tool of ["sh", "bash", "sed", "cat", "true"]) {
    for (const dir of ["/usr/bin", "/bin"]) {
      try {
        await Deno.symlink(`${dir}/${tool}`, `${bin}/${tool}`);
        await Deno.stat(`${bin}/${tool}`);
        break;
      } catch {
        await Deno.remove(`${bin}/${tool}`).catch(() => {});
      }
    }
  }
  return bin;
}

Deno.test(
  "shell: Shift-Tab toggles plan mode, Ctrl-O edits the input, big pastes fold, Ctrl-V without a clipboard tool",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig(["text: Got the paste."]);
      const bin = await minimalBin(sb);
      const editor = `${sb.root}/fake-editor.sh`;
      await Deno.writeTextFile(editor, '#!/bin/sh\nsed -i "s/draft/edited-by-editor/" "$1"\n');
      await Deno.chmod(editor, 0o755);
      const t = await TmuxKimi.start(sb, ["--config-file", config], {
        env: { PATH: bin, EDITOR: editor },
      });
      try {
        await t.waitFor(promptReady);
        await t.keys("BTab");
        let screen = await t.waitFor("Plan mode ON");
        assertMatch(screen.split("\n").at(-1)!, /plan/);
        await t.keys("BTab");
        screen = await t.waitFor("Plan mode OFF");
        assert(!/\bplan\b/.test(screen.split("\n").at(-1)!), screen);

        await t.type("my draft text");
        await t.keys("C-o");
        await t.waitFor("✨ my edited-by-editor text");

        await t.keys("C-u");
        await t.keys("C-v");
        screen = await t.waitFor("No clipboard tool: install wl-paste, xclip or pngpaste");

        const lines = Array.from({ length: 30 }, (_, i) => `pasted line ${i + 1}`).join("\n");
        await t.tmux(["set-buffer", "--", lines]);
        await t.tmux(["paste-buffer", "-p", "-t", "0"]);
        await t.waitFor("✨ [pasted 30 lines]");
        await t.type(" check it");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Got the paste.") && promptReady(s));
        const [dir] = await sb.sessionDirs();
        const ctx = await contextOf(dir);
        assertStringIncludes(ctx, "pasted line 1\\npasted line 2");
        assertStringIncludes(ctx, "pasted line 30 check it");
        assert(!ctx.includes("[pasted 30 lines]"));
      } finally {
        await t.close();
      }
    }),
);

/** The bytes of a 1x1 PNG. */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test(
  "shell: Ctrl-V pastes a clipboard image and @file.png attaches one; the model gets both",
  opts,
  () =>
    withShell(async (sb) => {
      const mock = await startMockOpenAI({ defaultReply: { text: "Two pictures seen." } });
      try {
        const config = await sb.openaiConfig(mock.url, { capabilities: ["image_in"] });
        const bin = await minimalBin(sb);
        const clip = `${sb.root}/clip.png`;
        await Deno.writeFile(clip, PNG);
        // a fake wl-paste: lists an image type and prints the PNG
        await Deno.writeTextFile(
          `${bin}/wl-paste`,
          `#!/bin/sh\ncase "$1" in --list-types) echo text/plain; echo image/png;;\n` +
            `*) cat '${clip}';; esac\n`,
        );
        await Deno.chmod(`${bin}/wl-paste`, 0o755);
        const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
        await Deno.writeFile(`${sb.workDir}/photo.jpg`, jpeg);
        const t = await TmuxKimi.start(sb, ["--config-file", config], { env: { PATH: bin } });
        try {
          await t.waitFor(promptReady);
          await t.type("compare");
          await t.keys("C-v");
          await t.waitFor("✨ compare [image #1]");
          await t.type("with @photo.jpg please");
          await t.keys("Enter");
          await t.waitFor((s) => s.includes("Two pictures seen.") && promptReady(s));
          const user = mock.requests.at(-1)!.body.messages.find((m: any) => m.role === "user");
          const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
          assertEquals(user.content, [
            { type: "text", text: "compare [image #1]" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
            { type: "text", text: " with @photo.jpg" },
            { type: "image_url", image_url: { url: `data:image/jpeg;base64,${b64(jpeg)}` } },
            { type: "text", text: " please" },
          ]);
        } finally {
          await t.close();
        }
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell: /btw typed during a turn is answered at once, beside the running turn",
  opts,
  () =>
    withShell(async (sb) => {
      const config = await sb.scriptedConfig([
        toolCallLine("w1", "Shell", {
          command: "while [ ! -f go ]; do sleep 0.05; done; echo went",
        }),
        "text: Beside answer 9.",
        "text: Main turn done.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"]);
      try {
        await t.waitFor(promptReady);
        await t.type("wait for go");
        await t.keys("Enter");
        await t.waitFor("Using Shell");
        await t.type("/btw how long?");
        await t.keys("Enter");
        // answered while the turn still waits for `go`
        let screen = await t.waitFor("Beside answer 9.");
        assertStringIncludes(screen, "💭 btw: how long?");
        assert(!screen.includes("Main turn done."), screen);
        await Deno.writeTextFile(`${sb.workDir}/go`, "");
        screen = await t.waitFor((s) => s.includes("Main turn done.") && promptReady(s));
        const [dir] = await sb.sessionDirs();
        const ctx = await contextOf(dir);
        assert(!ctx.includes("Beside answer") && !ctx.includes("how long?"), ctx);
      } finally {
        await t.close();
      }
    }),
);
