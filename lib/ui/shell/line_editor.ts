/**
 * The prompt's line editor: multi-line editing, history recall, Tab completion, bracketed
 * paste, and the Ctrl-C / Ctrl-D / Ctrl-X keys of the shell.
 *
 * @module
 */
import type { Key } from "./keys.ts";
import { commonPrefix, complete, type CompletionSource } from "./completion.ts";
import type { HistoryStore } from "./history_store.ts";
import { displayWidth, layoutLine, stripAnsi } from "./layout.ts";
import type { Terminal } from "./terminal.ts";
import { style } from "./theme.ts";

/** What {@link LineEditor.read} returns. */
export type ReadResult =
  | { kind: "line"; text: string; shellMode: boolean }
  | { kind: "exit" };

/** Options of {@link LineEditor}. */
export interface LineEditorOptions {
  /** The terminal. */
  term: Terminal;
  /** Prompt history. */
  history: HistoryStore;
  /** Completion sources. */
  completion: CompletionSource;
  /** Rows shown under the input (the status line). */
  footer: () => string[];
}

/** Reads one input at a time from the terminal. */
export class LineEditor {
  readonly #opts: LineEditorOptions;
  /** Whether input runs as a shell command (toggled with Ctrl-X). */
  shellMode = false;
  #buf = "";
  #cur = 0;
  #histIndex = 0;
  #draft = "";
  #hint = "";
  #menu: string[] = [];
  #armedExit = false;

  /** Create an editor. */
  constructor(opts: LineEditorOptions) {
    this.#opts = opts;
  }

  /** Read one input; `initial` pre-fills the buffer. */
  read(initial = ""): Promise<ReadResult> {
    this.#buf = initial;
    this.#cur = initial.length;
    this.#histIndex = this.#opts.history.entries.length;
    this.#draft = "";
    this.#hint = "";
    this.#menu = [];
    this.#armedExit = false;
    const { promise, resolve } = Promise.withResolvers<ReadResult>();
    let busy = Promise.resolve();
    const finish = (r: ReadResult) => {
      this.#opts.term.setHandler(null);
      resolve(r);
    };
    this.#opts.term.setHandler((key) => {
      // keys are handled in order even when completion awaits the file system
      busy = busy.then(() => this.#onKey(key, finish)).catch(() => {});
    });
    this.#draw();
    return promise;
  }

  /** Redraw (e.g. after the footer changed). */
  redraw(): void {
    this.#draw();
  }

  async #onKey(key: Key, finish: (r: ReadResult) => void): Promise<void> {
    const hadHint = this.#hint !== "";
    this.#hint = "";
    if (key.name !== "tab") this.#menu = [];
    if (key.name !== "ctrl-c") this.#armedExit = false;
    switch (key.name) {
      case "char":
      case "paste":
        this.#insert(key.text ?? "");
        break;
      case "newline":
        this.#insert("\n");
        break;
      case "enter": {
        if (this.#buf.slice(0, this.#cur).endsWith("\\") && this.#cur === this.#buf.length) {
          this.#buf = this.#buf.slice(0, -1);
          this.#cur--;
          this.#insert("\n");
          break;
        }
        const text = this.#buf;
        this.#opts.term.clearLive();
        finish({ kind: "line", text, shellMode: this.shellMode });
        return;
      }
      case "backspace":
        if (this.#cur > 0) {
          const prev = prevBoundary(this.#buf, this.#cur);
          this.#buf = this.#buf.slice(0, prev) + this.#buf.slice(this.#cur);
          this.#cur = prev;
        } else if (this.#buf === "" && this.shellMode) {
          this.shellMode = false;
        }
        break;
      case "delete":
        if (this.#cur < this.#buf.length) {
          this.#buf = this.#buf.slice(0, this.#cur) +
            this.#buf.slice(nextBoundary(this.#buf, this.#cur));
        }
        break;
      case "left":
      case "ctrl-b":
        this.#cur = prevBoundary(this.#buf, this.#cur);
        break;
      case "right":
      case "ctrl-f":
        this.#cur = nextBoundary(this.#buf, this.#cur);
        break;
      case "home":
      case "ctrl-a":
        this.#cur = this.#buf.lastIndexOf("\n", this.#cur - 1) + 1;
        break;
      case "end":
      case "ctrl-e": {
        const nl = this.#buf.indexOf("\n", this.#cur);
        this.#cur = nl < 0 ? this.#buf.length : nl;
        break;
      }
      case "ctrl-k": {
        const nl = this.#buf.indexOf("\n", this.#cur);
        this.#buf = this.#buf.slice(0, this.#cur) + (nl < 0 ? "" : this.#buf.slice(nl));
        break;
      }
      case "ctrl-u": {
        const start = this.#buf.lastIndexOf("\n", this.#cur - 1) + 1;
        this.#buf = this.#buf.slice(0, start) + this.#buf.slice(this.#cur);
        this.#cur = start;
        break;
      }
      case "ctrl-w": {
        const before = this.#buf.slice(0, this.#cur).replace(/\S+\s*$|\s+$/, "");
        this.#buf = before + this.#buf.slice(this.#cur);
        this.#cur = before.length;
        break;
      }
      case "up":
        if (!this.#buf.slice(0, this.#cur).includes("\n")) this.#historyMove(-1);
        else this.#verticalMove(-1);
        break;
      case "down":
        if (!this.#buf.slice(this.#cur).includes("\n")) this.#historyMove(1);
        else this.#verticalMove(1);
        break;
      case "tab":
        await this.#complete();
        break;
      case "ctrl-x":
        this.shellMode = !this.shellMode;
        break;
      case "ctrl-c":
        if (this.#buf !== "") {
          this.#buf = "";
          this.#cur = 0;
        } else if (this.#armedExit || hadHint) {
          this.#opts.term.clearLive();
          finish({ kind: "exit" });
          return;
        } else {
          this.#armedExit = true;
          this.#hint = "Press Ctrl-C again to exit, or Ctrl-D.";
        }
        break;
      case "ctrl-d":
        if (this.#buf === "") {
          this.#opts.term.clearLive();
          finish({ kind: "exit" });
          return;
        }
        if (this.#cur < this.#buf.length) {
          this.#buf = this.#buf.slice(0, this.#cur) +
            this.#buf.slice(nextBoundary(this.#buf, this.#cur));
        }
        break;
      case "ctrl-l":
        this.#opts.term.print("\x1b[2J\x1b[H");
        break;
      default:
        break;
    }
    this.#draw();
  }

  #insert(text: string): void {
    this.#buf = this.#buf.slice(0, this.#cur) + text + this.#buf.slice(this.#cur);
    this.#cur += text.length;
  }

  #historyMove(dir: number): void {
    const entries = this.#opts.history.entries;
    const next = this.#histIndex + dir;
    if (next < 0 || next > entries.length) return;
    if (this.#histIndex === entries.length) this.#draft = this.#buf;
    this.#histIndex = next;
    this.#buf = next === entries.length ? this.#draft : entries[next];
    this.#cur = this.#buf.length;
  }

  #verticalMove(dir: number): void {
    const lineStart = this.#buf.lastIndexOf("\n", this.#cur - 1) + 1;
    const col = this.#cur - lineStart;
    if (dir < 0) {
      const prevEnd = lineStart - 1;
      const prevStart = this.#buf.lastIndexOf("\n", prevEnd - 1) + 1;
      this.#cur = Math.min(prevStart + col, prevEnd);
    } else {
      const nextStart = this.#buf.indexOf("\n", this.#cur) + 1;
      let nextEnd = this.#buf.indexOf("\n", nextStart);
      if (nextEnd < 0) nextEnd = this.#buf.length;
      this.#cur = Math.min(nextStart + col, nextEnd);
    }
  }

  async #complete(): Promise<void> {
    if (this.shellMode) return;
    const c = await complete(this.#buf, this.#cur, this.#opts.completion);
    if (!c || c.candidates.length === 0) {
      this.#menu = [];
      return;
    }
    const current = this.#buf.slice(c.start, c.end);
    let replacement = c.candidates.length === 1 ? c.candidates[0] : commonPrefix(c.candidates);
    if (c.candidates.length === 1 && !replacement.endsWith("/")) replacement += " ";
    if (replacement.length > current.length || c.candidates.length === 1) {
      this.#buf = this.#buf.slice(0, c.start) + replacement + this.#buf.slice(c.end);
      this.#cur = c.start + replacement.length;
      this.#menu = [];
    } else {
      const isCommand = this.#buf.startsWith("/") && c.start === 1;
      this.#menu = c.candidates.map((s) => (isCommand ? "/" + s : "@" + s));
    }
  }

  #draw(): void {
    const term = this.#opts.term;
    const cols = term.columns;
    const prefix = this.shellMode ? "$ " : "✨ ";
    const cont = " ".repeat(displayWidth(prefix));
    const rows: string[] = [];
    let cursor = { row: 0, col: 0 };
    let offset = 0;
    const lines = this.#buf.split("\n");
    lines.forEach((line, i) => {
      const p = i === 0 ? prefix : cont;
      const inLine = this.#cur >= offset && this.#cur <= offset + line.length;
      const lay = layoutLine(p + line, p.length + (inLine ? this.#cur - offset : 0), cols);
      if (inLine && (this.#cur < offset + line.length + 1)) {
        cursor = { row: rows.length + lay.row, col: lay.col };
      }
      const styled = lay.rows.map((r, j) =>
        j === 0 && i === 0
          ? style.prompt(r.slice(0, p.length), this.shellMode) + r.slice(p.length)
          : r
      );
      rows.push(...styled);
      offset += line.length + 1;
    });
    const footer: string[] = [];
    if (this.#menu.length > 0) {
      const shown = this.#menu.slice(0, 10);
      footer.push(style.dim(shown.join("  ") + (this.#menu.length > 10 ? "  …" : "")));
    }
    if (this.#hint) footer.push(style.dim(this.#hint));
    footer.push(...this.#opts.footer());
    term.render([...rows, ...footer.map((f) => truncateRow(f, cols))], cursor);
  }
}

const segmenter = new Intl.Segmenter();

function prevBoundary(text: string, i: number): number {
  if (i <= 0) return 0;
  let last = 0;
  for (const { index } of segmenter.segment(text.slice(Math.max(0, i - 16), i))) {
    last = index;
  }
  return Math.max(0, i - 16) + last;
}

function nextBoundary(text: string, i: number): number {
  if (i >= text.length) return text.length;
  const first = segmenter.segment(text.slice(i, i + 16))[Symbol.iterator]().next().value;
  return i + (first?.segment.length ?? 1);
}

/** Cut a (possibly styled) footer row to one terminal row. */
function truncateRow(row: string, cols: number): string {
  if (displayWidth(row) <= cols) return row;
  // the footer is short status text: dropping styling to truncate exactly is fine
  const plain = stripAnsi(row);
  let out = "";
  for (const { segment } of segmenter.segment(plain)) {
    if (displayWidth(out + segment) > cols - 1) break;
    out += segment;
  }
  return out + "…";
}
