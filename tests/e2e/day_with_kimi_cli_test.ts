/**
 * End-to-end tests of the CLI, print and wire front ends for issue 32 ("A day with kimi"):
 * `main.ts` runs as a user or client would, against the scripted provider or the mock
 * OpenAI-compatible server.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox, toolCallLine } from "../helpers/kimi_process.ts";
import { spawnWire, type WireLine } from "../helpers/wire_process.ts";
import { spawnAcp } from "../helpers/acp_client.ts";
import * as acp from "@agentclientprotocol/sdk";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { startMockKimiCode } from "../helpers/mock_kimi_code.ts";
import { SOUL_COMMANDS } from "../../lib/soul/commands/mod.ts";
import { parse as parseToml } from "smol-toml";
import { SHELL_COMMANDS } from "../../lib/ui/shell/shell_commands.ts";

const opts = { sanitizeResources: false, sanitizeOps: false };

async function withSandbox(fn: (sb: KimiSandbox) => Promise<void>): Promise<void> {
  const sb = await kimiSandbox();
  try {
    await fn(sb);
  } finally {
    await sb.cleanup();
  }
}

/** The text of the last user message of a captured chat request. */
function lastUserText(body: { messages: { role: string; content: unknown }[] }): string {
  const user = body.messages.filter((m) => m.role === "user").at(-1);
  assert(user, JSON.stringify(body));
  const content = user.content;
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[])
    .map((p) => p.text ?? "").join("");
}

Deno.test(
  "built-in help skill (issue 32 item 2): every command, flag, front end and the protocol version it states are true of this build",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        const config = await sb.openaiConfig(mock.url);
        const r = await sb.run(["--config-file", config, "--print", "-p", "/skill:kimi-cli-help"]);
        assertEquals(r.code, 0, r.stderr);
        // the skill as the model reads it
        const skill = lastUserText(
          mock.requests.find((q) => q.path.endsWith("/completions"))!.body,
        );
        assert(skill.includes("name: kimi-cli-help"), skill);

        const rootHelp = (await sb.run(["--help"])).stdout;
        const commands = [...rootHelp.split("Commands:")[1].matchAll(/^ {2}([a-z-]+)/gm)]
          .map((m) => m[1]);
        const helps = [rootHelp];
        for (const c of commands) helps.push((await sb.run([c, "--help"])).stdout);
        const allHelp = helps.join("\n");

        // subcommands: `kimi <word>` and `kimi mcp a|b|c`
        for (const m of skill.matchAll(/`kimi ([a-z][a-z-]*)((?: [a-z|-]+)?)/g)) {
          assert(commands.includes(m[1]), `kimi ${m[1]} is not a command of kimi --help`);
          if (m[2].trim()) {
            const subHelp = helps[commands.indexOf(m[1]) + 1];
            for (const sub of m[2].trim().split("|")) {
              assert(
                new RegExp(`^  ${sub}\\b`, "m").test(subHelp),
                `kimi ${m[1]} ${sub} is unknown`,
              );
            }
          }
        }
        // flags: every long flag it names exists (Deno's own flags aside)
        const denoFlags = new Set(["--no-prompt", "--allow-read", "--allow-write", "--allow-run"]);
        const flags = new Set([...skill.matchAll(/(?<![\w-])--[a-z][a-z-]+/g)].map((m) => m[0]));
        assert(flags.size > 20, [...flags].join(" "));
        for (const flag of flags) {
          if (denoFlags.has(flag)) continue;
          assert(new RegExp(`${flag}(?![\\w-])`).test(allHelp), `${flag} is not in any --help`);
        }
        for (const short of skill.matchAll(/`(-[a-zA-Z]), (--[a-z-]+)/g)) {
          assert(allHelp.includes(`${short[1]}, ${short[2]}`), `${short[0]} not in --help`);
        }
        // protocol version: what `kimi info` reports
        const info = JSON.parse((await sb.run(["info", "--json"])).stdout);
        const versions = [...skill.matchAll(/protocol version (\d+\.\d+)/g)].map((m) => m[1]);
        assert(versions.length > 0, "the skill names no protocol version");
        for (const v of versions) assertEquals(v, info.wire_protocol_version);
        // front ends: shell, print, wire, ACP and web, none said to be missing
        const frontEnds = skill.split("## Front ends")[1].split("\n## ")[0];
        const listed = [...frontEnds.matchAll(/^- ([A-Za-z ]+):/gm)].map((m) => m[1]);
        assertEquals(listed, ["Interactive shell", "Print", "Wire", "ACP", "Web"]);
        assert(
          commands.includes("acp") && commands.includes("web") && rootHelp.includes("--print") &&
            rootHelp.includes("--wire"),
        );
        assert(!/not part of this build|no interactive/i.test(skill), skill);
        // slash commands: every one it names exists, and every one that exists is named
        const known = new Set<string>();
        for (const c of [...SHELL_COMMANDS, ...SOUL_COMMANDS]) {
          for (const n of [c.name, ...c.aliases]) known.add(n);
        }
        const slashSection = skill.split("## Slash commands")[1].split("\n## ")[0];
        const named = new Set(
          [...slashSection.matchAll(/`\/([a-z-]+)/g)].map((m) => m[1])
            .filter((n) => n !== "skill" && n !== "flow"),
        );
        for (const n of named) assert(known.has(n), `/${n} is not a command of this build`);
        for (const c of [...SHELL_COMMANDS, ...SOUL_COMMANDS]) {
          assert(named.has(c.name), `/${c.name} is missing from the skill`);
        }
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "config (issue 32 item 3): the config kimi writes (first run, kimi login) never warns; unknown keys a user wrote warn once with the nearest known key",
  opts,
  () =>
    withSandbox(async (sb) => {
      // first run: kimi writes the default config.toml
      const first = await sb.run(["--print", "-p", "hi"]);
      assertEquals(first.code, 1, first.stderr);
      assert(!first.stderr.includes("Config:"), first.stderr);
      const again = await sb.run(["--print", "-p", "hi"]);
      assert(!again.stderr.includes("Config:"), again.stderr);
      // kimi login rewrites it with a provider, models and services
      const kc = await startMockKimiCode();
      try {
        const env = { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl };
        const login = await sb.run(["login", "--json"], { env });
        assertEquals(login.code, 0, login.stdout + login.stderr);
        const after = await sb.run(["--print", "-p", "hi"], { env });
        assertEquals(after.code, 0, after.stderr);
        assert(!after.stderr.includes("Config:"), after.stderr);
      } finally {
        await kc.close();
      }
      // a user's own keys
      const config = `${sb.root}/user.toml`;
      const written = await Deno.readTextFile(`${sb.shareDir}/config.toml`);
      await Deno.writeTextFile(
        config,
        `frobnicate = 3\n${written.replace(/^max_context_size = /m, "max_context = 1\n$&")}`,
      );
      const run = await sb.run(["--config-file", config, "--print", "-p", "hi"]);
      const notices = run.stderr.split("\n").filter((l) => l.startsWith("Config:"));
      assertEquals(notices, [
        "Config: `frobnicate` is not a known key and is ignored.",
        `Config: \`models.${
          /^\[models\.("?)([^\]"]+)\1\]/m.exec(written)![2]
        }.max_context\` is not a known key and is ignored (did you mean \`models.${
          /^\[models\.("?)([^\]"]+)\1\]/m.exec(written)![2]
        }.max_context_size\`?).`,
      ]);
    }),
);

Deno.test(
  "wire (issue 32 item 4): a 1.10 client gets the Notification of a finished background task, and the Notification hook fires for it",
  opts,
  () =>
    withSandbox(async (sb) => {
      const hookLog = `${sb.root}/notifications.jsonl`;
      const config = await sb.scriptedConfig([
        toolCallLine("bg1", "Shell", {
          command: "while [ ! -f go ]; do sleep 0.05; done; echo bg-output-32",
          run_in_background: true,
          description: "wait for go",
        }),
        "text: Started it.",
      ], {
        hooks: [{
          event: "Notification",
          matcher: "^task\\.",
          command: `cat >> "${hookLog}"; echo >> "${hookLog}"`,
        }],
      });
      const wire = spawnWire(sb, ["--config-file", config, "--yolo"]);
      try {
        await wire.call("init", "initialize", { protocol_version: "1.10" });
        const { response } = await wire.call("p1", "prompt", { user_input: "start it" });
        assertEquals(response.result.status, "finished");
        await Deno.writeTextFile(`${sb.workDir}/go`, "");
        let note: WireLine;
        do note = await wire.next(); while (note.params?.type !== "Notification");
        assertEquals(note.method, "event");
        const p = note.params.payload;
        assertEquals(
          [p.category, p.type, p.source_kind, p.severity, p.title],
          [
            "task",
            "task.completed",
            "background_task",
            "success",
            "Background task completed: wait for go",
          ],
        );
        const deadline = Date.now() + 60_000; // a guard against hanging, not a timing assertion
        while (!(await Deno.readTextFile(hookLog).catch(() => "")).includes("task.completed")) {
          if (Date.now() > deadline) throw new Error("the Notification hook never ran");
          await new Promise((r) => setTimeout(r, 50));
        }
        const input = JSON.parse((await Deno.readTextFile(hookLog)).trim().split("\n")[0]);
        assertEquals(
          [input.hook_event_name, input.sink, input.notification_type, input.title, input.severity],
          ["Notification", "user", "task.completed", p.title, "success"],
        );
        assert(input.body.includes("bg-output-32"), input.body);
      } finally {
        await wire.finish();
      }
    }),
);

Deno.test(
  "print (issue 32 item 4): the Notification hook fires when a goal run ends",
  opts,
  () =>
    withSandbox(async (sb) => {
      const hookLog = `${sb.root}/notifications.jsonl`;
      const config = await sb.scriptedConfig([
        "text: working on it",
        toolCallLine("c1", "UpdateGoal", { status: "complete" }),
      ], {
        hooks: [{ event: "Notification", command: `cat >> "${hookLog}"; echo >> "${hookLog}"` }],
      });
      const r = await sb.run(["--print", "--config-file", config, "-p", "/goal Say hi"]);
      assertEquals(r.code, 0, r.stdout + r.stderr);
      const inputs = (await Deno.readTextFile(hookLog)).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      assertEquals(inputs.map((i) => [i.notification_type, i.title]), [
        ["goal.achieved", "Goal achieved"],
      ]);
    }),
);

Deno.test(
  "logout (issue 32 item 6): restores the default model from before the login; with nobody logged in it says so",
  opts,
  () =>
    withSandbox(async (sb) => {
      await Deno.mkdir(sb.shareDir, { recursive: true });
      await Deno.writeTextFile(
        `${sb.shareDir}/config.toml`,
        [
          'default_model = "mine"',
          "default_thinking = false",
          "[models.mine]",
          'provider = "own"',
          'model = "own-model"',
          "max_context_size = 1000",
          "[providers.own]",
          'type = "openai_legacy"',
          'base_url = "http://127.0.0.1:9/v1"',
          'api_key = "sk-own"',
          "",
        ].join("\n"),
      );
      const readConfig = async () =>
        parseToml(await Deno.readTextFile(`${sb.shareDir}/config.toml`)) as Record<string, any>;
      const nobody = await sb.run(["logout"]);
      assertEquals([nobody.code, nobody.stdout, nobody.stderr], [
        0,
        "Not logged in to Kimi Code: there is nothing to log out.\n",
        "",
      ]);
      const kc = await startMockKimiCode();
      try {
        const env = { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl };
        assertEquals((await sb.run(["login", "--json"], { env })).code, 0);
        const during = await readConfig();
        assert(String(during.default_model).startsWith("kimi-code/"), during.default_model);
        // a second login keeps what the first replaced
        assertEquals((await sb.run(["login", "--json"], { env })).code, 0);
        const out = await sb.run(["logout"], { env });
        assertEquals([out.code, out.stdout], [
          0,
          "Logged out successfully. The default model is mine again.\n",
        ]);
        const after = await readConfig();
        assertEquals([after.default_model, after.default_thinking], ["mine", false]);
        assertEquals(Object.keys(after.models), ["mine"]);
        const again = await sb.run(["logout", "--json"], { env });
        assertEquals(JSON.parse(again.stdout), {
          type: "info",
          message: "Not logged in to Kimi Code: there is nothing to log out.",
        });
      } finally {
        await kc.close();
      }
    }),
);

Deno.test(
  "CLI (issue 32 item 13): -r in --help, near-miss subcommands with arguments, subcommand usage, --debug traceback, mcp add --force, one unknown-command wording",
  opts,
  () =>
    withSandbox(async (sb) => {
      const help = await sb.run(["--help"]);
      assert(/^ {2}-r, --resume \[id\] +Same as --session\.$/m.test(help.stdout), help.stdout);

      const usage = (cmd: string, line: string, error: string) =>
        `Usage: ${cmd} ${line}\nTry '${cmd} -h' for help.\n\nError: ${error}\n`;
      const cases: [string[], string][] = [
        [
          ["mpc", "list"],
          usage(
            "kimi",
            "[OPTIONS] COMMAND [ARGS]...",
            "No such command 'mpc'. Did you mean 'mcp'?",
          ),
        ],
        [
          ["mcp", "frob"],
          usage("kimi mcp", "[OPTIONS] COMMAND [ARGS]...", "No such command 'frob'."),
        ],
        [["info", "--bogus"], usage("kimi info", "[OPTIONS]", "No such option: --bogus")],
        [
          ["mcp", "add"],
          usage(
            "kimi mcp add",
            "[OPTIONS] NAME [TARGET_OR_COMMAND]...",
            "Missing argument 'NAME'.",
          ),
        ],
      ];
      for (const [args, stderr] of cases) {
        const r = await sb.run(args);
        assertEquals({ args, code: r.code, stderr: r.stderr }, { args, code: 2, stderr });
      }

      // --debug: the traceback the fatal error promises
      const bad = `${sb.root}/bad.toml`;
      await Deno.writeTextFile(bad, "default_model = 3\n");
      const plain = await sb.run(["--config-file", bad, "--print", "-p", "hi"]);
      assertEquals(plain.code, 1);
      assert(plain.stderr.includes("Run with --debug for full traceback"), plain.stderr);
      const debug = await sb.run(["--debug", "--config-file", bad, "--print", "-p", "hi"]);
      assertEquals(debug.code, 1);
      assert(!debug.stderr.includes("Run with --debug"), debug.stderr);
      assert(/Traceback:\n.*ConfigError.*\n\s+at /.test(debug.stderr), debug.stderr);
      const log = await Deno.readTextFile(`${sb.shareDir}/logs/kimi.log`);
      assert(/Invalid configuration: ConfigError[^\n]*\n\s+at /.test(log), log);

      // mcp add on an existing name
      const add = (...extra: string[]) =>
        sb.run(["mcp", "add", "srv", ...extra, "--", "echo", "one"]);
      assertEquals((await add()).code, 0);
      const again = await add();
      assertEquals(again.code, 1);
      assertStringIncludes(again.stderr, "MCP server 'srv' already exists in ");
      assertStringIncludes(again.stderr, "Use --force to replace it");
      const forced = await add("--force");
      assertEquals(forced.code, 0, forced.stderr);
      assertStringIncludes(forced.stdout, "Replaced MCP server 'srv' in ");

      // the agent's wording for an unknown slash command (print, wire): the shell's too
      const config = await sb.scriptedConfig([]);
      const r = await sb.run(["--config-file", config, "--print", "-p", "/compcat"]);
      assertStringIncludes(r.stdout, 'Unknown slash command "/compcat". Did you mean /compact?');
    }),
);

Deno.test(
  "review profile (issue 32 item 16): a model host the run may not reach is said at once (no retries, no base_url hint); a left-out tool names the profile; kimi info tells installed-but-not-allowed bwrap from missing",
  opts,
  () =>
    withSandbox(async (sb) => {
      const review = ["--allow-read", "--allow-env", `--allow-write=${sb.shareDir}`];
      await Deno.mkdir(sb.shareDir, { recursive: true });
      const mock = await startMockOpenAI();
      try {
        const config = await sb.openaiConfig(mock.url);
        const r = await sb.run(["--config-file", config, "--print", "-p", "hi"], {
          permissions: review,
        });
        assertEquals(r.code, 1, r.stderr);
        const host = new URL(mock.url).host;
        const out = r.stdout + r.stderr;
        assertStringIncludes(out, `This run has no network access to \`${host}\``);
        assertStringIncludes(out, "`kimi-review`");
        assert(!/retrying|base_url/.test(out), out);
        assertEquals(mock.requests.length, 0);
      } finally {
        await mock.close();
      }

      const scripted = await sb.scriptedConfig([
        toolCallLine("w1", "WriteFile", { path: "x.txt", content: "x" }),
        "text: could not write.",
      ]);
      const w = await sb.run(
        ["--config-file", scripted, "--print", "--output-format", "stream-json", "-p", "write"],
        { permissions: review, env: { KIMI_PERMISSION_PROFILE: "review" } },
      );
      assertEquals(w.code, 0, w.stderr);
      const tool = w.stdout.trim().split("\n").map((l) => JSON.parse(l))
        .find((m) => m.role === "tool");
      const text = JSON.stringify(tool.content);
      assertStringIncludes(text, "WriteFile is not available in the review profile: this run may");
      assert(!text.includes("not found"), text);

      const info = await sb.run(["info"], { permissions: review });
      const refused = info.stdout.split("\n").find((l) => l.startsWith("shell commands:"))!;
      let bwrapInstalled = false;
      for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
        if (await Deno.stat(`${dir}/bwrap`).then(() => true, () => false)) bwrapInstalled = true;
      }
      if (bwrapInstalled) {
        assert(/this run may not start \S*bwrap \(needs --allow-run=/.test(refused), refused);
        assert(!refused.includes("install"), refused);
      } else {
        assertStringIncludes(refused, "bubblewrap (bwrap) was not found (install it");
      }
    }),
);

Deno.test(
  "ACP (issue 32 item 17): no partial argument JSON in tool_call updates; a new file's diff has oldText null; session/load of an unknown id names it",
  opts,
  () =>
    withSandbox(async (sb) => {
      const mock = await startMockOpenAI();
      try {
        mock.enqueue({
          toolCalls: [{
            id: "w1",
            name: "WriteFile",
            arguments: ['{"path": "new', '.txt", "con', 'tent": "hello"}'],
          }],
        }, { text: "written." });
        const config = await sb.openaiConfig(mock.url);
        const client = spawnAcp(sb, { rootArgs: ["--config-file", config] });
        try {
          await client.initialize();
          const { sessionId: sid } = await client.newSession(sb.workDir);
          assertEquals(await client.prompt(sid, "write it"), { stopReason: "end_turn" });
          const calls = client.of(sid).filter((u) =>
            u.sessionUpdate === "tool_call" ||
            (u.sessionUpdate === "tool_call_update" && !("status" in u && u.status))
          ) as { title?: string; content?: { content?: { text?: string } }[] }[];
          assert(calls.length >= 1, JSON.stringify(client.of(sid)));
          for (const u of calls) {
            for (const c of u.content ?? []) {
              const text = c.content?.text ?? "";
              JSON.parse(text); // whole JSON or nothing
            }
          }
          const first = calls[0];
          assertEquals(first.content, []);
          assertEquals(first.title, "WriteFile");
          const permission = client.permissions[0];
          assertEquals(permission.toolCall.content, [{
            type: "diff",
            path: `${sb.workDir}/new.txt`,
            oldText: null,
            newText: "hello",
          }]);
          let err: { code?: number; message?: string } = {};
          try {
            await client.agent.request(acp.methods.agent.session.load, {
              sessionId: "no-such-id-17",
              cwd: sb.workDir,
              mcpServers: [],
            });
          } catch (e) {
            err = e as { code: number; message: string };
          }
          assertEquals(err.code, -32002);
          assertStringIncludes(err.message ?? "", "no-such-id-17");
        } finally {
          await client.finish();
        }
      } finally {
        await mock.close();
      }
    }),
);

Deno.test(
  "wire (issue 32 item 4): the Notification hook fires when a question waits for the user",
  opts,
  () =>
    withSandbox(async (sb) => {
      const hookLog = `${sb.root}/notifications.jsonl`;
      const config = await sb.scriptedConfig([
        toolCallLine("q1", "AskUserQuestion", {
          questions: [{
            question: "Which colour?",
            header: "Colour",
            options: [{ label: "Red", description: "" }, { label: "Blue", description: "" }],
          }],
        }),
        "text: noted.",
      ], {
        hooks: [{
          event: "Notification",
          matcher: "^question\\.",
          command: `cat >> "${hookLog}"; echo >> "${hookLog}"`,
        }],
      });
      const wire = spawnWire(sb, ["--config-file", config, "--yolo"]);
      try {
        await wire.call("init", "initialize", {
          protocol_version: "1.12",
          capabilities: { supports_question: true },
        });
        const turn = await wire.call("p", "prompt", { user_input: "ask me" }, (msg: WireLine) => {
          if (msg.params?.type !== "QuestionRequest") return undefined;
          return { request_id: msg.params.payload.id, answers: { "Which colour?": "Blue" } };
        });
        assertEquals(turn.response.result, { status: "finished" });
      } finally {
        await wire.finish();
      }
      const inputs = (await Deno.readTextFile(hookLog)).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      assertEquals(inputs.map((i) => [i.notification_type, i.title, i.body, i.severity]), [
        ["question.asked", "A question waits for you", "Which colour?", "info"],
      ]);
    }),
);
