/**
 * Rendering a turn's raw wire stream: assistant text streamed live then committed as terminal
 * markdown, thinking dimmed (or collapsed), tool calls as compact lines with a spinner and then
 * their brief, diff and todo list, and status lines for retries, compaction and notices.
 *
 * @module
 */
import type { EventPayload, WireMessage } from "../../wire/messages.ts";
import type { DisplayBlock } from "../../wire/display.ts";
import type { ToolOutputFeed } from "../../tooling/live_output.ts";
import { keyArgument } from "../tool_key_argument.ts";
import { briefOf, formatBlock } from "./display_blocks.ts";
import { wrapRows } from "./layout.ts";
import { goalOutcomeLine, swarmProgressLine } from "./progress_lines.ts";
import type { MarkdownRenderer } from "./markdown.ts";
import { btwAnswerLines, btwQuestionLine, notificationLine } from "./side_lines.ts";
import type { Terminal } from "./terminal.ts";
import { colorsEnabled, style } from "./theme.ts";

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Pending text above this size is committed at its last line break even without a paragraph end. */
const MAX_PENDING = 16_384;
/** A list item's first line (bullet or number). */
const LIST_ITEM = /^\s{0,3}([-*+]|\d{1,9}[.)])(\s|$)/;

/**
 * Whether a line after a blank line starts a new block (true), continues the one before
 * (false), or cannot tell yet (null: a partial line too short to decide).
 */
function startsNewBlock(line: string, complete: boolean, inList: boolean): boolean | null {
  if (line === "") return null;
  if (/^\s/.test(line)) return line.trim() === "" ? null : false;
  if (inList) {
    if (LIST_ITEM.test(line)) return false;
    if (!complete && /^([-*+]|\d{1,9}[.)]?)$/.test(line)) return null;
  }
  return true;
}

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
  /** The turn is a `/compact` command, which reports the compaction itself. */
  quietCompaction?: boolean;
  /** The session's live tool output (the last lines of a running Shell command are drawn). */
  toolOutput?: ToolOutputFeed;
}

interface CallState {
  id: string;
  name: string;
  args: string;
  subagent: string;
  started: number;
  /** Last lines of output streamed so far (Shell). */
  output: string[];
}

/** Renders one turn (create one per turn). */
export class TurnRenderer {
  readonly #o: TurnRendererOptions;
  #kind: "text" | "think" | null = null;
  #pending = "";
  #scan = 0;
  #inFence = false;
  #boundary = 0;
  /** Offset just after a blank line that ends a block if the next line starts a new one. */
  #candidate = -1;
  /** The block being scanned is a list. */
  #inList = false;
  /** The next committed text follows a block end (a blank line goes before it). */
  #gap = false;
  #calls = new Map<string, CallState>();
  #lastCall: CallState | null = null;
  #activity = "";
  #frame = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #scheduled: ReturnType<typeof setTimeout> | undefined;
  #paused = false;
  #thinkingChars = 0;
  #outputTokens = 0;
  #thinkLabelled = false;
  readonly #approved = new Set<string>();
  readonly #started = Date.now();
  #finished = false;
  #chain: Promise<void> = Promise.resolve();
  #pendingRows: { text: string; kind: string | null; cols: number; rows: string[] } | null = null;

  readonly #unsubscribeOutput: () => void;

  /** Create a renderer. */
  constructor(opts: TurnRendererOptions) {
    this.#o = opts;
    this.#unsubscribeOutput = opts.toolOutput?.subscribe((id, line) => {
      const call = this.#calls.get(id);
      if (!call) return;
      // deno-lint-ignore no-control-regex
      call.output.push(line.replace(/\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]/g, ""));
      if (call.output.length > LIVE_OUTPUT_ROWS) call.output.shift();
      this.#schedule();
    }) ?? (() => {});
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

  /** The arguments (JSON text) of a running tool call, if known. */
  callArgs(toolCallId: string): string | undefined {
    return this.#calls.get(toolCallId)?.args;
  }

  /** An approval showed this call's command or diff: its result does not repeat the diff. */
  approvalShown(toolCallId: string): void {
    this.#approved.add(toolCallId);
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
          started: Date.now(),
          output: [],
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
        const approved = this.#approved.delete(msg.payload.tool_call_id);
        term.print(toolResultLines(call ?? null, msg.payload.return_value, approved).join("\n"));
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
      // each step's text, a nested turn's (/init) and a command's own words are paragraphs of
      // their own: text that follows them never runs on in the same line
      case "StepBegin":
      case "TurnBegin":
      case "TurnEnd":
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
        if (!this.#o.quietCompaction) term.print(style.dim("✓ Context compacted."));
        break;
      case "MCPLoadingBegin":
        this.#activity = "Connecting to MCP servers…";
        break;
      case "MCPLoadingEnd":
        this.#activity = "";
        break;
      case "StatusUpdate":
        if (msg.payload.token_usage) this.#outputTokens += msg.payload.token_usage.output;
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
    this.#unsubscribeOutput();
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
      if (this.#pending.length > MAX_PENDING) await this.#commitUpTo(this.#pending.length, false);
      return;
    }
    this.#scanBoundaries();
    if (this.#boundary > 0) {
      await this.#commitUpTo(this.#boundary, true);
    } else if (this.#pending.length > MAX_PENDING) {
      const cut = this.#pending.lastIndexOf("\n") + 1;
      await this.#commitUpTo(cut > 0 && !this.#inFence ? cut : this.#pending.length, false);
    }
  }

  /**
   * Find the last block end outside a code fence in the pending text. Only complete lines
   * count, so where the stream's chunks split the text never matters. A blank line ends a block
   * once the next line shows it starts a new one: an indented line continues the block (a list
   * item's next paragraph) and so does another item after a list.
   */
  #scanBoundaries(): void {
    let nl: number;
    while ((nl = this.#pending.indexOf("\n", this.#scan)) >= 0) {
      this.#scanLine(this.#pending.slice(this.#scan, nl), nl + 1);
      this.#scan = nl + 1;
    }
    if (this.#candidate >= 0 && !this.#inFence) {
      const partial = this.#pending.slice(this.#scan);
      if (startsNewBlock(partial, false, this.#inList)) this.#confirmCandidate(partial);
    }
  }

  #scanLine(line: string, next: number): void {
    const blank = line.trim() === "";
    if (!this.#inFence && this.#candidate >= 0 && !blank) {
      const starts = startsNewBlock(line, true, this.#inList);
      if (starts) this.#confirmCandidate(line);
      else this.#candidate = -1;
    }
    if (/^\s{0,3}(```|~~~)/.test(line)) {
      this.#inFence = !this.#inFence;
      // a code block ends a block by itself, blank line or not
      if (!this.#inFence) {
        this.#boundary = next;
        this.#inList = false;
      }
      return;
    }
    if (this.#inFence) return;
    if (blank) {
      if (next > 1 && this.#pending.slice(0, next).trim()) this.#candidate = next;
    } else if (LIST_ITEM.test(line)) this.#inList = true;
  }

  #confirmCandidate(line: string): void {
    this.#boundary = this.#candidate;
    this.#candidate = -1;
    this.#inList = LIST_ITEM.test(line);
  }

  async #commitUpTo(end: number, blockEnd: boolean): Promise<void> {
    if (end <= 0) return;
    const chunk = this.#pending.slice(0, end);
    this.#pending = this.#pending.slice(end);
    this.#scan = Math.max(0, this.#scan - end);
    this.#candidate = this.#candidate > end ? this.#candidate - end : -1;
    this.#boundary = 0;
    await this.#emit(chunk);
    // marked separates blocks by a blank line: text committed after a block end starts with one
    if (chunk.trim()) this.#gap = blockEnd;
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
    if (this.#kind === "think") {
      this.#thinkingChars = 0;
      this.#thinkLabelled = false;
    }
    this.#scan = 0;
    this.#boundary = 0;
    this.#candidate = -1;
    this.#inFence = false;
    this.#inList = false;
    this.#gap = false;
    this.#kind = null;
  }

  async #emit(chunk: string): Promise<void> {
    const term = this.#o.term;
    if (this.#kind === "think") {
      if (!this.#o.showThinking) return;
      const text = chunk.replace(/^\n+|\s+$/g, "");
      if (!text) return;
      // without colours, italics cannot set thinking apart from the answer: label it
      const head = !colorsEnabled() && !this.#thinkLabelled ? "✻ Thinking:\n" : "";
      this.#thinkLabelled = true;
      const width = colorsEnabled() ? term.columns : term.columns - 2;
      const rows = text.split("\n").flatMap((l) => wrapRows(l, width));
      term.print(head + rows.map(thinkingRow).join("\n"));
      return;
    }
    if (!chunk.trim()) return;
    const md = await this.#o.markdown();
    const out = md(chunk, Math.max(20, term.columns - 1)).replace(/^\n+/, "");
    term.print(this.#gap ? "\n" + out : out);
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
    const width = this.#kind === "think" && !colorsEnabled() ? cols - 2 : cols;
    const wrapped = tail ? tail.split("\n").flatMap((l) => wrapRows(l, width)) : [];
    const rows = this.#kind === "think" ? wrapped.map(thinkingRow) : wrapped;
    this.#pendingRows = { text, kind: this.#kind, cols, rows };
    return rows.slice(-maxRows);
  }

  #draw(): void {
    if (this.#paused || this.#finished) return;
    const term = this.#o.term;
    const cols = term.columns;
    const input = this.#o.input?.() ?? null;
    // at most half the screen: a narrowed terminal re-wraps the live rows over more rows, and
    // rows pushed off the top could no longer be erased
    const maxRows = Math.max(
      3,
      Math.min(term.rows - 8, Math.floor(term.rows / 2)) - (input?.rows.length ?? 0),
    );
    const rows: string[] = [];
    if (this.#pending) {
      const tail = this.#pendingTail(cols, maxRows);
      // the blank line the committed text will get above this block, shown while it streams
      if (this.#gap && this.#kind === "text" && tail.length > 0 && this.#pending.trim()) {
        rows.push("");
      }
      rows.push(...tail);
    }
    const spin = style.accent(SPINNER[this.#frame]);
    const now = Date.now();
    for (const call of this.#calls.values()) {
      const arg = keyArgument(call.name, call.args);
      const head = `${spin} Using ${style.accent(call.name)}${arg ? ` (${arg})` : ""}`;
      rows.push(
        ...wrapRows(`${head}${style.dim(` · ${elapsed(now - call.started)}`)}`, cols).slice(0, 2),
      );
      if (call.subagent) rows.push(style.dim(`  ↳ ${call.subagent}`));
      for (const l of call.output.slice(-LIVE_OUTPUT_ROWS)) {
        rows.push(truncate(style.dim(`  │ ${l}`), cols));
      }
    }
    if (this.#activity) rows.push(`${spin} ${this.#activity}`);
    if (this.#calls.size === 0 && !this.#activity) {
      const label = this.#kind === "think"
        ? style.thinking("Thinking…")
        : this.#kind === "text"
        ? "Writing…"
        : "Working…";
      const tokens = this.#outputTokens > 0 ? ` · ↓ ${formatCount(this.#outputTokens)} tokens` : "";
      rows.push(
        truncate(
          `${spin} ${label}${
            style.dim(` ${elapsed(now - this.#started)}${tokens} · esc to interrupt`)
          }`,
          cols,
        ),
      );
    }
    let cursor: { row: number; col: number } | null = null;
    if (input) {
      if (input.cursor) cursor = { row: rows.length + input.cursor.row, col: input.cursor.col };
      rows.push(...input.rows);
    }
    rows.push(this.#o.statusLine());
    term.render(rows, cursor);
  }
}

/** A row of thinking text: dim italics, or marked with a bar when colours are off. */
function thinkingRow(row: string): string {
  return colorsEnabled() ? style.thinking(row) : `│ ${row}`;
}

/** Rows of a running command's output shown live under its tool line. */
const LIVE_OUTPUT_ROWS = 5;

/** Elapsed time as `5s` or `2m 05s`. */
export function elapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
}

function formatCount(n: number): string {
  return n < 1000 ? String(n) : `${(n / 1000).toFixed(1)}k`;
}

function truncate(row: string, cols: number): string {
  return wrapRows(row, cols)[0] ?? "";
}

/**
 * The transcript lines of a finished tool call (live and in a resumed session's transcript):
 * `• Used Name (key argument)` (`✗` when it failed or was rejected), its brief or error, the
 * first lines of a Shell command's output, and its display blocks (a diff already shown in the
 * approval is not repeated). `collapsed` (a resumed transcript) stops after the brief.
 */
export function toolResultLines(
  call: { name: string; args: string } | null,
  rv: EventPayload<"ToolResult">["return_value"],
  approved: boolean,
  opts: { collapsed?: boolean } = {},
): string[] {
  const name = call?.name ?? "tool";
  const arg = call ? keyArgument(call.name, call.args) : "";
  const head = `${rv.is_error ? style.error("✗") : style.ok("•")} Used ${style.accent(name)}${
    arg ? ` (${arg})` : ""
  }`;
  const lines = [head];
  const brief = briefOf(rv.display);
  if (brief) lines.push(style.dim(`  ↳ ${brief}`));
  else if (rv.is_error && rv.message) lines.push(style.error(`  ↳ ${firstLine(rv.message)}`));
  if (opts.collapsed) return lines;
  if (name === "Shell" && !rv.is_error && typeof rv.output === "string" && rv.output.trim()) {
    const out = rv.output.replace(/\n+$/, "").split("\n");
    for (const l of out.slice(0, 3)) lines.push(style.dim(`  │ ${l}`));
    if (out.length > 3) lines.push(style.dim(`  │ … (${out.length - 3} more lines)`));
  }
  for (const b of rv.display as DisplayBlock[]) {
    if (b.type === "shell" || (approved && b.type === "diff")) continue;
    lines.push(...formatBlock(b));
  }
  return lines;
}

function shorten(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

function firstLine(text: string): string {
  return shorten(text.split("\n")[0], 200);
}
