/**
 * The `_chaos` test provider: wraps another provider, fails a share of requests with
 * retryable errors and corrupts a share of streamed tool-call arguments, to exercise retries
 * and malformed-argument handling.
 *
 * @module
 */
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
} from "../errors.ts";
import type {
  ChatProvider,
  ChatRequest,
  ChatStream,
  StreamPart,
  ThinkingEffort,
} from "../provider.ts";

/** A kind of injected failure: an HTTP status, a connection error or a timeout. */
export type ChaosErrorType = number | "connection" | "timeout";

/** Resolved chaos settings. */
export interface ChaosConfig {
  /** Chance (0..1) that a `generate` call fails before streaming. */
  errorProbability: number;
  /** Failures to pick from, uniformly. */
  errorTypes: ChaosErrorType[];
  /** Seconds reported as `retryAfter` on injected 429 errors. */
  retryAfter: number;
  /** Seed of the deterministic generator; null for a random seed. */
  seed: number | null;
  /** Chance (0..1) per streamed part that a tool call's arguments lose their final `}`. */
  corruptToolCallProbability: number;
}

/** Options of {@link createChaosProvider}. */
export interface ChaosOptions {
  /** Reads the `CHAOS_*` environment variables. */
  getEnv: (name: string) => string | undefined;
}

/** Bodies the injected HTTP errors carry, as the reference's chaos transport sends them. */
const STATUS_MESSAGES: Readonly<Record<number, string>> = {
  429: "Rate limit exceeded",
  500: "Internal server error",
  502: "Bad gateway",
  503: "Service temporarily unavailable",
};

/**
 * Read the chaos settings from the environment: `CHAOS_ERROR_PROBABILITY` (default 0.8),
 * `CHAOS_ERROR_TYPES` (comma list of statuses, `connection`, `timeout`; default `429,500,503`),
 * `CHAOS_RETRY_AFTER` (default 2), `CHAOS_SEED` (integer; default random) and
 * `CHAOS_CORRUPT_TOOL_CALL_PROBABILITY` (default 0.1).
 *
 * @throws {ChatProviderError} on a malformed value.
 */
export function chaosConfigFromEnv(getEnv: (name: string) => string | undefined): ChaosConfig {
  const prob = (name: string, dflt: number): number => {
    const raw = getEnv(name)?.trim();
    if (!raw) return dflt;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || n > 1) {
      throw new ChatProviderError(`Invalid ${name} '${raw}': expected a number between 0 and 1.`);
    }
    return n;
  };
  const int = (name: string): number | null => {
    const raw = getEnv(name)?.trim();
    if (!raw) return null;
    if (!/^[+-]?\d+$/.test(raw)) {
      throw new ChatProviderError(`Invalid ${name} '${raw}': expected an integer.`);
    }
    return Number.parseInt(raw, 10);
  };
  const typesRaw = getEnv("CHAOS_ERROR_TYPES")?.trim() || "429,500,503";
  const errorTypes = typesRaw.split(",").map((t): ChaosErrorType => {
    const v = t.trim().toLowerCase();
    if (v === "connection" || v === "timeout") return v;
    if (/^\d{3}$/.test(v)) return Number.parseInt(v, 10);
    throw new ChatProviderError(
      `Invalid CHAOS_ERROR_TYPES entry '${t.trim()}': expected an HTTP status code, ` +
        `'connection' or 'timeout'.`,
    );
  });
  return {
    errorProbability: prob("CHAOS_ERROR_PROBABILITY", 0.8),
    errorTypes,
    retryAfter: int("CHAOS_RETRY_AFTER") ?? 2,
    seed: int("CHAOS_SEED"),
    corruptToolCallProbability: prob("CHAOS_CORRUPT_TOOL_CALL_PROBABILITY", 0.1),
  };
}

/**
 * Wrap `inner` with chaos configured from the environment (see {@link chaosConfigFromEnv}).
 * The wrapper keeps the inner name; its model name is `chaos(<inner model>)` while any chaos
 * is enabled. Injected status errors are {@link APIStatusError}s whose message reads like the
 * SDK's (`429 Rate limit exceeded`); injected 429s also carry a numeric `retryAfter` property.
 */
export function createChaosProvider(inner: ChatProvider, opts: ChaosOptions): ChatProvider {
  return new ChaosChatProvider(inner, chaosConfigFromEnv(opts.getEnv));
}

class ChaosChatProvider implements ChatProvider {
  readonly #inner: ChatProvider;
  readonly #config: ChaosConfig;
  readonly #rng: () => number;

  constructor(inner: ChatProvider, config: ChaosConfig) {
    this.#inner = inner;
    this.#config = config;
    this.#rng = seededRandom(config.seed);
  }

  get name(): string {
    return this.#inner.name;
  }

  get modelName(): string {
    const c = this.#config;
    return c.errorProbability > 0 || c.corruptToolCallProbability > 0
      ? `chaos(${this.#inner.modelName})`
      : this.#inner.modelName;
  }

  get thinkingEffort(): ThinkingEffort | null {
    return this.#inner.thinkingEffort;
  }

  async generate(request: ChatRequest): Promise<ChatStream> {
    const c = this.#config;
    if (c.errorTypes.length > 0 && this.#rng() < c.errorProbability) {
      const kind = c.errorTypes[Math.floor(this.#rng() * c.errorTypes.length)];
      throw injectedError(kind, c.retryAfter);
    }
    const stream = await this.#inner.generate(request);
    return corruptingStream(stream, c);
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new ChaosChatProvider(this.#inner.withThinking(effort), this.#config);
  }
}

function injectedError(kind: ChaosErrorType, retryAfter: number): ChatProviderError {
  if (kind === "connection") return new APIConnectionError();
  if (kind === "timeout") return new APITimeoutError();
  const err = new APIStatusError(kind, `${kind} ${STATUS_MESSAGES[kind] ?? "Unknown error"}`);
  if (kind === 429) Object.assign(err, { retryAfter });
  return err;
}

function corruptingStream(inner: ChatStream, config: ChaosConfig): ChatStream {
  const rng = seededRandom(config.seed);
  const p = config.corruptToolCallProbability;
  return {
    get id() {
      return inner.id;
    },
    get usage() {
      return inner.usage;
    },
    async *[Symbol.asyncIterator]() {
      for await (const part of inner) {
        yield p > 0 && rng() < p ? corrupt(part) : part;
      }
    },
  };
}

function corrupt(part: StreamPart): StreamPart {
  if ("function" in part) {
    const args = part.function.arguments;
    if (args === null || !args.endsWith("}")) return part;
    return { ...part, function: { ...part.function, arguments: args.slice(0, -1) } };
  }
  if ("arguments_part" in part) {
    const args = part.arguments_part;
    if (args === null || !args.endsWith("}")) return part;
    return { arguments_part: args.slice(0, -1) };
  }
  return part;
}

/** mulberry32: a small deterministic PRNG in [0, 1); random seed when `seed` is null. */
function seededRandom(seed: number | null): () => number {
  let state = (seed ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
