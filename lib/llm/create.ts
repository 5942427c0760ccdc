/**
 * Builds the run's LLM from the resolved model and provider (reference §2.3 items 4–7).
 * Provider modules are imported lazily so modes that never call a model never load the SDK.
 * Every provider is wrapped in the stream guard (lib/llm/stream_guard.ts).
 *
 * @module
 */
import type { ResolvedModel } from "../config/model_resolution.ts";
import { VERSION } from "../version.ts";
import { ChatProviderError } from "./errors.ts";
import { KIMI_CODE_OAUTH_KEY, KIMI_CODE_PROVIDER_KEY } from "../auth/kimi_code.ts";
import type { ChatProvider, LLM } from "./provider.ts";
import { guardProvider, type StreamLimitsConfig, streamLimitsFor } from "./stream_guard.ts";

/** Options of {@link createLLM}. */
export interface CreateLLMOptions {
  /** `--thinking` / `--no-thinking` / config `default_thinking`; null leaves the provider default. */
  thinking: boolean | null;
  /** Session id, used as the prompt cache key. */
  sessionId: string;
  /** Reads the process environment (provider `env` entries take precedence). */
  getEnv: (name: string) => string | undefined;
  /** Appended to the User-Agent, e.g. ` (kimi-agent-sdk 0.1.8)` after wire initialize. */
  userAgentSuffix?: string;
  /** Writes a line to stdout (scripted echo trace). */
  writeStdout?: (line: string) => void;
  /** Share dir holding OAuth credentials; providers with an `oauth` reference need it. */
  shareDir?: string;
  /** The `model_stream` config table; absent means the defaults. */
  streamLimits?: Partial<StreamLimitsConfig>;
}

const ECHO_TYPES = new Set(["_echo", "_scripted_echo"]);

/**
 * Start loading the provider module (and its SDK) of a provider type without waiting, so it
 * loads while the session is set up; {@link createLLM} later gets the same module. Unknown
 * types do nothing.
 */
export function prefetchProvider(type: string): void {
  let p: Promise<unknown> | null = null;
  if (type === "kimi" || type === "openai_legacy" || type === "_chaos") {
    p = import("./providers/openai_chat.ts");
  } else if (type === "openai_responses") {
    p = import("./providers/openai_responses.ts");
  } else if (type === "anthropic") {
    p = import("./providers/anthropic.ts");
  } else if (type === "gemini" || type === "google_genai" || type === "vertexai") {
    p = import("./providers/gemini.ts");
  }
  p?.catch(() => {});
}

/**
 * Create the LLM, or null when the model is not usable (no base URL or model id for a real
 * provider): the soul then reports "LLM not set" (the wire answers -32001 "LLM is not set").
 */
export async function createLLM(
  resolved: ResolvedModel,
  opts: CreateLLMOptions,
): Promise<LLM | null> {
  const { provider: p, model: m } = resolved;
  if (!ECHO_TYPES.has(p.type) && (!p.base_url || !m.model)) return null;
  const getEnv = (name: string) => p.env?.[name] ?? opts.getEnv(name);
  const userAgent = `KimiCLI/${VERSION}${opts.userAgentSuffix ?? ""}`;
  const kw = resolved.generationKwargs;
  let headers = p.custom_headers ?? undefined;
  if (p.type === "kimi" && opts.shareDir) {
    // Moonshot and Kimi Code identify the device (the reference's OAuth common headers).
    const { commonHeaders } = await import("../auth/device.ts");
    headers = { ...(await commonHeaders(opts.shareDir)), ...(headers ?? {}) };
  }
  let build: (apiKey: string) => ChatProvider;
  switch (p.type) {
    case "_echo": {
      const { createEchoProvider } = await import("./providers/echo.ts");
      build = () => createEchoProvider();
      break;
    }
    case "_scripted_echo": {
      const { createScriptedEchoProvider } = await import("./providers/scripted_echo.ts");
      const scripted = createScriptedEchoProvider({ getEnv, writeStdout: opts.writeStdout });
      build = () => scripted;
      break;
    }
    case "kimi":
    case "openai_legacy":
    case "_chaos": {
      const { createOpenAIChatProvider } = await import("./providers/openai_chat.ts");
      const chaos = p.type === "_chaos"
        ? (await import("./providers/chaos.ts")).createChaosProvider
        : null;
      build = (apiKey) => {
        const chat = createOpenAIChatProvider({
          kind: p.type === "openai_legacy" ? "openai_legacy" : "kimi",
          baseUrl: p.base_url,
          apiKey,
          model: m.model,
          customHeaders: headers,
          reasoningKey: p.reasoning_key ?? undefined,
          userAgent,
          promptCacheKey: p.type === "openai_legacy" ? undefined : opts.sessionId,
          thinkingKeep: kw.thinking_keep,
          temperature: kw.temperature,
          topP: kw.top_p,
        });
        return chaos ? chaos(chat, { getEnv }) : chat;
      };
      break;
    }
    case "openai_responses": {
      const { createOpenAIResponsesProvider } = await import("./providers/openai_responses.ts");
      build = (apiKey) =>
        createOpenAIResponsesProvider({
          baseUrl: p.base_url,
          apiKey,
          model: m.model,
          customHeaders: headers,
          userAgent,
          promptCacheKey: opts.sessionId,
        });
      break;
    }
    case "anthropic": {
      const { createAnthropicProvider } = await import("./providers/anthropic.ts");
      build = (apiKey) =>
        createAnthropicProvider({
          baseUrl: p.base_url,
          apiKey,
          model: m.model,
          customHeaders: headers,
          userAgent,
          defaultMaxTokens: 50000,
          userId: opts.sessionId,
        });
      break;
    }
    case "gemini":
    case "google_genai":
    case "vertexai": {
      const { createGeminiProvider } = await import("./providers/gemini.ts");
      build = (apiKey) =>
        createGeminiProvider({
          kind: p.type === "vertexai" ? "vertexai" : "gemini",
          baseUrl: p.base_url,
          apiKey,
          model: m.model,
          project: getEnv("GOOGLE_CLOUD_PROJECT"),
          location: getEnv("GOOGLE_CLOUD_LOCATION"),
          customHeaders: headers,
          userAgent,
        });
      break;
    }
    default:
      throw new ChatProviderError(
        `Provider type \`${p.type}\` is not supported. Use one of: kimi, openai_legacy, ` +
          "openai_responses, anthropic, gemini (google_genai), vertexai.",
      );
  }
  // The managed Kimi Code provider always uses the login, even when an older config lacks the ref.
  const oauthKey = p.oauth?.key ??
    (m.provider === KIMI_CODE_PROVIDER_KEY && !p.api_key ? KIMI_CODE_OAUTH_KEY : null);
  let provider: ChatProvider;
  if (oauthKey && opts.shareDir) {
    const { tokenManagerFor } = await import("../auth/token_manager.ts");
    const { createOAuthProvider } = await import("./oauth_provider.ts");
    const manager = tokenManagerFor(opts.shareDir, opts.getEnv);
    const key = oauthKey;
    provider = createOAuthProvider({
      build,
      fallbackApiKey: p.api_key,
      tokens: {
        accessToken: () => manager.accessToken(key),
        refreshAfterUnauthorized: () => manager.refreshAfterUnauthorized(key),
      },
    });
  } else {
    provider = build(p.api_key);
  }
  // Every provider streams through the same guard: size limits, stall timeout, prompt abort.
  provider = guardProvider(provider, streamLimitsFor(opts.streamLimits, m.max_context_size));
  const caps = resolved.capabilities;
  if (caps.has("always_thinking") || (opts.thinking === true && caps.has("thinking"))) {
    provider = provider.withThinking("high");
  } else if (opts.thinking === false) {
    provider = provider.withThinking("off");
  }
  return {
    provider,
    maxContextSize: m.max_context_size,
    capabilities: caps,
    modelAlias: resolved.alias,
    completionTokenCap: resolved.completionTokenCap ?? undefined,
  };
}
