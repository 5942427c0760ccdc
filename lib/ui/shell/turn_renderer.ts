/**
 * Rendering a turn's raw wire stream: assistant text streamed live then committed as terminal
 * markdown, thinking dimmed (or collapsed), tool calls as compact lines with a spinner and then
 * their brief, diff and todo list, and status lines for retries, compaction and notices.
 *
 * @module
 */
import type { WireMessage } from "../../wire/messages.ts";
import type { DisplayBlock } from "../../wire/display.ts";
import { briefOf, formatBlock } from "./display_blocks.ts";
import { wrapRows } from "./layout.ts";
import { goalOutcomeLine, swarmProgressLine } from "./progress_lines.ts";
import type { MarkdownRenderer } from "./markdown.ts";
import { btwAnswerLines, btwQuestionLine, notificationLine } from "./side_lines.ts";
import type { Terminal } from "./terminal.ts";
import { style } from "./theme.ts";
import { keyArgument } from "../tool_key_argument.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Pending text above this size is committed at its last line break even without a paragraph end. */
const MAX_PENDING = 16_384;

/** Options of {@link TurnRenderer}. */
export interface TurnRendererOptions {
  /** The terminal. */
  term: Terminal;
  /** Markdown renderer (loaded lazily by the caller). */
  markdown: () => Promise<MarkdownRenderer>;
  /** Stream thinking text (else a one-line summary). */
  showThinking: boolean;
  /** The status line text. */
  statusLine: () => string;
  /** Called with StatusUpdate payload fields. */
  onStatus?: (s: { contextUsage: number | null; plan: boolean | null }) => void;
  /**
   * Rows drawn between the output and the status line (the type-ahead input), with the
   * cursor's place in them.
   */
  input?: () => { rows: string[]; cursor: { row: number; col: number } | null };
  /** Formats a steer the soul consumed (a SteerInput) for the transcript. */
  steer?: (text: string) => string;
}

interface CallState {
  id: string;
  name: string;
  args: string;
  subagent: string;
}

/** Renders one turn (create one per turn). */
export class TurnRenderer {
  readonly #o: TurnRendererOptions;
  #kind: "text" | "think" | null = null;
  #pending = "";
  #scan = 0;
  #inFence = false;
  #boundary = 0;
  #calls = new Map<string, CallState>();
  #lastCall: CallState | null = null;
  #activity = "";
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #scheduled: ReturnType<typeof setTimeout> | undefined;
  #paused = false;
  #thinkingChars = 0;
  #finished = false;
  #chain: Promise<void> = Promise.resolve();
  #pendingRows: { text: string; kind: string | null; cols: number; rows: string[] } | null = null;

  /** Create a renderer. */
  constructor(opts: TurnRendererOptions) {
    this.#o = opts;
    this.#timer = setInterval(() => {
      this.#frame = (this.#frame + 1) % SPINNER.length;
      this.#draw();
    }, 100);
  }

  /** Commit pending text and stop drawing the live area (while a modal prompt is shown). */
  pause(): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      await this.#flush();
      this.#paused = true;
      this.#o.term.clearLive();
    });
    return this.#chain;
  }

  /** Resume drawing. */
  resume(): void {
    this.#paused = false;
    this.#draw();
  }

  /** Redraw the live area now (e.g. after a key changed the input rows). */
  redraw(): void {
    this.#draw();
  }

  /** Handle one message (messages are handled strictly in order). */
  feed(msg: WireMessage): Promise<void> {
    this.#chain = this.#chain.then(() => this.#feed(msg)).catch(() => {});
    return this.#chain;
  }

  async #feed(msg: WireMessage): Promise<void> {
    const term = this.#o.term;
    switch (msg.type) {
      case "ContentPart": {
        const part = msg.payload;
        if (part.type === "text") await this.#append("text", part.text);
        else if (part.type === "think") await this.#append("think", part.think);
        else {
          await this.#flush();
          term.print(style.dim(`[${part.type}]`));
        }
        break;
      }
      case "ToolCall": {
        await this.#flush();
        const call: CallState = {
          id: msg.payload.id,
          name: msg.payload.function.name,
          args: msg.payload.function.arguments ?? "",
          subagent: "",
        };
        this.#calls.set(call.id, call);
        this.#lastCall = call;
        break;
      }
      case "ToolCallPart":
        if (this.#lastCall) this.#lastCall.args += msg.payload.arguments_part ?? "";
        break;
      case "ToolResult": {
        await this.#flush();
        const call = this.#calls.get(msg.payload.tool_call_id);
        this.#calls.delete(msg.payload.tool_call_id);
        const rv = msg.payload.return_value;
        const name = call?.name ?? "tool";
        const arg = call ? keyArgument(call.name, call.args) : "";
        const head = `${rv.is_error ? style.error("✗") : style.ok("•")} Used ${style.accent(name)}${
          arg ? ` (${arg})` : ""
        }`;
        const lines = [head];
        const brief = briefOf(rv.display);
        if (brief) lines.push(style.dim(`  ↳ ${brief}`));
        else if (rv.is_error && rv.message) lines.push(style.error(`  ↳ ${firstLine(rv.message)}`));
        if (name === "Shell" && !rv.is_error && typeof rv.output === "string" && rv.output.trim()) {
          const out = rv.output.replace(/\n+$/, "").split("\n");
          for (const l of out.slice(0, 3)) lines.push(style.dim(`  │ ${l}`));
          if (out.length > 3) lines.push(style.dim(`  │ … (${out.length - 3} more lines)`));
        }
        for (const b of rv.display as DisplayBlock[]) {
          if (b.type === "shell") continue;
          lines.push(...formatBlock(b));
        }
        term.print(lines.join("\n"));
        break;
      }
      case "SubagentEvent": {
        const parent = msg.payload.parent_tool_call_id;
        const call = parent ? this.#calls.get(parent) : undefined;
        const inner = msg.payload.event;
        if (call && call.name !== "AgentSwarm" && inner.type === "ToolCall") {
          const p = inner.payload as { function?: { name?: string } };
          call.subagent = `${msg.payload.subagent_type ?? "subagent"}: using ${
            p.function?.name ?? "a tool"
          }`;
        }
        break;
      }
      case "SwarmUpdate": {
        const call = this.#calls.get(msg.payload.parent_tool_call_id);
        if (call) call.subagent = swarmProgressLine(msg.payload);
        break;
      }
      case "GoalUpdate": {
        const line = goalOutcomeLine(msg.payload);
        if (line) {
          await this.#flush();
          term.print(style.accent(line));
        }
        break;
      }
      case "StepRetry": {
        await this.#flush();
        const p = msg.payload;
        term.print(style.warn(
          `↻ ${p.error_type}${p.status_code ? ` (${p.status_code})` : ""}; retrying in ${
            p.wait_s.toFixed(1)
          }s (attempt ${p.next_attempt}/${p.max_attempts})`,
        ));
        break;
      }
      case "StepInterrupted":
        await this.#flush();
        break;
      case "SteerInput": {
        await this.#flush();
        const input = msg.payload.user_input;
        const text = typeof input === "string"
          ? input
          : input.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join(" ");
        term.print(this.#o.steer ? this.#o.steer(text) : text);
        break;
      }
      case "CompactionBegin":
        await this.#flush();
        this.#activity = "Compacting context…";
        break;
      case "CompactionEnd":
        this.#activity = "";
        term.print(style.dim("✓ Context compacted."));
        break;
      case "MCPLoadingBegin":
        this.#activity = "Connecting to MCP servers…";
        break;
      case "MCPLoadingEnd":
        this.#activity = "";
        break;
      case "StatusUpdate":
        this.#o.onStatus?.({
          contextUsage: msg.payload.context_usage,
          plan: msg.payload.plan_mode,
        });
        break;
      case "Notification":
        await this.#flush();
        term.print(notificationLine(msg.payload));
        break;
      case "BtwBegin":
        await this.#flush();
        term.print(btwQuestionLine(msg.payload.question));
        break;
      case "BtwEnd": {
        await this.#flush();
        const md = await this.#o.markdown();
        term.print(btwAnswerLines(msg.payload, (t) => md(t, term.columns)));
        break;
      }
      case "PlanDisplay": {
        await this.#flush();
        const md = await this.#o.markdown();
        term.print(
          style.bold(`Plan (${msg.payload.file_path}):`) + "\n" +
            md(msg.payload.content, term.columns),
        );
        break;
      }
      case "HookResolved":
        if (msg.payload.action === "block") {
          await this.#flush();
          term.print(
            style.warn(
              `⛔ ${msg.payload.event} hook blocked${
                msg.payload.reason ? `: ${msg.payload.reason}` : ""
              }`,
            ),
          );
        }
        break;
      default:
        break;
    }
    this.#schedule();
  }

  /** Commit pending text and stop the spinner (call at the end of the turn). */
  async finish(): Promise<void> {
    await this.#chain;
    await this.#flush();
    // nothing may draw the turn's live area once it is gone (the prompt replaces it)
    this.#finished = true;
    clearInterval(this.#timer);
    if (this.#scheduled !== undefined) clearTimeout(this.#scheduled);
    this.#calls.clear();
    this.#activity = "";
    this.#o.term.clearLive();
  }

  async #append(kind: "text" | "think", text: string): Promise<void> {
    if (this.#kind !== kind) await this.#flush();
    this.#kind = kind;
    this.#pending += text;
    if (kind === "think") {
      this.#thinkingChars += text.length;
      if (this.#pending.length > MAX_PENDING) await this.#commitUpTo(this.#pending.length);
      return;
    }
    this.#scanBoundaries();
    if (this.#boundary > 0) {
      await this.#commitUpTo(this.#boundary);
    } else if (this.#pending.length > MAX_PENDING) {
      const cut = this.#pending.lastIndexOf("\n") + 1;
      await this.#commitUpTo(cut > 0 && !this.#inFence ? cut : this.#pending.length);
    }
  }

  /** Find the last paragraph end outside a code fence in the pending text. */
  #scanBoundaries(): void {
    let nl: number;
    while ((nl = this.#pending.indexOf("\n", this.#scan)) >= 0) {
      const line = this.#pending.slice(this.#scan, nl);
      if (/^\s*(```|~~~)/.test(line)) {
        this.#inFence = !this.#inFence;
        if (!this.#inFence) this.#boundary = nl + 1;
      } else if (!this.#inFence && line.trim() === "" && this.#scan > 0) {
        this.#boundary = nl + 1;
      }
      this.#scan = nl + 1;
    }
  }

  async #commitUpTo(end: number): Promise<void> {
    if (end <= 0) return;
    const chunk = this.#pending.slice(0, end);
    this.#pending = this.#pending.slice(end);
    this.#scan = Math.max(0, this.#scan - end);
    this.#boundary = 0;
    await this.#emit(chunk);
  }

  async #flush(): Promise<void> {
    if (this.#pending) {
      const chunk = this.#pending;
      this.#pending = "";
      await this.#emit(chunk);
    }
    if (this.#kind === "think" && !this.#o.showThinking && this.#thinkingChars > 0) {
      this.#o.term.print(style.thinking(`✻ Thought (${this.#thinkingChars} characters)`));
    }
    if (this.#kind === "think") this.#thinkingChars = 0;
    this.#scan = 0;
    this.#boundary = 0;
    this.#inFence = false;
    this.#kind = null;
  }

  async #emit(chunk: string): Promise<void> {
    const term = this.#o.term;
    if (this.#kind === "think") {
      if (!this.#o.showThinking) return;
      const text = chunk.replace(/^\n+|\s+$/g, "");
      if (text) term.print(text.split("\n").map((l) => style.thinking(l)).join("\n"));
      return;
    }
    if (!chunk.trim()) return;
    const md = await this.#o.markdown();
    term.print(md(chunk, Math.max(20, term.columns - 1)));
  }

  #schedule(): void {
    if (this.#scheduled !== undefined) return;
    this.#scheduled = setTimeout(() => {
      this.#scheduled = undefined;
      this.#draw();
    }, 33);
  }

  /** The live rows of the pending text (cached: keys redraw far more often than text arrives). */
  #pendingTail(cols: number, maxRows: number): string[] {
    const text = this.#kind === "think" && !this.#o.showThinking ? "" : this.#pending;
    const c = this.#pendingRows;
    if (c && c.text === text && c.kind === this.#kind && c.cols === cols) {
      return c.rows.slice(-maxRows);
    }
    const tail = text.length > 8192 ? text.slice(-8192) : text;
    const wrapped = tail ? tail.split("\n").flatMap((l) => wrapRows(l, cols)) : [];
    const rows = this.#kind === "think" ? wrapped.map((r) => style.thinking(r)) : wrapped;
    this.#pendingRows = { text, kind: this.#kind, cols, rows };
    return rows.slice(-maxRows);
  }

  #draw(): void {
    if (this.#paused || this.#finished) return;
    const term = this.#o.term;
    const cols = term.columns;
    const input = this.#o.input?.() ?? null;
    const maxRows = Math.max(3, term.rows - 8 - (input?.rows.length ?? 0));
    const rows: string[] = [];
    if (this.#pending) rows.push(...this.#pendingTail(cols, maxRows));
    const spin = style.accent(SPINNER[this.#frame]);
    for (const call of this.#calls.values()) {
      const arg = keyArgument(call.name, call.args);
      rows.push(
        ...wrapRows(`${spin} Using ${style.accent(call.name)}${arg ? ` (${arg})` : ""}`, cols)
          .slice(0, 2),
      );
      if (call.subagent) rows.push(style.dim(`  ↳ ${call.subagent}`));
    }
    if (this.#activity) rows.push(`${spin} ${this.#activity}`);
    if (this.#kind === "think" && !this.#o.showThinking) {
      rows.push(`${spin} ${style.thinking("Thinking…")}`);
    }
    if (rows.length === 0) rows.push(`${spin} ${style.dim("Working… (ctrl-c to cancel)")}`);
    let cursor: { row: number; col: number } | null = null;
    if (input) {
      if (input.cursor) cursor = { row: rows.length + input.cursor.row, col: input.cursor.col };
      rows.push(...input.rows);
    }
    rows.push(this.#o.statusLine());
    term.render(rows, cursor);
  }
}

function shorten(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

function firstLine(text: string): string {
  return shorten(text.split("\n")[0], 200);
}
