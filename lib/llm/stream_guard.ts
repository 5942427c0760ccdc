/**
 * The one layer every provider's stream passes through (applied by `createLLM`): it bounds a
 * streamed response so an endless or enormous stream cannot exhaust memory, abandons a stream
 * that stalls, and stops at once when the caller aborts.
 *
 * - Text, thinking and tool-call arguments are counted in UTF-8 bytes; passing a limit aborts
 *   the request and fails with {@link APIStreamLimitError} (retryable).
 * - No part for `stallTimeoutMs` (waiting for the response headers included) aborts the request
 *   and fails with {@link APITimeoutError}, which the soul retries like a connection error.
 *   The clock only runs while the guard waits on the provider, never while the consumer is
 *   busy with a part (backpressure is not a stall).
 * - A status error carrying an HTML page or a huge body is shortened to the status and the
 *   page's title ({@link conciseProviderError}).
 * - An abort of the caller's signal ends a pending wait immediately with the signal's reason,
 *   even when a provider is slow to notice its own signal.
 *
 * @module
 */
import { APIStreamLimitError, APITimeoutError, conciseProviderError } from "./errors.ts";
import type {
  ChatProvider,
  ChatRequest,
  ChatStream,
  StreamPart,
  ThinkingEffort,
} from "./provider.ts";
import { utf8Length } from "../utf8_length.ts";
export { utf8Length } from "../utf8_length.ts";

/** Bounds on one streamed response. */
export interface StreamLimits {
  /** Visible text, summed over the response. */
  maxTextBytes: number;
  /** Thinking, summed over the response. */
  maxThinkingBytes: number;
  /** Tool-call arguments, summed over every call of the response. */
  maxToolArgumentsBytes: number;
  /** Longest wait for the next part, in milliseconds. */
  stallTimeoutMs: number;
}

/** The `model_stream` config table (0 bytes = sized for the model). */
export interface StreamLimitsConfig {
  /** `max_text_bytes`. */
  max_text_bytes: number;
  /** `max_thinking_bytes`. */
  max_thinking_bytes: number;
  /** `max_tool_arguments_bytes`. */
  max_tool_arguments_bytes: number;
  /** `stall_timeout_s`. */
  stall_timeout_s: number;
}

/** Bytes allowed per token of the context window when a limit is sized for the model. */
const BYTES_PER_CONTEXT_TOKEN = 8;
/** The smallest limit sized for a model. */
const MIN_SIZED_LIMIT = 1024 * 1024;
/** Default stall timeout. */
const DEFAULT_STALL_TIMEOUT_S = 120;

/**
 * The limits for a model: configured values, or (for 0 / absent) 8 bytes per token of the
 * context window, at least 1 MiB. No response can legitimately be longer than the model's
 * whole context.
 */
export function streamLimitsFor(
  config: Partial<StreamLimitsConfig> | undefined,
  maxContextSize: number,
): StreamLimits {
  const sized = Math.max(MIN_SIZED_LIMIT, Math.ceil(maxContextSize * BYTES_PER_CONTEXT_TOKEN));
  const pick = (v: number | undefined) => (v && v > 0 ? v : sized);
  return {
    maxTextBytes: pick(config?.max_text_bytes),
    maxThinkingBytes: pick(config?.max_thinking_bytes),
    maxToolArgumentsBytes: pick(config?.max_tool_arguments_bytes),
    stallTimeoutMs: Math.round((config?.stall_timeout_s || DEFAULT_STALL_TIMEOUT_S) * 1000),
  };
}

/** Wrap a provider so every stream it returns is bounded by `limits`. */
export function guardProvider(provider: ChatProvider, limits: StreamLimits): ChatProvider {
  return new GuardedProvider(provider, limits);
}

class GuardedProvider implements ChatProvider {
  readonly #inner: ChatProvider;
  readonly #limits: StreamLimits;

  constructor(inner: ChatProvider, limits: StreamLimits) {
    this.#inner = inner;
    this.#limits = limits;
  }

  get name(): string {
    return this.#inner.name;
  }

  get modelName(): string {
    return this.#inner.modelName;
  }

  get thinkingEffort(): ThinkingEffort | null {
    return this.#inner.thinkingEffort;
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new GuardedProvider(this.#inner.withThinking(effort), this.#limits);
  }

  async generate(request: ChatRequest): Promise<ChatStream> {
    const guard = new Guard(this.#limits, request.signal);
    try {
      const stream = await guard.wait(this.#inner.generate({ ...request, signal: guard.signal }));
      guard.rest(); // until the caller reads the stream (which may never happen)
      return guardedStream(guard, stream);
    } catch (err) {
      const failure = guard.failure(err);
      guard.end();
      throw failure;
    }
  }
}

/** The state of one guarded request: its own abort controller, stall clock and counters. */
class Guard {
  readonly #limits: StreamLimits;
  readonly #outer: AbortSignal | undefined;
  readonly #controller = new AbortController();
  /** Rejects the wait in progress (set while one is). */
  #rejectWait: ((reason: unknown) => void) | null = null;
  /** When the wait in progress started (the stall clock). */
  #waitStart = 0;
  #waiting = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #text = 0;
  #thinking = 0;
  #toolArguments = 0;
  readonly #onOuterAbort = () => this.#controller.abort(this.#outer!.reason);

  constructor(limits: StreamLimits, outer: AbortSignal | undefined) {
    this.#limits = limits;
    this.#outer = outer;
    const signal = this.#controller.signal;
    signal.addEventListener("abort", () => this.#rejectWait?.(signal.reason), { once: true });
    if (outer?.aborted) this.#controller.abort(outer.reason);
    else outer?.addEventListener("abort", this.#onOuterAbort, { once: true });
  }

  /** The signal handed to the provider. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /**
   * Await `p` with the stall clock running; an abort (caller, stall, limit) wins at once.
   *
   * Called once per streamed part, so it allocates nothing that outlives the wait: no
   * `Promise.race` against a long-lived promise (each race would leave a reaction on it until
   * the stream ends) and no timer per part (one watchdog timer checks the clock).
   */
  async wait<T>(p: Promise<T>): Promise<T> {
    const signal = this.#controller.signal;
    if (signal.aborted) {
      p.catch(() => {});
      throw signal.reason;
    }
    this.#waitStart = performance.now();
    this.#waiting = true;
    this.#timer ??= setTimeout(this.#onTimer, this.#limits.stallTimeoutMs);
    try {
      return await new Promise<T>((resolve, reject) => {
        this.#rejectWait = reject;
        p.then(resolve, reject);
      });
    } finally {
      this.#rejectWait = null;
      this.#waiting = false;
    }
  }

  /**
   * What to throw for `err`: the abort reason when the request was aborted, else the error with
   * an HTML or huge status message shortened.
   */
  failure(err: unknown): unknown {
    if (this.#controller.signal.aborted) return this.#controller.signal.reason;
    return conciseProviderError(err);
  }

  /** Stop the stall clock until the next wait. */
  rest(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stop listening to the caller's signal and abort the provider's request. */
  end(): void {
    this.rest();
    this.#outer?.removeEventListener("abort", this.#onOuterAbort);
    if (!this.#controller.signal.aborted) {
      this.#controller.abort(new DOMException("The stream was closed.", "AbortError"));
    }
  }

  /** Count a part; aborts and throws when it passes a limit. */
  count(part: StreamPart): void {
    const l = this.#limits;
    if ("arguments_part" in part) {
      this.#toolArguments += utf8Length(part.arguments_part ?? "");
      if (this.#toolArguments > l.maxToolArgumentsBytes) {
        this.#fail(new APIStreamLimitError("tool_arguments", l.maxToolArgumentsBytes));
      }
    } else if ("function" in part) {
      this.#toolArguments += utf8Length(part.function.arguments ?? "") +
        utf8Length(part.function.name);
      if (this.#toolArguments > l.maxToolArgumentsBytes) {
        this.#fail(new APIStreamLimitError("tool_arguments", l.maxToolArgumentsBytes));
      }
    } else if (part.type === "text") {
      this.#text += utf8Length(part.text);
      if (this.#text > l.maxTextBytes) {
        this.#fail(new APIStreamLimitError("text", l.maxTextBytes));
      }
    } else if (part.type === "think") {
      this.#thinking += utf8Length(part.think) + utf8Length(part.encrypted ?? "");
      if (this.#thinking > l.maxThinkingBytes) {
        this.#fail(new APIStreamLimitError("thinking", l.maxThinkingBytes));
      }
    }
  }

  #fail(err: Error): never {
    this.#controller.abort(err);
    throw err;
  }

  /** The stall watchdog: fires at the earliest moment a wait could have stalled. */
  readonly #onTimer = (): void => {
    this.#timer = undefined;
    if (!this.#waiting || this.#controller.signal.aborted) return; // the next wait re-arms it
    const ms = this.#limits.stallTimeoutMs;
    const waited = performance.now() - this.#waitStart;
    if (waited < ms) {
      this.#timer = setTimeout(this.#onTimer, ms - waited);
      return;
    }
    const s = ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
    this.#controller.abort(
      new APITimeoutError(
        `The model stream stalled: no data for ${s} (model_stream.stall_timeout_s).`,
      ),
    );
  };
}

/** The guarded view of a provider stream. */
function guardedStream(guard: Guard, stream: ChatStream): ChatStream {
  async function* parts(): AsyncGenerator<StreamPart> {
    const it = stream[Symbol.asyncIterator]();
    let finished = false;
    try {
      for (;;) {
        const r = await guard.wait(it.next());
        if (r.done) {
          finished = true;
          return;
        }
        guard.count(r.value);
        yield r.value;
      }
    } catch (err) {
      throw guard.failure(err);
    } finally {
      guard.end();
      // An unfinished provider iterator is closed in the background: one that ignores its
      // signal must not hold up the caller.
      if (!finished) it.return?.().catch(() => {});
    }
  }
  return {
    get id() {
      return stream.id;
    },
    get usage() {
      return stream.usage;
    },
    [Symbol.asyncIterator]: parts,
  };
}
