/**
 * The wizard's pure decisions: which provider key a new endpoint gets, the model alias, and the
 * capabilities recorded for a model.
 */
import { assertEquals } from "../../helpers/assert.ts";
import {
  inferCapabilities,
  modelAliasFor,
  platforms,
  providerKeyFor,
} from "../../../lib/ui/shell/setup_wizard.ts";
import { ConfigSchema } from "../../../lib/config/schema.ts";

const config = ConfigSchema.parse({
  default_model: "m",
  models: { m: { provider: "openai-compatible", model: "m", max_context_size: 1000 } },
  providers: {
    "openai-compatible": { type: "openai_legacy", base_url: "http://a/v1", api_key: "k" },
    "openai-compatible-2": { type: "openai_legacy", base_url: "http://b/v1", api_key: "k" },
  },
});

Deno.test("providerKeyFor: same endpoint reuses its key, another endpoint gets the next free one", () => {
  const p = { id: "openai-compatible", type: "openai_legacy" as const };
  assertEquals(providerKeyFor(config, p, "http://a/v1/"), "openai-compatible");
  assertEquals(providerKeyFor(config, p, "http://b/v1"), "openai-compatible-2");
  assertEquals(providerKeyFor(config, p, "http://c/v1"), "openai-compatible-3");
  assertEquals(
    providerKeyFor(config, { id: "openai", type: "openai_responses" }, "http://x"),
    "openai",
  );
  // same URL, another type: not the same provider
  assertEquals(
    providerKeyFor(config, { id: "openai-compatible", type: "openai_responses" }, "http://a/v1"),
    "openai-compatible-3",
  );
});

Deno.test("modelAliasFor: the model id unless another provider owns that alias", () => {
  assertEquals(modelAliasFor(config, "openai-compatible", "m"), "m");
  assertEquals(modelAliasFor(config, "openai-compatible-2", "m"), "openai-compatible-2/m");
  assertEquals(modelAliasFor(config, "openai-compatible-2", "n"), "n");
});

Deno.test("inferCapabilities by platform and model family", () => {
  assertEquals(inferCapabilities("anthropic", "claude-sonnet-4-5"), ["thinking", "image_in"]);
  assertEquals(inferCapabilities("anthropic", "claude-3-5-haiku-latest"), []);
  assertEquals(inferCapabilities("gemini", "gemini-2.5-pro"), ["thinking", "image_in", "video_in"]);
  assertEquals(inferCapabilities("gemini", "gemini-2.0-flash"), []);
  assertEquals(inferCapabilities("openai_responses", "gpt-5"), ["thinking", "image_in"]);
  assertEquals(inferCapabilities("kimi", "kimi-k2-0905-preview"), []);
  assertEquals(inferCapabilities("kimi", "kimi-k2-thinking", true), ["thinking"]);
});

Deno.test("platforms: menu order and the China endpoint; KIMI_CODE_BASE_URL moves Kimi Code", () => {
  const list = platforms(() => undefined);
  assertEquals(list.map((p) => p.id), [
    "managed:kimi-code",
    "kimi-code",
    "moonshot-ai",
    "moonshot-cn",
    "openai",
    "anthropic",
    "gemini",
    "openai-compatible",
  ]);
  assertEquals(list[3].baseUrl, "https://api.moonshot.cn/v1");
  assertEquals(list[1].baseUrl, "https://api.kimi.com/coding/v1");
  const moved = platforms((
    k,
  ) => (k === "KIMI_CODE_BASE_URL" ? "http://127.0.0.1:1/c/v1/" : undefined));
  assertEquals(moved[0].baseUrl, "http://127.0.0.1:1/c/v1");
});
