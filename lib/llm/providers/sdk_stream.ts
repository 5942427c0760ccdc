/**
 * The scaffolding every SDK-backed provider stream shares (OpenAI Chat Completions and
 * Responses, Anthropic, Gemini): open the SDK's stream, turn each chunk into stream parts with
 * the provider's reader, translate every SDK error (opening, mid-stream, or an abort the SDK
 * ended quietly) with the provider's converter, and expose the response id and usage the reader
 * saw. Stall clock, size limits and caller aborts are `lib/llm/stream_guard.ts`, around this.
 *
 * @module
 */
import type { TokenUsage } from "../message.ts";
import type { ChatStream, StreamPart } from "../provider.ts";

/** What a chunk reader records besides the parts: the response id and the usage so far. */
export interface StreamMeta {
  /** The provider's id of the response (null until a chunk carries it). */
  id: string | null;
  /** Token usage (null until a chunk reports it). */
  usage: TokenUsage | null;
}

/**
 * Reads one SDK chunk: yields its parts and records id and usage in `meta`. It may keep state
 * across the chunks of one stream (make one reader per stream).
 */
export type ChunkReader<C> = (chunk: C, meta: StreamMeta) => Iterable<StreamPart>;

/** Options of {@link sdkStream}. */
export interface SdkStreamOptions<C> {
  /** Send the request and resolve with the SDK's stream of chunks. */
  open: () => Promise<AsyncIterable<C>>;
  /** The provider's reader of one chunk. */
  read: ChunkReader<C>;
  /** Translate an SDK error (or the abort reason) into what the provider throws. */
  convertError: (err: unknown) => unknown;
  /** The request's signal: a stream the SDK ends quietly after an abort fails with its reason. */
  signal?: AbortSignal;
}

/** Open an SDK stream and return it as a {@link ChatStream} (see the module doc). */
export async function sdkStream<C>(opts: SdkStreamOptions<C>): Promise<ChatStream> {
  let source: AsyncIterable<C>;
  try {
    source = await opts.open();
  } catch (err) {
    throw opts.convertError(err);
  }
  const meta: StreamMeta = { id: null, usage: null };
  async function* parts(): AsyncGenerator<StreamPart> {
    try {
      for await (const chunk of source) yield* opts.read(chunk, meta);
    } catch (err) {
      throw opts.convertError(err);
    }
    if (opts.signal?.aborted) throw opts.convertError(opts.signal.reason);
  }
  return {
    get id() {
      return meta.id;
    },
    get usage() {
      return meta.usage;
    },
    [Symbol.asyncIterator]: parts,
  };
}
