import { ConfigError } from "../../../lib/config/errors.ts";
import { loadConfigFromText } from "../../../lib/config/load.ts";
import {
  deriveCapabilities,
  isModelUsable,
  resolveModel,
} from "../../../lib/config/model_resolution.ts";
import { type Config, defaultConfig, type ModelConfig } from "../../../lib/config/schema.ts";
import { assert, assertEquals, assertThrows } from "../../helpers/assert.ts";

function envOf(vars: Record<string, string>): (k: string) => string | undefined {
  return (k) => (Object.hasOwn(vars, k) ? vars[k] : undefined);
}
const NO_ENV = envOf({});

function configWith(type: string, model = "kimi-k2", extra: Record<string, unknown> = {}): Config {
  return loadConfigFromText(JSON.stringify({
    default_model: "main",
    models: {
      main: { provider: "p", model, max_context_size: 200000, capabilities: ["image_in"] },
      other: { provider: "q", model: "other-model", max_context_size: 32000 },
    },
    providers: {
      p: { type, base_url: "https://p.example/v1", api_key: "cfg-key" },
      q: { type: "anthropic", base_url: "https://q.example", api_key: "q-key" },
    },
    ...extra,
  }));
}

const PLACEHOLDER_MODEL: ModelConfig = {
  provider: "",
  model: "",
  max_context_size: 100000,
  capabilities: null,
  display_name: null,
};

Deno.test("default_model is used when no --model is given", () => {
  const r = resolveModel(configWith("kimi"), { getEnv: NO_ENV });
  assertEquals(r.alias, "main");
  assertEquals(r.model.model, "kimi-k2");
  assertEquals(r.provider.base_url, "https://p.example/v1");
  assertEquals([...r.capabilities], ["image_in"]);
  assertEquals(r.generationKwargs, {});
  assertEquals(r.completionTokenCap, null);
  assertEquals(r.envOverrides, {});
  assert(isModelUsable(r));
});

Deno.test("--model selects another alias", () => {
  const r = resolveModel(configWith("kimi"), { modelAlias: "other", getEnv: NO_ENV });
  assertEquals(r.alias, "other");
  assertEquals(r.provider.type, "anthropic");
  assertEquals(r.model.max_context_size, 32000);
});

Deno.test("unknown --model gives the placeholder, not the default model", () => {
  const r = resolveModel(configWith("kimi"), { modelAlias: "nope", getEnv: NO_ENV });
  assertEquals(r.alias, "");
  assertEquals(r.model, PLACEHOLDER_MODEL);
  assertEquals(r.provider, {
    type: "kimi",
    base_url: "",
    api_key: "",
    env: null,
    custom_headers: null,
    reasoning_key: null,
    oauth: null,
  });
  assert(!isModelUsable(r));
});

Deno.test("no --model and no default_model gives the placeholder", () => {
  const r = resolveModel(defaultConfig(), { getEnv: NO_ENV });
  assertEquals(r.alias, "");
  assertEquals(r.model, PLACEHOLDER_MODEL);
  assertEquals(r.capabilities.size, 0);
  assert(!isModelUsable(r));
});

Deno.test("KIMI_BASE_URL + KIMI_MODEL_NAME fill the placeholder", () => {
  const r = resolveModel(defaultConfig(), {
    modelAlias: "unknown",
    getEnv: envOf({ KIMI_BASE_URL: "http://127.0.0.1:9/v1", KIMI_MODEL_NAME: "k2-custom" }),
  });
  assertEquals(r.provider.base_url, "http://127.0.0.1:9/v1");
  assertEquals(r.model.model, "k2-custom");
  assertEquals(r.model.max_context_size, 100000);
  assert(isModelUsable(r));
});

Deno.test("every KIMI_* override applies to a kimi provider", () => {
  const config = configWith("kimi");
  const r = resolveModel(config, {
    getEnv: envOf({
      KIMI_BASE_URL: "http://127.0.0.1:1/v1",
      KIMI_API_KEY: "env-secret",
      KIMI_MODEL_NAME: "env-model",
      KIMI_MODEL_MAX_CONTEXT_SIZE: "64000",
      KIMI_MODEL_CAPABILITIES: " Video_In , bogus,THINKING,video_in",
      KIMI_MODEL_TEMPERATURE: "0.7",
      KIMI_MODEL_TOP_P: "0.95",
      KIMI_MODEL_MAX_COMPLETION_TOKENS: "8192",
      KIMI_MODEL_THINKING_KEEP: "all",
    }),
  });
  assertEquals(r.provider.base_url, "http://127.0.0.1:1/v1");
  assertEquals(r.provider.api_key, "env-secret");
  assertEquals(r.model.model, "env-model");
  assertEquals(r.model.max_context_size, 64000);
  assertEquals(r.model.capabilities, ["video_in", "thinking"]); // lowercased, unknown dropped
  assertEquals(new Set(r.capabilities), new Set(["video_in", "thinking"]));
  assertEquals(r.generationKwargs, { temperature: 0.7, top_p: 0.95, thinking_keep: "all" });
  assertEquals(r.completionTokenCap, 8192);
  assertEquals(r.envOverrides.KIMI_API_KEY, "******");
  assert(!JSON.stringify(r.envOverrides).includes("env-secret"));
  // the config itself is untouched
  assertEquals(config.providers.p.api_key, "cfg-key");
  assertEquals(config.models.main.model, "kimi-k2");
  assertEquals(config.models.main.capabilities, ["image_in"]);
});

Deno.test("KIMI_MODEL_CAPABILITIES with only unknown values clears capabilities", () => {
  const r = resolveModel(configWith("kimi"), {
    getEnv: envOf({ KIMI_MODEL_CAPABILITIES: "flying" }),
  });
  assertEquals(r.model.capabilities, []);
  assertEquals(r.capabilities.size, 0);
});

Deno.test("completion cap: MAX_COMPLETION_TOKENS wins over MAX_TOKENS; <=0 disables", () => {
  const cfg = configWith("kimi");
  const cap = (vars: Record<string, string>) =>
    resolveModel(cfg, { getEnv: envOf(vars) }).completionTokenCap;
  assertEquals(cap({ KIMI_MODEL_MAX_TOKENS: "1000" }), 1000);
  assertEquals(
    cap({ KIMI_MODEL_MAX_COMPLETION_TOKENS: "2000", KIMI_MODEL_MAX_TOKENS: "1000" }),
    2000,
  );
  assertEquals(cap({ KIMI_MODEL_MAX_COMPLETION_TOKENS: "0", KIMI_MODEL_MAX_TOKENS: "1000" }), 0);
  assertEquals(cap({ KIMI_MODEL_MAX_COMPLETION_TOKENS: "-5" }), 0);
  assertEquals(cap({ KIMI_MODEL_MAX_COMPLETION_TOKENS: "", KIMI_MODEL_MAX_TOKENS: "300" }), 300);
});

Deno.test("KIMI_* overrides are ignored for non-kimi providers", () => {
  const env = envOf({
    KIMI_BASE_URL: "http://127.0.0.1:1",
    KIMI_API_KEY: "x",
    KIMI_MODEL_NAME: "y",
    KIMI_MODEL_TEMPERATURE: "0.1",
    KIMI_MODEL_MAX_COMPLETION_TOKENS: "5",
  });
  const r = resolveModel(configWith("anthropic"), { getEnv: env });
  assertEquals(r.provider.base_url, "https://p.example/v1");
  assertEquals(r.provider.api_key, "cfg-key");
  assertEquals(r.model.model, "kimi-k2");
  assertEquals(r.generationKwargs, {});
  assertEquals(r.completionTokenCap, null);
});

Deno.test("OPENAI_BASE_URL / OPENAI_API_KEY apply to openai_legacy and openai_responses", () => {
  const env = envOf({
    OPENAI_BASE_URL: "http://127.0.0.1:2/v1",
    OPENAI_API_KEY: "oa-key",
    KIMI_BASE_URL: "http://ignored",
  });
  for (const type of ["openai_legacy", "openai_responses"]) {
    const r = resolveModel(configWith(type), { getEnv: env });
    assertEquals(r.provider.base_url, "http://127.0.0.1:2/v1");
    assertEquals(r.provider.api_key, "oa-key");
    assertEquals(r.envOverrides, {
      OPENAI_BASE_URL: "http://127.0.0.1:2/v1",
      OPENAI_API_KEY: "******",
    });
  }
  const kimi = resolveModel(configWith("kimi"), { getEnv: env });
  assertEquals(kimi.provider.base_url, "http://ignored");
  assertEquals(kimi.provider.api_key, "cfg-key");
});

Deno.test("empty env values count as unset", () => {
  const r = resolveModel(configWith("kimi"), {
    getEnv: envOf({ KIMI_BASE_URL: "", KIMI_MODEL_CAPABILITIES: "", KIMI_MODEL_TEMPERATURE: "" }),
  });
  assertEquals(r.provider.base_url, "https://p.example/v1");
  assertEquals(r.model.capabilities, ["image_in"]);
  assertEquals(r.generationKwargs, {});
});

Deno.test("malformed numeric env values raise a ConfigError naming the variable", () => {
  const cfg = configWith("kimi");
  for (
    const [key, value] of [
      ["KIMI_MODEL_MAX_CONTEXT_SIZE", "lots"],
      ["KIMI_MODEL_MAX_CONTEXT_SIZE", "1.5"],
      ["KIMI_MODEL_TEMPERATURE", "warm"],
      ["KIMI_MODEL_TOP_P", "0x10"],
      ["KIMI_MODEL_MAX_COMPLETION_TOKENS", "many"],
    ]
  ) {
    assertThrows(
      () => resolveModel(cfg, { getEnv: envOf({ [key]: value }) }),
      (err: unknown) =>
        err instanceof ConfigError && err.message.startsWith(`Invalid ${key} value "${value}"`),
    );
  }
});

Deno.test("derived capabilities", () => {
  const m = (model: string, capabilities: ModelConfig["capabilities"] = null): ModelConfig => ({
    provider: "p",
    model,
    max_context_size: 1,
    capabilities,
    display_name: null,
  });
  assertEquals(
    deriveCapabilities(m("kimi-k2-Thinking-turbo")),
    new Set(["thinking", "always_thinking"]),
  );
  assertEquals(deriveCapabilities(m("o1-REASONER")), new Set(["thinking", "always_thinking"]));
  assertEquals(
    deriveCapabilities(m("kimi-for-coding")),
    new Set(["thinking", "image_in", "video_in"]),
  );
  assertEquals(
    deriveCapabilities(m("kimi-code", ["always_thinking"])),
    new Set([
      "always_thinking",
      "thinking",
      "image_in",
      "video_in",
    ]),
  );
  assertEquals(deriveCapabilities(m("Kimi-Code")), new Set()); // exact id only
  assertEquals(deriveCapabilities(m("scripted_echo", ["image_in"])), new Set(["image_in"]));
  // derived from the env-overridden model id
  const r = resolveModel(configWith("kimi"), {
    getEnv: envOf({ KIMI_MODEL_NAME: "kimi-for-coding" }),
  });
  assertEquals(r.capabilities, new Set(["image_in", "thinking", "video_in"]));
});

Deno.test("echo providers are usable without base_url or model", () => {
  const cfg = loadConfigFromText(JSON.stringify({
    default_model: "e",
    models: { e: { provider: "s", model: "", max_context_size: 100000 } },
    providers: {
      s: { type: "_scripted_echo", base_url: "", api_key: "", env: { A: "1" } },
    },
  }));
  const r = resolveModel(cfg, { getEnv: NO_ENV });
  assertEquals(r.provider.env, { A: "1" });
  assert(isModelUsable(r));
});
