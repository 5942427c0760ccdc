/**
 * A subagent's `output` file (`subagents/<id>/output`): the reference's human-readable
 * transcript of each run, the same for foreground and background runs. Stage lines
 * (`[stage] runner_started` … `[stage] run_soul_finished`), the text the agent streams,
 * `[tool] <name>` and `[tool_result] success|error[: brief]` lines, and the final
 * `[summary]`. A background run also mirrors every write to its task's output.
 *
 * Appends are queued so they land in call order; {@link SubagentOutputWriter.flush} waits for
 * them. A failed append never interrupts the agent.
 *
 * @module
 */
import type { WireMessage } from "../wire/messages.ts";

/** Appends transcript lines to a subagent's output file (and a mirror). */
export class SubagentOutputWriter {
  readonly #path: string;
  readonly #mirror: ((text: string) => void) | null;
  #queue: Promise<void> = Promise.resolve();

  /** A writer appending to `path`, mirroring each write to `mirror` when given. */
  constructor(path: string, mirror: ((text: string) => void) | null = null) {
    this.#path = path;
    this.#mirror = mirror;
  }

  /** `[stage] <name>`. */
  stage(name: string): void {
    this.#append(`[stage] ${name}\n`);
  }

  /** `\n[summary]\n<text>\n` (nothing for an empty text). */
  summary(text: string): void {
    if (text) this.#append(`\n[summary]\n${text}\n`);
  }

  /** `[error] <message>`. */
  error(message: string): void {
    this.#append(`[error] ${message}\n`);
  }

  /** One merged message of the child's wire: its text, tool calls and tool results. */
  wireMessage(msg: WireMessage): void {
    const text = transcriptText(msg);
    if (text) this.#append(text);
  }

  /** Wait until every write so far is on disk. */
  flush(): Promise<void> {
    return this.#queue;
  }

  #append(text: string): void {
    this.#mirror?.(text);
    this.#queue = this.#queue.then(() =>
      Deno.writeTextFile(this.#path, text, { append: true }).catch(() => {})
    );
  }
}

/** The transcript text of one merged wire message ("" when it has none). */
export function transcriptText(msg: WireMessage): string {
  if (!("type" in msg)) return "";
  const m = msg as { type: string; payload?: Record<string, unknown> };
  const p = m.payload ?? {};
  switch (m.type) {
    case "ContentPart":
      return p.type === "text" && typeof p.text === "string" ? p.text : "";
    case "ToolCall": {
      const fn = p.function as { name?: string } | undefined;
      return `[tool] ${fn?.name ?? "?"}\n`;
    }
    case "ToolResult": {
      const rv = p.return_value as
        | { is_error?: boolean; display?: { type?: string; text?: string }[] }
        | undefined;
      const status = rv?.is_error ? "error" : "success";
      const brief = rv?.display?.find((d) => d.type === "brief")?.text ?? "";
      return brief ? `[tool_result] ${status}: ${brief}\n` : `[tool_result] ${status}\n`;
    }
    default:
      return "";
  }
}
