/**
 * Builds the run's LLM from the resolved model and provider (reference §2.3 items 4–7).
 * Provider modules are imported lazily so modes that never call a model never load the SDK.
 * Every provider is wrapped in the stream guard (lib/llm/stream_guard.ts).
 *
 * @module
 */
import { lazyImport } from "../lazy_import.ts";
import type { ResolvedModel } from "../config/model_resolution.ts";
import { VERSION } from "../version.ts";
import { ChatProviderError } from "./errors.ts";
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
    p = lazyImport<typeof import("./providers/openai_chat.ts")>(
      "./providers/openai_chat.ts",
      import.meta.url,
    );
  } else if (type === "openai_responses") {
    p = lazyImport<typeof import("./providers/openai_responses.ts")>(
      "./providers/openai_responses.ts",
      import.meta.url,
    );
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
  let provider: ChatProvider;
  switch (p.type) {
    case "_echo": {
      const { createEchoProvider } = await lazyImport<typeof import("./providers/echo.ts")>(
        "./providers/echo.ts",
        import.meta.url,
      );
      provider = createEchoProvider();
      break;
    }
    case "_scripted_echo": {
      const { createScriptedEchoProvider } = await lazyImport<
        typeof import("./providers/scripted_echo.ts")
      >("./providers/scripted_echo.ts", import.meta.url);
      provider = createScriptedEchoProvider({ getEnv, writeStdout: opts.writeStdout });
      break;
    }
    case "kimi":
    case "openai_legacy":
    case "_chaos": {
      const { createOpenAIChatProvider } = await lazyImport<
        typeof import("./providers/openai_chat.ts")
      >("./providers/openai_chat.ts", import.meta.url);
      provider = createOpenAIChatProvider({
        kind: p.type === "openai_legacy" ? "openai_legacy" : "kimi",
        baseUrl: p.base_url,
        apiKey: p.api_key,
        model: m.model,
        customHeaders: p.custom_headers ?? undefined,
        reasoningKey: p.reasoning_key ?? undefined,
        userAgent,
        promptCacheKey: p.type === "openai_legacy" ? undefined : opts.sessionId,
        thinkingKeep: kw.thinking_keep,
        temperature: kw.temperature,
        topP: kw.top_p,
      });
      if (p.type === "_chaos") {
        const { createChaosProvider } = await lazyImport<typeof import("./providers/chaos.ts")>(
          "./providers/chaos.ts",
          import.meta.url,
        );
        provider = createChaosProvider(provider, { getEnv });
      }
      break;
    }
    case "openai_responses": {
      const { createOpenAIResponsesProvider } = await lazyImport<
        typeof import("./providers/openai_responses.ts")
      >("./providers/openai_responses.ts", import.meta.url);
      provider = createOpenAIResponsesProvider({
        baseUrl: p.base_url,
        apiKey: p.api_key,
        model: m.model,
        customHeaders: p.custom_headers ?? undefined,
        userAgent,
        promptCacheKey: opts.sessionId,
      });
      break;
    }
    default:
      throw new ChatProviderError(
        `Provider type \`${p.type}\` is not supported by this build. Use one of: kimi, ` +
          "openai_legacy, openai_responses (or an OpenAI-compatible endpoint).",
      );
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
