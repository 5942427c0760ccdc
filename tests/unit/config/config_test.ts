import { exists } from "../../../lib/fs/exists.ts";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import {
  ConfigError,
  defaultConfigPath,
  loadConfig,
  loadConfigFromText,
  saveConfig,
  serializeConfig,
} from "../../../lib/config/load.ts";
import { type Config, defaultConfig } from "../../../lib/config/schema.ts";
import { ensureShareDir, shareDir } from "../../../lib/config/share_dir.ts";
import { describeJsonSyntaxError } from "../../../lib/config/json_syntax.ts";
import { assert, assertEquals, assertStringIncludes } from "../../helpers/assert.ts";

const SECRET = "sk-super-secret-value-123";

/** The §2.2 defaults, written out in full (the `test_default_config_dump` golden). */
const DEFAULT_DUMP = {
  default_model: "",
  default_thinking: false,
  default_yolo: false,
  skip_afk_prompt_injection: false,
  default_plan_mode: false,
  default_editor: "",
  theme: "dark",
  show_thinking_stream: true,
  merge_all_available_skills: true,
  extra_skill_dirs: [],
  telemetry: true,
  hooks: [],
  models: {},
  providers: {},
  loop_control: {
    max_steps_per_turn: 1000,
    max_retries_per_step: 3,
    max_ralph_iterations: 0,
    reserved_context_size: 50000,
    compaction_trigger_ratio: 0.85,
  },
  background: {
    max_running_tasks: 4,
    read_max_bytes: 30000,
    notification_tail_lines: 20,
    notification_tail_chars: 3000,
    wait_poll_interval_ms: 500,
    worker_heartbeat_interval_ms: 5000,
    worker_stale_after_ms: 15000,
    kill_grace_period_ms: 2000,
    keep_alive_on_exit: false,
    agent_task_timeout_s: 900,
    print_wait_ceiling_s: 3600,
  },
  notifications: { claim_stale_after_ms: 15000, terminal_bell: true, desktop: true },
  services: { moonshot_search: null, moonshot_fetch: null },
  mcp: { client: { tool_call_timeout_ms: 60000, connect_timeout_ms: 180000 } },
  model_stream: {
    max_text_bytes: 0,
    max_thinking_bytes: 0,
    max_tool_arguments_bytes: 0,
    stall_timeout_s: 120,
  },
  sandbox: { require_shell_confinement: true },
  swarm: { max_concurrency: 8 },
};

const FULL_CONFIG = {
  default_model: "k2",
  models: {
    k2: {
      provider: "moon",
      model: "kimi-k2",
      max_context_size: 262144,
      capabilities: ["image_in", "thinking"],
      display_name: "Kimi K2",
    },
  },
  providers: {
    moon: {
      type: "kimi",
      base_url: "https://api.example.test/v1",
      api_key: SECRET,
      custom_headers: { "X-Test": "1" },
      oauth: { key: "oauth/kimi-code" },
    },
  },
  hooks: [{ event: "PreToolUse", command: "echo hi", matcher: "Shell" }],
};

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "kimi_config_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function configError(fn: () => Promise<unknown> | unknown): Promise<ConfigError> {
  try {
    await fn();
  } catch (err) {
    assert(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err;
  }
  throw new Error("expected a ConfigError");
}

Deno.test("default config dump equals the §2.2 defaults", () => {
  assertEquals(defaultConfig(), DEFAULT_DUMP);
  assertEquals(loadConfigFromText("{}"), DEFAULT_DUMP);
  assertEquals(loadConfigFromText('default_model = ""\n'), DEFAULT_DUMP);
});

Deno.test("share dir: KIMI_SHARE_DIR, else ~/.kimi; created on demand", async () => {
  assertEquals(
    shareDir((k) => ({ HOME: "/home/u" } as Record<string, string>)[k]),
    "/home/u/.kimi",
  );
  assertEquals(
    shareDir((k) => ({ HOME: "/home/u", KIMI_SHARE_DIR: "/x/share" } as Record<string, string>)[k]),
    "/x/share",
  );
  assertEquals(
    shareDir((k) => ({ HOME: "/home/u", KIMI_SHARE_DIR: "~/alt" } as Record<string, string>)[k]),
    "/home/u/alt",
  );
  const err = await configError(() => shareDir(() => undefined));
  assertStringIncludes(err.message, "KIMI_SHARE_DIR");
  await withTempDir(async (dir) => {
    const target = join(dir, "a", "b");
    const got = await ensureShareDir((k) => (k === "KIMI_SHARE_DIR" ? target : undefined));
    assertEquals(got, target);
    assert((await Deno.stat(target)).isDirectory);
  });
});

Deno.test("first run writes the default config.toml", async () => {
  await withTempDir(async (share) => {
    const { config, path } = await loadConfig({ shareDir: share });
    assertEquals(path, join(share, "config.toml"));
    assertEquals(config, DEFAULT_DUMP);
    const text = await Deno.readTextFile(join(share, "config.toml"));
    assertStringIncludes(text, "[loop_control]\nmax_steps_per_turn = 1000\n");
    // nulls are omitted, everything else round-trips
    const parsed = plain(parseToml(text));
    assertEquals(parsed.services, {});
    assertEquals(loadConfigFromText(text), DEFAULT_DUMP);
    // second load reads the file back
    assertEquals((await loadConfig({ shareDir: share })).config, DEFAULT_DUMP);
  });
});

Deno.test("legacy config.json is migrated once to TOML and kept as .bak", async () => {
  await withTempDir(async (share) => {
    await Deno.writeTextFile(join(share, "config.json"), JSON.stringify(FULL_CONFIG));
    const { config, path } = await loadConfig({ shareDir: share });
    assertEquals(path, defaultConfigPath(share));
    assertEquals(config.default_model, "k2");
    assertEquals(config.providers.moon.api_key, SECRET);
    assert(!(await exists(join(share, "config.json"))));
    assert(await exists(join(share, "config.json.bak")));
    const toml = plain(parseToml(await Deno.readTextFile(path!)));
    assertEquals((toml.models as Record<string, unknown>).k2, FULL_CONFIG.models.k2);
  });
});

Deno.test("--config-file: .json parsed as JSON, other extensions as TOML", async () => {
  await withTempDir(async (dir) => {
    const jsonFile = join(dir, "custom.json");
    await Deno.writeTextFile(jsonFile, JSON.stringify(FULL_CONFIG));
    const fromJson = await loadConfig({ shareDir: dir, configFile: jsonFile });
    assertEquals(fromJson.path, jsonFile);
    assertEquals(fromJson.config.models.k2.display_name, "Kimi K2");
    assertEquals(fromJson.config.providers.moon.oauth, { storage: "file", key: "oauth/kimi-code" });
    assertEquals(fromJson.config.hooks, [
      { event: "PreToolUse", command: "echo hi", matcher: "Shell", timeout: 30 },
    ]);

    const tomlFile = join(dir, "custom.conf");
    await Deno.writeTextFile(
      tomlFile,
      [
        'default_model = "m"',
        "[models.m]",
        'provider = "p"',
        'model = "gpt-x"',
        "max_context_size = 128000",
        "[providers.p]",
        'type = "openai_legacy"',
        'base_url = "http://127.0.0.1:1"',
        'api_key = ""',
        'reasoning_key = ""',
        "[loop_control]",
        "max_steps_per_turn = 42",
      ].join("\n"),
    );
    const fromToml = await loadConfig({ shareDir: dir, configFile: tomlFile });
    assertEquals(fromToml.config.models.m.model, "gpt-x");
    assertEquals(fromToml.config.providers.p.reasoning_key, "");
    assertEquals(fromToml.config.loop_control.max_steps_per_turn, 42);
    // the share dir's default file was not touched
    assert(!(await exists(join(dir, "config.toml"))));
  });
});

Deno.test("--config-file that does not exist is created with defaults", async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "sub", "new.json");
    const { config } = await loadConfig({ shareDir: dir, configFile: file });
    assertEquals(config, DEFAULT_DUMP);
    assertEquals(JSON.parse(await Deno.readTextFile(file)).loop_control.max_steps_per_turn, 1000);
  });
});

Deno.test("--config text: JSON first, then TOML", async () => {
  const json = loadConfigFromText(JSON.stringify(FULL_CONFIG));
  assertEquals(json.default_model, "k2");
  const toml = loadConfigFromText(
    "default_yolo = true\n[loop_control]\nmax_retries_per_step = 5\n",
  );
  assertEquals(toml.default_yolo, true);
  assertEquals(toml.loop_control.max_retries_per_step, 5);
  const loaded = await loadConfig({ shareDir: "/nonexistent", configText: '{"theme": "light"}' });
  assertEquals(loaded.path, null);
  assertEquals(loaded.config.theme, "light");
});

Deno.test("--config text errors are exact", async () => {
  assertEquals((await configError(() => loadConfigFromText(""))).message, "Config cannot be empty");
  assertEquals(
    (await configError(() => loadConfigFromText("  \n "))).message,
    "Config cannot be empty",
  );
  assertEquals(
    (await configError(() => loadConfigFromText("not valid {"))).message,
    "Invalid configuration text: Expecting value: line 1 column 1 (char 0); " +
      "illegal character in key at line 1, column 5",
  );
  assertEquals(
    (await configError(() => loadConfigFromText('{"loop_control": {"max_ralph_iterations": -2}}')))
      .message,
    "Invalid configuration text: loop_control.max_ralph_iterations: " +
      "must be greater than or equal to -1",
  );
  await configError(() =>
    loadConfig({ shareDir: "/x", configText: "{}", configFile: "/x/config.toml" })
  );
});

Deno.test("file errors: invalid JSON / TOML / validation, exact prefixes", async () => {
  await withTempDir(async (dir) => {
    const badJson = join(dir, "bad.json");
    await Deno.writeTextFile(badJson, `{"providers": {"p": {"api_key": ${SECRET}}}}`);
    const e1 = await configError(() => loadConfig({ shareDir: dir, configFile: badJson }));
    assertEquals(
      e1.message,
      `Invalid JSON in configuration file ${badJson}: Expecting value: line 1 column 33 (char 32)`,
    );

    const badToml = join(dir, "bad.toml");
    await Deno.writeTextFile(badToml, `[providers.p]\napi_key = ${SECRET}\n`);
    const e2 = await configError(() => loadConfig({ shareDir: dir, configFile: badToml }));
    assertEquals(
      e2.message,
      `Invalid TOML in configuration file ${badToml}: invalid value at line 2, column 11`,
    );

    const invalid = join(dir, "invalid.toml");
    await Deno.writeTextFile(
      invalid,
      `[providers.p]\ntype = "nope"\nbase_url = ""\napi_key = "${SECRET}"\n` +
        `[loop_control]\ncompaction_trigger_ratio = 0.3\nreserved_context_size = 500\n`,
    );
    const e3 = await configError(() => loadConfig({ shareDir: dir, configFile: invalid }));
    assertEquals(
      e3.message,
      `Invalid configuration file ${invalid}: providers.p.type: must be one of "kimi", ` +
        `"openai_legacy", "openai_responses", "anthropic", "google_genai", "gemini", ` +
        `"vertexai", "_echo", "_scripted_echo", "_chaos"; ` +
        "loop_control.reserved_context_size: must be greater than or equal to 1000; " +
        "loop_control.compaction_trigger_ratio: must be greater than or equal to 0.5",
    );

    const wrongType = join(dir, "wrong.json");
    await Deno.writeTextFile(
      wrongType,
      JSON.stringify({ providers: { p: { type: "kimi", base_url: "u", api_key: [SECRET] } } }),
    );
    const e4 = await configError(() => loadConfig({ shareDir: dir, configFile: wrongType }));
    assertEquals(
      e4.message,
      `Invalid configuration file ${wrongType}: providers.p.api_key: expected a string, got a list`,
    );

    for (const err of [e1, e2, e3, e4]) {
      assert(!err.message.includes(SECRET), `secret leaked: ${err.message}`);
    }
  });
});

Deno.test("secrets never appear in --config text errors", async () => {
  const texts = [
    `{"providers": {"p": {"type": "kimi", "base_url": "", "api_key": ${SECRET}}}}`,
    `{"providers": {"p": {"type": "kimi", "base_url": "", "api_key": "${SECRET}"}}}, "x"`,
    `{"providers": {"p": {"type": "${SECRET}", "base_url": "", "api_key": "${SECRET}"}}}`,
    `[providers.p]\napi_key = "${SECRET}\n`,
    JSON.stringify({ providers: { p: { type: "kimi", base_url: 1, api_key: { v: SECRET } } } }),
  ];
  for (const text of texts) {
    const err = await configError(() => loadConfigFromText(text));
    assert(!err.message.includes(SECRET), `secret leaked: ${err.message}`);
    assert(!err.message.includes("super-secret"), `secret leaked: ${err.message}`);
  }
});

Deno.test("cross-field validation messages", async () => {
  const e1 = await configError(() => loadConfigFromText('{"default_model": "missing"}'));
  assertEquals(e1.message, "Invalid configuration text: Default model missing not found in models");
  const e2 = await configError(() =>
    loadConfigFromText(
      JSON.stringify({ models: { a: { provider: "ghost", model: "x", max_context_size: 1 } } }),
    )
  );
  assertEquals(e2.message, "Invalid configuration text: Provider ghost not found in providers");
  await withTempDir(async (dir) => {
    const file = join(dir, "c.json");
    await Deno.writeTextFile(file, '{"default_model": "nope"}');
    const e3 = await configError(() => loadConfig({ shareDir: dir, configFile: file }));
    assertEquals(
      e3.message,
      `Invalid configuration file ${file}: Default model nope not found in models`,
    );
  });
});

Deno.test("loop_control alias max_steps_per_run and bounds", async () => {
  assertEquals(
    loadConfigFromText('{"loop_control": {"max_steps_per_run": 7}}').loop_control
      .max_steps_per_turn,
    7,
  );
  // the canonical key wins over the alias
  assertEquals(
    loadConfigFromText('{"loop_control": {"max_steps_per_turn": 3, "max_steps_per_run": 9}}')
      .loop_control.max_steps_per_turn,
    3,
  );
  const cfg = loadConfigFromText("[loop_control]\nmax_steps_per_run = 11\n");
  assertEquals(cfg.loop_control.max_steps_per_turn, 11);
  assert(!("max_steps_per_run" in cfg.loop_control));
  const err = await configError(() =>
    loadConfigFromText('{"loop_control": {"max_steps_per_run": 0}}')
  );
  assertEquals(
    err.message,
    "Invalid configuration text: loop_control.max_steps_per_turn: " +
      "must be greater than or equal to 1",
  );
  const ratio = await configError(() =>
    loadConfigFromText('{"loop_control": {"compaction_trigger_ratio": 1.0}}')
  );
  assertStringIncludes(
    ratio.message,
    "compaction_trigger_ratio: must be less than or equal to 0.99",
  );
});

Deno.test("hooks bounds and background bounds", async () => {
  const hook = await configError(() =>
    loadConfigFromText('{"hooks": [{"event": "Stop", "command": "x", "timeout": 601}]}')
  );
  assertEquals(
    hook.message,
    "Invalid configuration text: hooks.0.timeout: must be less than or equal to 600",
  );
  const event = await configError(() =>
    loadConfigFromText('{"hooks": [{"event": "Nope", "command": "x"}]}')
  );
  assertStringIncludes(event.message, "hooks.0.event: must be one of");
  const bg = await configError(() =>
    loadConfigFromText('{"background": {"agent_task_timeout_s": 59}}')
  );
  assertStringIncludes(
    bg.message,
    "background.agent_task_timeout_s: must be greater than or equal to 60",
  );
});

Deno.test("legacy and unknown keys are accepted and dropped", () => {
  const cfg = loadConfigFromText('{"skip_yolo_prompt_injection": true, "whatever": 1}');
  assertEquals(cfg, DEFAULT_DUMP);
});

Deno.test("save/load round trip (TOML and JSON), nulls omitted, mode 0600", async () => {
  await withTempDir(async (dir) => {
    const original: Config = loadConfigFromText(JSON.stringify(FULL_CONFIG));
    for (const name of ["rt.toml", "rt.json"]) {
      const file = join(dir, name);
      await saveConfig(original, file);
      const { config } = await loadConfig({ shareDir: dir, configFile: file });
      assertEquals(config, original);
      const text = await Deno.readTextFile(file);
      assert(!text.includes("null"), "nulls must be omitted");
      assertStringIncludes(text, SECRET); // secrets are saved in clear text
      if (Deno.build.os !== "windows") assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600);
    }
    assertEquals(
      serializeConfig(original, "json"),
      JSON.stringify(JSON.parse(serializeConfig(original, "json")), null, 2),
    );
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assertEquals(names, ["rt.json", "rt.toml"]); // no temp files left behind
  });
});

Deno.test("JSON syntax descriptions follow Python's json module", () => {
  assertEquals(describeJsonSyntaxError(""), "Expecting value: line 1 column 1 (char 0)");
  assertEquals(
    describeJsonSyntaxError('{"a" 1}'),
    "Expecting ':' delimiter: line 1 column 6 (char 5)",
  );
  assertEquals(
    describeJsonSyntaxError("{a: 1}"),
    "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
  );
  assertEquals(
    describeJsonSyntaxError('{"a": 1\n "b": 2}'),
    "Expecting ',' delimiter: line 2 column 2 (char 9)",
  );
  assertEquals(describeJsonSyntaxError('{"a": 1} x'), "Extra data: line 1 column 10 (char 9)");
  assertEquals(
    describeJsonSyntaxError('["abc'),
    "Unterminated string starting at: line 1 column 2 (char 1)",
  );
  assertEquals(describeJsonSyntaxError("[1,]"), "Expecting value: line 1 column 4 (char 3)");
});

function plain(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value));
}
