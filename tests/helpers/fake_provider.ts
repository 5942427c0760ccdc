/**
 * A chat provider for unit tests: each `generate` call takes the next scripted reply.
 *
 * @module
 */
import type { TokenUsage } from "../../lib/llm/message.ts";
import type {
  ChatProvider,
  ChatRequest,
  ChatStream,
  StreamPart,
  ThinkingEffort,
} from "../../lib/llm/provider.ts";

/** One scripted reply: parts to stream, or an error to throw. */
export interface FakeReply {
  /** Parts streamed in order. */
  parts?: StreamPart[];
  /** Thrown from `generate`. */
  error?: Error;
  /** Reported usage. */
  usage?: TokenUsage;
  /** Message id. */
  id?: string;
  /** Delay before each part, in ms. */
  delayMs?: number;
}

/** A fake provider plus the requests it received. */
export interface FakeProvider extends ChatProvider {
  /** Requests seen, in order. */
  readonly requests: ChatRequest[];
}

/** Create a fake provider over a list of replies. */
export function fakeProvider(replies: FakeReply[], name = "fake"): FakeProvider {
  const requests: ChatRequest[] = [];
  const provider: FakeProvider = {
    name,
    modelName: "fake-model",
    thinkingEffort: null,
    requests,
    withThinking(_e: ThinkingEffort) {
      return provider;
    },
    generate(req: ChatRequest): Promise<ChatStream> {
      requests.push(structuredClone({ ...req, signal: undefined }));
      const reply = replies.shift();
      if (!reply) return Promise.reject(new Error("fake provider exhausted"));
      if (reply.error) return Promise.reject(reply.error);
      const stream: ChatStream = {
        id: reply.id ?? null,
        usage: reply.usage ?? null,
        async *[Symbol.asyncIterator]() {
          for (const p of reply.parts ?? []) {
            if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
            req.signal?.throwIfAborted();
            yield p;
          }
        },
      };
      return Promise.resolve(stream);
    },
  };
  return provider;
}
