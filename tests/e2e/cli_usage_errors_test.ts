import { assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";

const USAGE = "Usage: kimi [OPTIONS] COMMAND [ARGS]...\nTry 'kimi -h' for help.\n\n";

// Each usage mistake: exit 2, the usage lines, and the reference's (Click's) wording, once.
const CASES: [string[], string][] = [
  [["--config"], "Option '--config' requires an argument."],
  [["--bogus"], "No such option: --bogus"],
  [["--debgu"], "No such option: --debgu Did you mean --debug?"],
  [
    ["--max-steps-per-turn", "0"],
    "Invalid value for '--max-steps-per-turn': 0 is not in the range x>=1.",
  ],
  [
    ["--max-steps-per-turn", "x"],
    "Invalid value for '--max-steps-per-turn': 'x' is not a valid integer.",
  ],
  [
    ["--print", "--input-format", "xml"],
    "Invalid value for '--input-format': 'xml' is not one of 'text', 'stream-json'.",
  ],
  [["--print", "--wire"], "Invalid value for --print: Cannot combine --print, --wire."],
  [
    ["--quiet", "--wire"],
    "Invalid value for --quiet: Quiet mode cannot be combined with ACP or Wire UI",
  ],
  [
    ["--quiet", "--output-format", "stream-json"],
    "Invalid value for --quiet: Quiet mode implies `--output-format text`",
  ],
  [["--print", "-p", "  "], "Invalid value for --prompt: Prompt cannot be empty"],
  [["--config", " "], "Invalid value for --config: Config cannot be empty"],
  [
    ["--output-format", "text"],
    "Invalid value for --output-format: Output format is only supported for print UI",
  ],
  [
    ["--print", "-S"],
    "Invalid value for --session: --session without a session ID is only supported for shell UI",
  ],
  [
    ["--config", "{bad", "--print", "-p", "hi"],
    "Invalid value for --config: Invalid configuration text: Expecting property name enclosed " +
    "in double quotes: line 1 column 2 (char 1); illegal character in key at line 1, column 1",
  ],
];

Deno.test("CLI usage errors exit 2 with the reference's wording", async () => {
  const sb = await kimiSandbox();
  try {
    for (const [args, message] of CASES) {
      const r = await sb.run(args);
      assertEquals({ args, code: r.code, stderr: r.stderr }, {
        args,
        code: 2,
        stderr: `${USAGE}Error: ${message}\n`,
      });
      assertEquals(r.stdout, "");
    }
  } finally {
    await sb.cleanup();
  }
});

Deno.test("a bad config file is a fatal error: logged, 'See logs' line, exit 1", async () => {
  const sb = await kimiSandbox();
  try {
    const file = `${sb.root}/bad.toml`;
    await Deno.writeTextFile(file, 'default_model = "nope"\n');
    const r = await sb.run(["--config-file", file, "--print", "-p", "hi"]);
    assertEquals(r.code, 1);
    assertEquals(
      r.stderr,
      `Invalid configuration file ${file}: Default model nope not found in models\n` +
        `See logs: ${sb.shareDir}/logs/kimi.log\n` +
        "Run with --debug for full traceback, or run kimi export to share diagnostics.\n",
    );
    const logText = await Deno.readTextFile(`${sb.shareDir}/logs/kimi.log`);
    assertEquals(
      logText.includes(`Invalid configuration: Invalid configuration file ${file}`),
      true,
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("print mode without a model says 'LLM not set' (the reference's text) on stdout and exits 1", async () => {
  const sb = await kimiSandbox();
  try {
    const r = await sb.run(["--print", "-p", "hi", "--config", "{}"], {
      env: { KIMI_BASE_URL: "", KIMI_MODEL_NAME: "" },
    });
    assertEquals(r.code, 1);
    assertEquals(r.stdout.split("\n").filter(Boolean).at(-1), "LLM not set");
  } finally {
    await sb.cleanup();
  }
});

Deno.test("a config key this build does not act on is reported once, on stderr", async () => {
  const sb = await kimiSandbox();
  try {
    const config = await sb.scriptedConfig(["text: hi"], {
      notifications: { claim_stale_after_ms: 20000 },
    });
    const r = await sb.run(["--print", "--final-message-only", "--config-file", config, "-p", "x"]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "hi\n");
    const notice = "Config: `notifications.claim_stale_after_ms` is not supported by this build";
    assertEquals(r.stderr.split(notice).length - 1, 1, r.stderr);
    const plain = await sb.scriptedConfig(["text: hi"]);
    const r2 = await sb.run(["--print", "--final-message-only", "--config-file", plain, "-p", "x"]);
    assertEquals(r2.stderr.includes("not supported by this build"), false, r2.stderr);
  } finally {
    await sb.cleanup();
  }
});

Deno.test("--continue with no earlier session is a usage error of --continue", async () => {
  const sb = await kimiSandbox();
  try {
    const r = await sb.run(["--print", "--continue", "-p", "hi"]);
    assertEquals(r.code, 2);
    assertEquals(
      r.stderr,
      `${USAGE}Error: Invalid value for --continue: No previous session found for the working directory\n`,
    );
  } finally {
    await sb.cleanup();
  }
});
