/**
 * Printers of print mode (reference §11): what each output format writes for the merged wire
 * stream of a turn.
 *
 * @module
 */
import {
  type ContentPart,
  extractText,
  messageToJSON,
  type NormalizedMessage,
  type ToolCall,
} from "../../llm/message.ts";
import { toolResultToMessage } from "../../soul/tool_result_message.ts";
import type { WireMessage } from "../../wire/messages.ts";
import { reprWireMessage } from "./py_repr.ts";

/** Consumes merged wire messages and writes lines. */
export interface Printer {
  /** Take one message. */
  feed(msg: WireMessage): void;
  /** End of the turn's stream. */
  flush(): void;
}

/** Output formats. */
export type OutputFormat = "text" | "stream-json";

/** Where printers write lines. */
export type LineSink = (line: string) => void;

function mergeContent(buffer: ContentPart[], part: ContentPart): void {
  const last = buffer[buffer.length - 1];
  if (last?.type === "text" && part.type === "text") {
    buffer[buffer.length - 1] = { ...last, text: last.text + part.text };
  } else if (last?.type === "think" && part.type === "think" && !last.encrypted) {
    buffer[buffer.length - 1] = {
      ...last,
      think: last.think + part.think,
      encrypted: part.encrypted ?? last.encrypted,
    };
  } else {
    buffer.push(structuredClone(part));
  }
}

/** Text mode: a Python-style repr of every message. */
class TextPrinter implements Printer {
  constructor(private out: LineSink) {}
  feed(msg: WireMessage): void {
    if (msg.type === "BtwBegin") return;
    if (msg.type === "BtwEnd") {
      const p = msg.payload as { response: string | null; error: string | null };
      if (p.response) this.out(p.response);
      else if (p.error) this.out(`Error: ${p.error}`);
      return;
    }
    this.out(reprWireMessage(msg));
  }
  flush(): void {}
}

/** stream-json mode: assistant and tool messages as JSONL. */
class JsonPrinter implements Printer {
  #content: ContentPart[] = [];
  #calls: ToolCall[] = [];
  #notifications: string[] = [];
  constructor(private out: LineSink) {}

  feed(msg: WireMessage): void {
    switch (msg.type) {
      case "StepBegin":
      case "StepInterrupted":
        this.flush();
        break;
      case "StepRetry":
        this.#content = [];
        this.#calls = [];
        break;
      case "Notification": {
        const line = JSON.stringify(msg.payload);
        if (this.#content.length || this.#calls.length) this.#notifications.push(line);
        else {
          this.flush();
          this.out(line);
        }
        break;
      }
      case "ContentPart":
        mergeContent(this.#content, msg.payload as ContentPart);
        break;
      case "ToolCall":
        this.#calls.push(structuredClone(msg.payload as ToolCall));
        break;
      case "ToolCallPart": {
        const last = this.#calls[this.#calls.length - 1];
        const part = (msg.payload as { arguments_part: string | null }).arguments_part;
        if (last && part !== null) last.function.arguments = (last.function.arguments ?? "") + part;
        break;
      }
      case "ToolResult": {
        this.flush();
        const p = msg.payload as { tool_call_id: string; return_value: never };
        this.out(
          JSON.stringify(messageToJSON(toolResultToMessage(p.tool_call_id, p.return_value))),
        );
        break;
      }
      case "PlanDisplay":
      case "BtwBegin":
      case "BtwEnd":
        this.flush();
        this.out(JSON.stringify(msg.payload));
        break;
    }
  }

  flush(): void {
    if (this.#content.length || this.#calls.length) {
      const m: NormalizedMessage = { role: "assistant", content: this.#content };
      if (this.#calls.length) m.tool_calls = this.#calls;
      this.out(JSON.stringify(messageToJSON(m)));
      this.#content = [];
      this.#calls = [];
    }
    for (const n of this.#notifications) this.out(n);
    this.#notifications = [];
  }
}

/** Final-message-only: the text of the last step's content. */
class FinalOnlyPrinter implements Printer {
  #content: ContentPart[] = [];
  constructor(private out: LineSink, private format: OutputFormat) {}
  feed(msg: WireMessage): void {
    switch (msg.type) {
      case "StepBegin":
      case "StepInterrupted":
      case "StepRetry":
        this.#content = [];
        break;
      case "ContentPart":
        mergeContent(this.#content, msg.payload as ContentPart);
        break;
      case "BtwEnd": {
        const p = msg.payload as { response: string | null; error: string | null };
        const text = p.response || p.error;
        if (text) this.#emit(text);
        break;
      }
    }
  }
  #emit(text: string): void {
    this.out(
      this.format === "text" ? text : JSON.stringify({ role: "assistant", content: text }),
    );
  }
  flush(): void {
    const text = extractText(this.#content);
    if (text) this.#emit(text);
    this.#content = [];
  }
}

/** The printer for a format. */
export function createPrinter(
  format: OutputFormat,
  finalOnly: boolean,
  out: LineSink,
): Printer {
  if (finalOnly) return new FinalOnlyPrinter(out, format);
  return format === "text" ? new TextPrinter(out) : new JsonPrinter(out);
}
