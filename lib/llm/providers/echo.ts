/**
 * The `_echo` test provider: streams whatever the last user message scripts in the echo DSL.
 *
 * @module
 */
import { echoScriptStream, parseEchoDsl } from "../echo_dsl.ts";
import { ChatProviderError } from "../errors.ts";
import { extractText } from "../message.ts";
import type { ChatProvider, ChatRequest, ChatStream, ThinkingEffort } from "../provider.ts";

/**
 * Create the echo provider (name `echo`, model `echo`). Each `generate` parses the text of the
 * last history message, which must be a user message, as an echo DSL script; `error:` lines
 * are raised before anything streams.
 */
export function createEchoProvider(): ChatProvider {
  return new EchoChatProvider();
}

class EchoChatProvider implements ChatProvider {
  readonly name = "echo";
  readonly modelName = "echo";
  readonly thinkingEffort: ThinkingEffort | null = null;

  generate(request: ChatRequest): Promise<ChatStream> {
    try {
      return Promise.resolve(this.#generate(request));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  #generate(request: ChatRequest): ChatStream {
    const history = request.history;
    if (history.length === 0) {
      throw new ChatProviderError("EchoChatProvider requires at least one message in history.");
    }
    const last = history[history.length - 1];
    if (last.role !== "user") {
      throw new ChatProviderError("EchoChatProvider expects the last history message to be user.");
    }
    const script = parseEchoDsl(extractText(last.content));
    if (script.error) throw script.error;
    if (script.parts.length === 0) {
      throw new ChatProviderError("EchoChatProvider DSL produced no streamable parts.");
    }
    return echoScriptStream(script);
  }

  withThinking(_effort: ThinkingEffort): ChatProvider {
    return new EchoChatProvider();
  }
}
