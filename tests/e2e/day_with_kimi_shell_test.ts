/**
 * End-to-end tests of the shell for issue 32 ("A day with kimi"): what a new user meets in a
 * day of use. `main.ts` runs in a real PTY under tmux with the scripted provider or the mock
 * OpenAI-compatible server; every wait polls the screen (no fixed sleeps).
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { TmuxKimi } from "../helpers/tmux.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { startMockKimiCode } from "../helpers/mock_kimi_code.ts";
import { parse as parseToml } from "smol-toml";
import { REPO_ROOT, serveKimi } from "../helpers/url_server.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

/** Whether the prompt is idle: an empty `✨` input line above the status line. */
function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

async function withSandbox(fn: (sb: KimiSandbox) => Promise<void>): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

/** Copy a file or a directory tree. */
async function copyTree(from: string, to: string): Promise<void> {
  if ((await Deno.stat(from)).isFile) {
    await Deno.copyFile(from, to);
    return;
  }
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) await copyTree(`${from}/${e.name}`, `${to}/${e.name}`);
}

/** The parsed `state.json` of the only session in the sandbox. */
async function onlySessionState(sb: KimiSandbox): Promise<Record<string, unknown>> {
  const dirs = await sb.sessionDirs();
  assertEquals(dirs.length, 1, dirs.join("\n"));
  return JSON.parse(await Deno.readTextFile(`${dirs[0]}/state.json`));
}

Deno.test(
  "shell (issue 32 item 1): /title persists to state.json, before and after the first turn, and a continued session shows it",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig(["text: hi there", "text: again"]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        await t.type("/title Before any turn");
        await t.keys("Enter");
        await t.waitFor((s) =>
          s.includes("Session title set to: Before any turn") && promptReady(s)
        );
        assertEquals((await onlySessionState(sb)).custom_title, "Before any turn");
        await t.type("hello");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("hi there") && promptReady(s));
        await t.type("/title Renamed later");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Session title set to: Renamed later") && promptReady(s));
        assertEquals((await onlySessionState(sb)).custom_title, "Renamed later");
        await t.type("/exit");
        await t.keys("Enter");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
      const again = await TmuxKimi.start(sb, ["--config-file", config, "-C"]);
      try {
        await again.waitFor(promptReady);
        await again.type("/title");
        await again.keys("Enter");
        const s = await again.waitFor((x) => x.includes("Title: ") && promptReady(x));
        assertStringIncludes(s, "Title: Renamed later");
      } finally {
        await again.close();
      }
    }),
);

/** Occurrences of `needle` in the file at `path` ("" when it does not exist yet). */
async function countIn(path: string, needle: string): Promise<number> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split(needle).length - 1;
}

/** Poll until `pred` holds (a guard against hanging, not a timing assertion). */
async function until(pred: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test(
  "shell (issue 32 item 4): a waiting approval rings the bell, sends OSC 9 and fires the Notification hook; not while the terminal reports focus",
  opts,
  () =>
    withSandbox(async (sb) => {
      const hookLog = `${sb.root}/notifications.jsonl`;
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: "echo first-call" }),
        toolCallLine("c2", "Shell", { command: "echo second-call" }),
        "text: both ran.",
      ], {
        hooks: [{ event: "Notification", command: `cat >> "${hookLog}"; echo >> "${hookLog}"` }],
      });
      const raw = `${sb.root}/raw.out`;
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.recordOutput(raw);
        await t.waitFor(promptReady);
        await t.type("run two");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Allow this action?") && s.includes("first-call"));
        await until(async () => (await countIn(raw, "\x07")) >= 1, "the bell");
        assertEquals(await countIn(raw, "\x1b]9;Approval needed: Shell: "), 1);
        await until(async () => (await countIn(hookLog, "approval.requested")) === 1, "the hook");
        const input = JSON.parse((await Deno.readTextFile(hookLog)).trim().split("\n")[0]);
        assertEquals(input.hook_event_name, "Notification");
        assertEquals(input.sink, "user");
        assertEquals(input.notification_type, "approval.requested");
        assertEquals(input.title, "Approval needed: Shell");
        assertEquals(input.severity, "warning");
        assert(typeof input.body === "string" && typeof input.session_id === "string");
        // the terminal now says it has focus: the next approval neither rings nor notifies
        await t.sendBytes([0x1b, 0x5b, 0x49]);
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Allow this action?") && s.includes("second-call"));
        await until(async () => (await countIn(hookLog, "approval.requested")) === 2, "hook 2");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("both ran.") && promptReady(s));
        assertEquals(await countIn(raw, "\x1b]9;"), 1);
        assertEquals(await countIn(raw, "\x07"), 1);
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 4): [notifications] terminal_bell = false and desktop = false send nothing",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: "echo quiet-call" }),
        "text: ran quietly.",
      ], { notifications: { terminal_bell: false, desktop: false } });
      const raw = `${sb.root}/raw.out`;
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.recordOutput(raw);
        await t.waitFor(promptReady);
        await t.type("run it");
        await t.keys("Enter");
        await t.waitFor("Allow this action?");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("ran quietly.") && promptReady(s));
        assertEquals(await countIn(raw, "\x1b]9;"), 0);
        assertEquals(await countIn(raw, "\x07"), 0);
        assert((await countIn(raw, "quiet-call")) > 0, "the output was not recorded");
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 5): a cold first run shows one line of its own and no Deno download output, at start or at the first approval",
  opts,
  () =>
    withSandbox(async (sb) => {
      const srv = await serveKimi();
      try {
        // a copy of the checkout without its lockfile (whose integrities are npmjs.org's, not
        // the test mirror's)
        const checkout = `${sb.root}/checkout`;
        await Deno.mkdir(checkout);
        for (const entry of ["main.ts", "deno.json", "lib", "tools", "agents", "skills"]) {
          await copyTree(`${REPO_ROOT}/${entry}`, `${checkout}/${entry}`);
        }
        const main = `${checkout}/main.ts`;
        const denoDir = `${sb.root}/deno-dir`;
        await Deno.mkdir(denoDir);
        await Deno.writeTextFile(`${sb.workDir}/notes.txt`, "one\ntwo\n");
        const config = await sb.scriptedConfig([
          toolCallLine("c1", "StrReplaceFile", {
            path: "notes.txt",
            edit: { old: "two\n", new: "three\n" },
          }),
          "text: edited.",
        ]);
        const raw = `${sb.root}/raw.out`;
        const t = await TmuxKimi.start(sb, ["--config-file", config], {
          env: { DENO_DIR: denoDir, NPM_CONFIG_REGISTRY: srv.npmUrl },
          main,
        });
        try {
          await t.recordOutput(raw);
          await t.waitFor((s) => promptReady(s) || s.includes("[exit "), 240_000);
          await t.type("edit it");
          await t.keys("Enter");
          await t.waitFor("Allow this action?");
          await t.keys("Enter");
          await t.waitFor((s) => s.includes("edited.") && promptReady(s));
          const all = await t.history();
          const seen = await Deno.readTextFile(raw);
          for (const deno of ["Download", "Ignored build scripts", "Warning"]) {
            assert(!seen.includes(deno), `${deno} on the screen:\n${all}`);
          }
          assertEquals(all.split("preparing kimi, first run …").length - 1, 1, all);
        } finally {
          await t.close();
        }
        // the next start is warm: no line at all
        const again = await TmuxKimi.start(sb, ["--config-file", config], {
          env: { DENO_DIR: denoDir, NPM_CONFIG_REGISTRY: srv.npmUrl },
          main,
        });
        try {
          const s = await again.waitFor(promptReady);
          assert(!s.includes("preparing kimi"), s);
        } finally {
          await again.close();
        }
      } finally {
        await srv.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 7): after /new, kimi -C continues the newest session with content",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI({ defaultReply: { text: "answered." } });
      try {
        const config = await sb.openaiConfig(mock.url);
        for (const second of ["with content", "empty"]) {
          const t = await TmuxKimi.start(sb, ["--config-file", config]);
          let first = "";
          let next = "";
          try {
            let s = await t.waitFor(promptReady);
            first = /Session: ([0-9a-f-]{36})/.exec(s)![1];
            await t.type(`one ${second}`);
            await t.keys("Enter");
            await t.waitFor((x) => x.includes("answered.") && promptReady(x));
            await t.type("/new");
            await t.keys("Enter");
            s = await t.waitFor((x) => x.includes("Started a new session") && promptReady(x));
            next = /Started a new session ([0-9a-f-]{36})/.exec(s)![1];
            if (second === "with content") {
              await t.type("two");
              await t.keys("Enter");
              await t.waitFor((x) => x.split("answered.").length === 3 && promptReady(x));
            }
            await t.type("/exit");
            await t.keys("Enter");
            await t.waitFor("[exit 0]");
          } finally {
            await t.close();
          }
          const c = await sb.run(["--config-file", config, "-C", "--print", "-p", "again"]);
          assertEquals(c.code, 0, c.stderr);
          const expected = second === "with content" ? next : first;
          assertStringIncludes(c.stderr, `--session ${expected}`);
        }
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 8): a prompt interrupted with Esc stays in the context, its partial answer does not, and the model is told it was interrupted",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        mock.enqueue({ text: "slow ".repeat(400), chunkChars: 4, chunkDelayMs: 30 });
        mock.enqueue({ text: "second answer." });
        const config = await sb.openaiConfig(mock.url);
        const t = await TmuxKimi.start(sb, ["--config-file", config]);
        try {
          await t.waitFor(promptReady);
          await t.type("write a long essay");
          await t.keys("Enter");
          await t.waitFor(/Writing… \d+s · esc to interrupt/);
          await t.keys("Escape");
          await t.waitFor((s) => s.includes("Interrupted by user") && promptReady(s));
          await t.type("what is 2+2?");
          await t.keys("Enter");
          await t.waitFor((s) => s.includes("second answer.") && promptReady(s));
        } finally {
          await t.close();
        }
        const chats = mock.requests.filter((r) => r.path.endsWith("/chat/completions"));
        const messages = chats.at(-1)!.body.messages as { role: string; content: unknown }[];
        const convo = messages.filter((m) => m.role !== "system");
        assertEquals(convo.map((m) => m.role), ["user"]);
        const parts = (typeof convo[0].content === "string"
          ? [{ type: "text", text: convo[0].content }]
          : convo[0].content as { type: string; text: string }[]).map((p) => p.text);
        assertEquals(parts, [
          "write a long essay",
          "[Request interrupted by user]",
          "what is 2+2?",
        ]);
        // the records: the interrupted prompt, the marker, the next prompt and its answer
        const [dir] = await sb.sessionDirs();
        const ctx = (await Deno.readTextFile(`${dir}/context.jsonl`)).trim().split("\n")
          .map((l) =>
            JSON.parse(l)
          ).filter((r) => !String(r.role).startsWith("_"));
        assertEquals(ctx.map((r) => r.role), ["user", "user", "user", "assistant"]);
        assert(!JSON.stringify(ctx).includes("slow slow"), "the partial answer was kept");
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 9): a resumed transcript shows what the user typed (no SKILL.md, no system reminders) and a rejected call as it looked live",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: "echo rejected-call" }),
        "text: the skill answered.",
        "text: thanks noted.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      let live = "";
      try {
        await t.waitFor(promptReady);
        await t.type("run it");
        await t.keys("Enter");
        await t.waitFor("Allow this action?");
        await t.keys("Escape");
        await t.waitFor((s) => s.includes("✗ Rejected") && promptReady(s));
        await t.type("/skill:kimi-cli-help which front ends?");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("the skill answered.") && promptReady(s));
        for (const cmd of ["/afk", "/afk"]) {
          await t.type(cmd);
          await t.keys("Enter");
          await t.waitFor((s) => s.endsWith("shell mode · ctrl-j: newline") || promptReady(s));
        }
        await t.waitFor((s) => s.includes("You are back at the terminal") && promptReady(s));
        await t.type("thanks");
        await t.keys("Enter");
        live = await t.waitFor((s) => s.includes("thanks noted.") && promptReady(s));
        await t.type("/exit");
        await t.keys("Enter");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
      const again = await TmuxKimi.start(sb, ["--config-file", config, "-C"], { height: 60 });
      try {
        const s = await again.waitFor(promptReady);
        const transcript = s.split("─".repeat(40))[0];
        assertStringIncludes(transcript, "✨ run it");
        assert(/✗ Used Shell \(echo rejected-call\)/.test(transcript), transcript);
        assertStringIncludes(transcript, "✨ /skill:kimi-cli-help which front ends?");
        assertStringIncludes(transcript, "the skill answered.");
        assertStringIncludes(transcript, "✨ thanks");
        for (const internal of ["name: kimi-cli-help", "system-reminder", "User request:"]) {
          assert(!transcript.includes(internal), `${internal} in:\n${transcript}`);
        }
        assert(live.includes("✗ Used Shell (echo rejected-call)"), live);
      } finally {
        await again.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 13): /theme and /permissions name what is wrong and the valid values; unknown commands get the agent's wording; the approval hint names Esc and Ctrl-C",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: "echo hinted" }),
        "text: ok.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config]);
      try {
        await t.waitFor(promptReady);
        const run = async (line: string, expect: string) => {
          await t.type(line);
          await t.keys("Enter");
          return await t.waitFor((s) => s.includes(expect) && promptReady(s));
        };
        await run("/theme purple", 'Unknown theme "purple". Valid themes: dark, light.');
        const perm = await run("/permissions add maybe Shell(ls)", 'Unknown decision "maybe"');
        assertStringIncludes(perm, 'Unknown decision "maybe": use allow, ask, deny.');
        await run("/permissions frob", 'Unknown subcommand "frob".');
        await run("/thme dark", 'Unknown slash command "/thme". Did you mean /theme?');
        await t.type("go");
        await t.keys("Enter");
        const s = await t.waitFor("Allow this action?");
        assertStringIncludes(s, "Esc reject · Ctrl-C reject and interrupt the turn");
        await t.keys("Enter");
        await t.waitFor((x) => x.includes("ok.") && promptReady(x));
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 15): words on the screen: said lines on lines of their own, platform names in sentences, /help lists /reset",
  opts,
  () =>
    withSandbox(async (sb) => {
      const config = await sb.scriptedConfig([
        "text: Done.",
        `text: Echo: hi\n${toolCallLine("g1", "UpdateGoal", { status: "complete" })}`,
        "text: finished.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"], { height: 80 });
      try {
        await t.waitFor(promptReady);
        const run = async (line: string, expect: string | RegExp) => {
          await t.type(line);
          await t.keys("Enter");
          return await t.waitFor((s) =>
            (typeof expect === "string" ? s.includes(expect) : expect.test(s)) && promptReady(s)
          );
        };
        let s = await run("/init", "No AGENTS.md was written.");
        assert(/^Done\.$/m.test(s) && !s.includes("Done.No"), s);
        s = await run("/goal say hi", "Goal achieved");
        assert(/^Goal set: say hi$/m.test(s) && /^Echo: hi$/m.test(s), s);
        s = await run("/add-dir", "No additional directories.");
        assert(new RegExp(`^Workspace: ${sb.workDir}$`, "m").test(s), s);
        assert(/^No additional directories\. Use \/add-dir <path> to add one\.$/m.test(s), s);
        s = await run("/help", "Agent commands");
        assert(/^ {2}\/reset +Clear the context$/m.test(s), s);
        assert(/^ {2}\/new \(\/clear\) +Start a new session$/m.test(s), s);
        // a platform's name reads as a name in sentences, the menu keeps the details
        await t.type("/login");
        await t.keys("Enter");
        s = await t.waitFor("Any OpenAI-compatible API (enter its base URL)");
        await t.type("8");
        await t.waitFor("Base URL");
        await t.type("http://127.0.0.1:9/v1");
        await t.keys("Enter");
        s = await t.waitFor("API key for the OpenAI-compatible API");
        assert(!s.includes("API key for Any OpenAI-compatible API (enter"), s);
        await t.keys("Escape");
        await t.waitFor(promptReady);
      } finally {
        await t.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 10): /model asks for thinking too and saves both; managed Kimi Code models are refreshed with the capabilities of the login's model list",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        const config = await sb.openaiConfig(mock.url, {
          extra: {
            models: {
              plain: { provider: "mock", model: "plain-model", max_context_size: 1000 },
              thinker: {
                provider: "mock",
                model: "thinker-model",
                max_context_size: 1000,
                capabilities: ["thinking"],
              },
            },
            default_model: "plain",
          },
        });
        const t = await TmuxKimi.start(sb, ["--config-file", config]);
        try {
          await t.waitFor(promptReady);
          await t.type("/model");
          await t.keys("Enter");
          await t.waitFor("Select a model");
          await t.type("2");
          await t.waitFor("Enable thinking mode?");
          await t.type("1");
          await t.waitFor((s) =>
            s.includes("Switched to model thinker with thinking on") && promptReady(s)
          );
        } finally {
          await t.close();
        }
        const saved = JSON.parse(await Deno.readTextFile(config));
        assertEquals([saved.default_model, saved.default_thinking], ["thinker", true]);
      } finally {
        await mock.close();
      }

      // a Kimi Code login whose model list grew since: refreshed at start, with capabilities
      const models: Record<string, unknown>[] = [{
        id: "kimi-for-coding",
        context_length: 262144,
        supports_reasoning: true,
        display_name: "Kimi For Coding",
      }];
      const kc = await startMockKimiCode({ models });
      try {
        const env = { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl };
        assertEquals((await sb.run(["login", "--json"], { env })).code, 0);
        models.push({ id: "kimi-eyes", context_length: 131072, supports_image_in: true });
        const t = await TmuxKimi.start(sb, [], { env });
        try {
          await t.waitFor(promptReady);
          await t.type("/model");
          await t.keys("Enter");
          const s = await t.waitFor("Select a model");
          assertStringIncludes(s, "kimi-code/kimi-eyes");
          await t.keys("Escape");
          await t.waitFor(promptReady);
        } finally {
          await t.close();
        }
        const toml = parseToml(await Deno.readTextFile(`${sb.shareDir}/config.toml`)) as any;
        assertEquals(toml.models["kimi-code/kimi-eyes"].capabilities, ["image_in"]);
        assertEquals(toml.models["kimi-code/kimi-eyes"].max_context_size, 131072);
        assertEquals(toml.default_model, "kimi-code/kimi-for-coding");
      } finally {
        await kc.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 11): Enter during a turn queues for after it, Ctrl-S steers into it (each shown); Ctrl-E shows a cut approval preview whole",
  opts,
  () =>
    withSandbox(async (sb) => {
      const fifo = `${sb.root}/go`;
      const big = Array.from({ length: 60 }, (_, i) => `row ${i + 1}`).join("\n") + "\n";
      const config = await sb.scriptedConfig([
        toolCallLine("c1", "Shell", { command: `while [ ! -e ${fifo} ]; do sleep 0.05; done` }),
        "text: first turn done.",
        "text: queued one answered.",
      ]);
      const t = await TmuxKimi.start(sb, ["--config-file", config, "--yolo"], { height: 60 });
      try {
        await t.waitFor(promptReady);
        await t.type("start");
        await t.keys("Enter");
        // the turn is running (its Shell call shown) and the status line says what keys do now
        // (wait for both: the status line is drawn a moment after the tool line)
        await t.waitFor((x) =>
          x.includes("Using Shell") &&
          x.split("\n").at(-1)!.includes("enter: queue · ctrl-s: steer")
        );
        await t.type("queued one");
        await t.keys("Enter");
        await t.waitFor("↳ queued one (queued for after this turn)");
        await t.type("steered one");
        await t.keys("C-s");
        await t.waitFor("↳ steered one (sent after the current step)");
        await Deno.writeTextFile(fifo, "");
        const s = await t.waitFor((x) => x.includes("queued one answered.") && promptReady(x));
        const lines = s.split("\n");
        const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
        // the steer reached the first turn; the queued message ran as the next turn
        assert(at(/^✨ steered one$/) < at(/first turn done\./), s);
        assert(at(/first turn done\./) < at(/^✨ queued one$/), s);
        assert(at(/^✨ queued one$/) < at(/queued one answered\./), s);
      } finally {
        await t.close();
      }
      // Ctrl-E at an approval whose diff is cut shows it whole
      const config2 = await sb.scriptedConfig([
        toolCallLine("w1", "WriteFile", { path: "big.txt", content: big }),
        "text: wrote it.",
      ]);
      const t2 = await TmuxKimi.start(sb, ["--config-file", config2], { height: 100 });
      try {
        await t2.waitFor(promptReady);
        await t2.type("write it");
        await t2.keys("Enter");
        let s = await t2.waitFor("Allow this action?");
        assertStringIncludes(s, "… (diff truncated)");
        assertStringIncludes(s, "Ctrl-E show all");
        assert(!s.includes("+ row 60"), s);
        await t2.keys("C-e");
        s = await t2.waitFor("+ row 60");
        await t2.keys("Enter");
        await t2.waitFor((x) => x.includes("wrote it.") && promptReady(x));
      } finally {
        await t2.close();
      }
    }),
);

Deno.test(
  "shell (issue 32 item 12): /changelog shows recent versions, /editor <command> saves default_editor, /sessions Ctrl-A shows every work dir",
  opts,
  () =>
    withSandbox(async (sb) => {
      const other = `${sb.root}/other-project`;
      await Deno.mkdir(other);
      const config = await sb.scriptedConfig(["text: elsewhere done.", "text: here done."]);
      const elsewhere = await sb.run(["--config-file", config, "--print", "-p", "far away task"], {
        cwd: other,
      });
      assertEquals(elsewhere.code, 0, elsewhere.stderr);
      const here = await sb.run(["--config-file", config, "--print", "-p", "local task"]);
      assertEquals(here.code, 0, here.stderr);
      const t = await TmuxKimi.start(sb, ["--config-file", config], { height: 60 });
      try {
        await t.waitFor(promptReady);
        await t.type("/changelog");
        await t.keys("Enter");
        let s = await t.waitFor((x) => x.includes("kimi 1.46.0") && promptReady(x));
        assertStringIncludes(s, "What's new in kimi 1.49.0");
        await t.type("/editor nano -w");
        await t.keys("Enter");
        await t.waitFor((x) => x.includes("Editor set to `nano -w` (saved as default_editor in"));
        assertEquals(JSON.parse(await Deno.readTextFile(config)).default_editor, "nano -w");
        await t.type("/sessions");
        await t.keys("Enter");
        s = await t.waitFor("Ctrl-A: all work dirs");
        assert(!s.includes("far away task"), s);
        await t.keys("C-a");
        s = await t.waitFor("Resume a session (all work dirs)");
        assertStringIncludes(s, "far away task");
        assertStringIncludes(s, other);
        const line = s.split("\n").find((l) => l.includes("far away task"))!;
        await t.type(/(\d)\./.exec(line)![1]);
        await t.waitFor((x) => x.includes(`That session belongs to ${other}.`) && promptReady(x));
      } finally {
        await t.close();
      }
    }),
);
