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
import { keyArgument } from "../tool_key_argument.ts";
import { reprWireMessage } from "./py_repr.ts";

/** Consumes merged wire messages and writes lines. */
export interface Printer {
  /** Take one message. */
  feed(msg: WireMessage): void;
  /** End of the turn's stream. */
  flush(): void;
}

/**
 * Output formats: `human` (the default: the answer as text, tool activity on stderr), `text`
 * (the reference's transcript of every wire message as a Python repr) and `stream-json`.
 */
export type OutputFormat = "human" | "text" | "stream-json";

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
      this.format === "stream-json" ? JSON.stringify({ role: "assistant", content: text }) : text,
    );
  }
  flush(): void {
    const text = extractText(this.#content);
    if (text) this.#emit(text);
    this.#content = [];
  }
}

/**
 * The default output: the assistant's text as an answer on stdout (steps separated by a blank
 * line), and a line per tool call, retry or notice on stderr, so `kimi --print -p ... > out.md`
 * keeps only the answer.
 */
class HumanPrinter implements Printer {
  #text = "";
  #printed = false;
  #calls: ToolCall[] = [];
  constructor(private out: LineSink, private note: LineSink) {}
  feed(msg: WireMessage): void {
    switch (msg.type) {
      case "ContentPart": {
        const part = msg.payload as ContentPart;
        if (part.type === "text") this.#text += part.text;
        break;
      }
      case "StepBegin":
      case "StepInterrupted":
        this.#flushText();
        break;
      case "StepRetry":
        this.#text = "";
        this.note(`↻ retrying (${(msg.payload as { error_type: string }).error_type})`);
        break;
      case "ToolCall":
        this.#flushText();
        this.#calls.push(structuredClone(msg.payload as ToolCall));
        break;
      case "ToolCallPart": {
        const last = this.#calls[this.#calls.length - 1];
        const part = (msg.payload as { arguments_part: string | null }).arguments_part;
        if (last && part !== null) last.function.arguments = (last.function.arguments ?? "") + part;
        break;
      }
      case "ToolResult": {
        const p = msg.payload as {
          tool_call_id: string;
          return_value: { is_error: boolean; message: string };
        };
        const call = this.#calls.find((c) => c.id === p.tool_call_id);
        const name = call?.function.name ?? "tool";
        const arg = call ? keyArgument(name, call.function.arguments ?? "") : "";
        const head = `${p.return_value.is_error ? "✗" : "•"} Used ${name}${arg ? ` (${arg})` : ""}`;
        const why = p.return_value.is_error && p.return_value.message
          ? `: ${p.return_value.message.split("\n")[0]}`
          : "";
        this.note(head + why);
        break;
      }
      case "Notification":
        this.note(`● ${(msg.payload as { title: string }).title}`);
        break;
      case "PlanDisplay":
        this.#flushText();
        this.out((msg.payload as { content: string }).content);
        break;
      case "BtwEnd": {
        const p = msg.payload as { response: string | null; error: string | null };
        if (p.response) this.out(p.response);
        else if (p.error) this.note(`Error: ${p.error}`);
        break;
      }
    }
  }
  #flushText(): void {
    const text = this.#text.replace(/^\n+|\s+$/g, "");
    this.#text = "";
    if (!text) return;
    if (this.#printed) this.out("");
    this.out(text);
    this.#printed = true;
  }
  flush(): void {
    this.#flushText();
  }
}

function stderrLine(line: string): void {
  const data = new TextEncoder().encode(line + "\n");
  let off = 0;
  while (off < data.length) off += Deno.stderr.writeSync(data.subarray(off));
}

/** The printer for a format (`note` takes human-format tool activity; default stderr). */
export function createPrinter(
  format: OutputFormat,
  finalOnly: boolean,
  out: LineSink,
  note: LineSink = stderrLine,
): Printer {
  if (finalOnly) return new FinalOnlyPrinter(out, format);
  if (format === "human") return new HumanPrinter(out, note);
  return format === "text" ? new TextPrinter(out) : new JsonPrinter(out);
}
