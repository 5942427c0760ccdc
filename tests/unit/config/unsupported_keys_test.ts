import { assertEquals } from "../../helpers/assert.ts";
import { unsupportedConfigNotices } from "../../../lib/config/unsupported.ts";
import { nearestKey, unknownConfigKeyNotices } from "../../../lib/config/unknown_keys.ts";
import { ConfigSchema, defaultConfig } from "../../../lib/config/schema.ts";
import { serializeConfig } from "../../../lib/config/load.ts";
import { parse as parseToml } from "smol-toml";

Deno.test("unsupported config keys: each one set off its default is named with what happens instead", () => {
  assertEquals(unsupportedConfigNotices({}), []);
  assertEquals(unsupportedConfigNotices({ telemetry: false, notifications: {} }), []);
  // the defaults, as kimi writes them, ask for nothing
  assertEquals(
    unsupportedConfigNotices({ telemetry: true, notifications: { claim_stale_after_ms: 15000 } }),
    [],
  );
  assertEquals(
    unsupportedConfigNotices({ telemetry: true, notifications: { claim_stale_after_ms: 5000 } }),
    [
      "Config: `notifications.claim_stale_after_ms` is not supported by this build and is " +
      "ignored: notifications are delivered in memory by the kimi process that owns the " +
      "session, so there are no stale claims to take over.",
    ],
  );
  assertEquals(unsupportedConfigNotices("not an object"), []);
});

Deno.test("a config kimi writes itself (defaults and a full setup) has no unknown or unsupported keys", () => {
  const config = defaultConfig();
  config.providers.p = {
    type: "kimi",
    base_url: "https://x",
    api_key: "k",
    env: null,
    custom_headers: { a: "b" },
    reasoning_key: null,
    oauth: { storage: "file", key: "oauth/kimi-code" },
  };
  config.models.m = {
    provider: "p",
    model: "m",
    max_context_size: 1000,
    capabilities: ["thinking"],
    display_name: "M",
  };
  config.hooks.push({ event: "Stop", command: "true", matcher: "", timeout: 30 });
  for (const format of ["toml", "json"] as const) {
    const text = serializeConfig(config, format);
    const data = format === "json" ? JSON.parse(text) : parseToml(text);
    assertEquals(unknownConfigKeyNotices(ConfigSchema, data), [], format);
    assertEquals(unsupportedConfigNotices(data), [], format);
  }
});

Deno.test("unknown config keys are named with their path and the nearest known key", () => {
  const data = {
    frobnicate: 3,
    skip_yolo_prompt_injection: true, // legacy, dropped on purpose
    default_modle: "m",
    models: { m: { provider: "p", model: "x", max_context: 10, capabilites: [] } },
    providers: { p: { type: "kimi", base_url: "", api_key: "", envv: {} } },
    loop_control: { max_steps_per_run: 3, max_retries: 2 },
    hooks: [{ event: "Stop", command: "true", timeot: 3 }],
    mcp: { client: { tool_call_timeout: 1 } },
    permission: { rules: [{ anything: 1 }] },
  };
  assertEquals(unknownConfigKeyNotices(ConfigSchema, data), [
    "Config: `frobnicate` is not a known key and is ignored.",
    "Config: `default_modle` is not a known key and is ignored (did you mean `default_model`?).",
    "Config: `models.m.max_context` is not a known key and is ignored (did you mean " +
    "`models.m.max_context_size`?).",
    "Config: `models.m.capabilites` is not a known key and is ignored (did you mean " +
    "`models.m.capabilities`?).",
    "Config: `providers.p.envv` is not a known key and is ignored (did you mean " +
    "`providers.p.env`?).",
    "Config: `loop_control.max_retries` is not a known key and is ignored (did you mean " +
    "`loop_control.max_retries_per_step`?).",
    "Config: `hooks[0].timeot` is not a known key and is ignored (did you mean " +
    "`hooks[0].timeout`?).",
    "Config: `mcp.client.tool_call_timeout` is not a known key and is ignored (did you mean " +
    "`mcp.client.tool_call_timeout_ms`?).",
  ]);
  assertEquals(nearestKey("x", []), null);
  assertEquals(nearestKey("thme", ["theme", "telemetry"]), "theme");
  assertEquals(nearestKey("completely_else", ["theme", "telemetry"]), null);
});
