/**
 * The CLI's messages (issue 19): usage errors in one style with the fix, print mode without a
 * prompt, the shell refusing a non-terminal before starting anything, "LLM is not set" saying
 * why, and OPENAI_BASE_URL + OPENAI_API_KEY alone selecting a model.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { DENO_V8_FLAGS_ARG } from "../../lib/runtime_flags.ts";

const USAGE = "Usage: kimi [OPTIONS] COMMAND [ARGS]...\nTry 'kimi -h' for help.\n\nError: ";

Deno.test("cli: stray words, a mistyped subcommand and an unknown option get one error style", async () => {
  const sb = await kimiSandbox();
  try {
    const words = await sb.run(["fix the bug"]);
    assertEquals(words.code, 2);
    assertEquals(
      words.stderr,
      USAGE + `Got unexpected extra argument (fix the bug). To give it to the agent as a prompt, ` +
        `run: kimi -p "fix the bug" (or start kimi and type it; add --print to run without the ` +
        "shell).\n",
    );
    const typo = await sb.run(["exprot"]);
    assertEquals(typo.code, 2);
    assertEquals(typo.stderr, USAGE + "No such command 'exprot'. Did you mean 'export'?\n");
    const opt = await sb.run(["--yolp"]);
    assertEquals(opt.code, 2);
    assertEquals(opt.stderr, USAGE + "No such option: --yolp Did you mean --yolo?\n");
    const help = await sb.run(["--help"]);
    assertStringIncludes(help.stdout.replace(/\s+/g, " "), "approves every action");
    // every option listed is one a user may pass, described in a sentence (no internal options)
    const optionLines = help.stdout.split("\n").filter((l) => /^ {2}-/.test(l));
    assert(optionLines.some((l) => l.startsWith("  -V, --version ")), help.stdout);
    for (const line of optionLines) assert(!/internal|output the version/.test(line), line);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("cli: --print with an empty piped stdin runs nothing and exits 0 silently (reference §11)", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: never"]);
    for (const format of [[], ["--output-format", "text"]]) {
      const r = await sb.run(["--print", ...format, "--config-file", config], { stdin: "  \n" });
      assertEquals([r.code, r.stdout, r.stderr], [0, "", ""], format.join(" "));
    }
    assertEquals(await sb.sessionDirs(), []);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("cli: the shell refuses a non-terminal before starting MCP servers or a session", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig([]);
    const mcp = JSON.stringify({ mcpServers: { broken: { url: "http://127.0.0.1:9/mcp" } } });
    const r = await sb.run(["--config-file", config, "--mcp-config", mcp]);
    assertEquals(r.code, 1);
    assertStringIncludes(r.stderr, "standard input is not a terminal");
    assert(!/broken|connect/i.test(r.stderr), r.stderr);
    assertEquals(await sb.sessionDirs(), []);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("cli: LLM is not set says why (unknown alias, half an env pair) and the fix", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: x"]);
    const r = await sb.run(["--print", "--config-file", config, "--model", "nope", "-p", "hi"]);
    assertEquals(r.code, 1);
    assertStringIncludes(r.stdout, "LLM not set");
    assertStringIncludes(r.stderr, "--model nope names no model in ");
    assertStringIncludes(r.stderr, "the models there are: scripted");
    const env = await sb.run(["--print", "-p", "hi"], {
      env: { KIMI_BASE_URL: "http://127.0.0.1:9/v1" },
    });
    assertEquals(env.code, 1);
    assertStringIncludes(env.stderr, "KIMI_BASE_URL is set but KIMI_MODEL_NAME is not");
    assertStringIncludes(env.stderr, "config.toml");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("cli: OPENAI_BASE_URL and OPENAI_API_KEY alone pick the server's model; a 401 points to /login", async () => {
  const mock = await startMockOpenAI({ models: ["local-model-7b"] });
  const sb = await kimiSandbox();
  try {
    mock.enqueue({ text: "hello from the local server" });
    const env = { OPENAI_BASE_URL: mock.url, OPENAI_API_KEY: "sk-local" };
    const r = await sb.run(["--print", "--final-message-only", "-p", "hi"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(r.stdout, "hello from the local server\n");
    const chat = mock.requests.find((q) => q.path === "/v1/chat/completions");
    assertEquals(chat?.body.model, "local-model-7b");
    mock.enqueue({ status: 401, error: "bad key" });
    const denied = await sb.run(["--print", "--final-message-only", "-p", "hi"], { env });
    assertEquals(denied.code, 1);
    assertStringIncludes(denied.stderr, "Run /login");
  } finally {
    await sb.cleanup();
    await mock.close();
  }
});

Deno.test("launch: `deno task review --dry-run` prints the command (dry-run after the profile)", async () => {
  const launch = new URL("../../scripts/launch.ts", import.meta.url).pathname;
  const sb = await kimiSandbox();
  try {
    for (const args of [["review", "--dry-run"], ["--dry-run", "review"]]) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--no-prompt", "--allow-read", "--allow-env", "--allow-run", launch, ...args],
        env: { KIMI_SHARE_DIR: sb.shareDir },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      assert(stdout.startsWith(`deno run --no-prompt ${DENO_V8_FLAGS_ARG} `), stdout);
      assertStringIncludes(stdout, " --allow-read --allow-env ");
      assertStringIncludes(stdout, `--allow-write=${sb.shareDir}`);
      assert(!stdout.includes("--dry-run"), stdout);
    }
  } finally {
    await sb.cleanup();
  }
});

Deno.test("cli: --session with an id from another work dir names the command that resumes it", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: first"]);
    const other = `${sb.root}/other project`;
    await Deno.mkdir(other);
    const first = await sb.run([
      "--print",
      "--config-file",
      config,
      "--work-dir",
      other,
      "--session",
      "shared-id-7",
      "-p",
      "hi",
    ]);
    assertEquals(first.code, 0, first.stderr);
    assertStringIncludes(
      first.stderr,
      `To resume this session: kimi --work-dir '${other}' --session shared-id-7`,
    );
    const here = await sb.run([
      "--print",
      "--config-file",
      config,
      "--session",
      "shared-id-7",
      "-p",
      "hi",
    ]);
    assertEquals(here.code, 0, here.stderr);
    assertStringIncludes(
      here.stderr,
      `kimi: no session shared-id-7 in ${sb.workDir}: starting a new session with that ID.\n` +
        `Session shared-id-7 is in ${other}: resume it with ` +
        `kimi --work-dir '${other}' --session shared-id-7`,
    );
  } finally {
    await sb.cleanup();
  }
});
