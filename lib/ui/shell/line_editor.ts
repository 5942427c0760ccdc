/**
 * The prompt's line editor: multi-line editing, history recall, Tab completion, bracketed
 * paste, and the Ctrl-C / Ctrl-D / Ctrl-X keys of the shell.
 *
 * @module
 */
import type { Key } from "./keys.ts";
import { commonPrefix, complete, type Completion, type CompletionSource } from "./completion.ts";
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
  /** Extra key bindings, tried before the built-in ones; resolve true when a key was taken. */
  keyBindings?: (key: Key, edit: EditorAccess) => boolean | Promise<boolean>;
}

/** What an extra key binding may do to the editor. */
export interface EditorAccess {
  /** The text typed so far. */
  readonly text: string;
  /** Whether the editor reads a prompt (false: type-ahead while a turn runs). */
  readonly atPrompt: boolean;
  /** Insert text at the cursor. */
  insert(text: string): void;
  /** Replace the whole text (cursor at the end). */
  setText(text: string): void;
  /** Show a hint under the input until the next key. */
  hint(text: string): void;
}

/** What the editor does with keys while a turn runs (see {@link LineEditor.attachTurn}). */
export interface TurnInputHandlers {
  /** Enter on a non-empty line: the text, queued for after the turn (the buffer is cleared). */
  onSubmit(text: string): void;
  /** Ctrl-S on a non-empty line: the text, steered into the running turn (buffer cleared). */
  onSteer(text: string): void;
  /** Ctrl-C: interrupt the turn (the typed text is kept). */
  onInterrupt(): void;
  /** Redraw the live area that embeds {@link LineEditor.frame}. */
  render(): void;
}

/** The editor's rows and cursor, for embedding in another live area. */
export interface EditorFrame {
  /** Rows, each fitting one terminal row. */
  rows: string[];
  /** Cursor position within `rows`. */
  cursor: { row: number; col: number };
}

type EditorContext =
  | { kind: "prompt"; finish: (r: ReadResult) => void }
  | { kind: "turn"; handlers: TurnInputHandlers };

/**
 * Reads input from the terminal: one prompt at a time with {@link read}, and type-ahead while a
 * turn runs with {@link attachTurn}. The buffer survives between the two, so nothing typed is
 * lost when a turn ends.
 */
export class LineEditor {
  readonly #opts: LineEditorOptions;
  /** Whether input runs as a shell command (toggled with Ctrl-X). */
  shellMode = false;
  #buf = "";
  #cur = 0;
  #histIndex = 0;
  #draft = "";
  #hint = "";
  #menu: CompletionMenu | null = null;
  #armedExit = false;
  #ctx: EditorContext | null = null;
  /**
   * The terminal holds the next key until this one is handled (completion may await the file
   * system), then gives it to whoever takes keys then: this editor at the prompt or in a turn,
   * a modal, or nobody yet (it waits in the terminal, in order with the keys after it).
   */
  readonly #listener = (key: Key): Promise<void> => this.#route(key).catch(() => {});

  /** Create an editor. */
  constructor(opts: LineEditorOptions) {
    this.#opts = opts;
  }

  /** The text typed so far. */
  get text(): string {
    return this.#buf;
  }

  /**
   * Read one input. `initial` replaces the buffer; without it, text typed ahead (during the
   * last turn) is kept.
   */
  read(initial?: string): Promise<ReadResult> {
    if (initial !== undefined) this.#setBuffer(initial);
    this.#histIndex = this.#opts.history.list(this.shellMode).length;
    this.#draft = "";
    this.#hint = "";
    this.#menu = null;
    this.#armedExit = false;
    const { promise, resolve } = Promise.withResolvers<ReadResult>();
    this.#ctx = {
      kind: "prompt",
      finish: (r) => {
        this.#ctx = null;
        this.#opts.term.setHandler(null);
        resolve(r);
      },
    };
    this.#draw();
    this.#opts.term.setHandler(this.#listener);
    this.#opts.term.setRedraw(() => this.#draw());
    return promise;
  }

  /**
   * Edit type-ahead while a turn runs: keys go to the editor, drawing goes through
   * `handlers.render` (which embeds {@link frame}). Call again after a modal took the keys.
   */
  attachTurn(handlers: TurnInputHandlers): void {
    if (this.#ctx?.kind !== "turn") {
      this.#histIndex = this.#opts.history.entries.length;
      this.#menu = null;
      this.#hint = "";
    }
    this.#ctx = { kind: "turn", handlers };
    this.#opts.term.setHandler(this.#listener);
    this.#opts.term.setRedraw(() => this.#draw());
  }

  /** Stop taking keys for a turn (keys typed from now on wait for the next {@link read}). */
  detachTurn(): void {
    if (this.#ctx?.kind !== "turn") return;
    this.#ctx = null;
    this.#menu = null;
    this.#hint = "";
    this.#opts.term.setHandler(null);
  }

  /** Prepend text to the buffer (e.g. steers a cancelled turn did not consume). */
  restore(text: string): void {
    const sep = this.#buf ? "\n" : "";
    this.#buf = text + sep + this.#buf;
    this.#cur += text.length + sep.length;
  }

  /** Redraw (e.g. after the footer changed). */
  redraw(): void {
    this.#draw();
  }

  #setBuffer(text: string): void {
    this.#buf = text;
    this.#cur = text.length;
  }

  async #route(key: Key): Promise<void> {
    const ctx = this.#ctx;
    if (!ctx) {
      // not reading (the terminal only calls the editor while it reads): stop taking keys and
      // give this one back, first for whoever listens next
      this.#opts.term.setHandler(null);
      this.#opts.term.inject(key);
      return;
    }
    if (ctx.kind === "turn") await this.#onTurnKey(key, ctx.handlers);
    else await this.#onKey(key, ctx.finish);
  }

  async #onTurnKey(key: Key, handlers: TurnInputHandlers): Promise<void> {
    switch (key.name) {
      case "enter": {
        if (this.#buf.slice(0, this.#cur).endsWith("\\") && this.#cur === this.#buf.length) {
          this.#buf = this.#buf.slice(0, -1);
          this.#cur--;
          this.#insert("\n");
          break;
        }
        const text = this.#buf;
        this.#hint = "";
        this.#menu = null;
        if (text.trim()) {
          this.#setBuffer("");
          this.#histIndex = this.#opts.history.entries.length;
          handlers.onSubmit(text);
        }
        break;
      }
      case "ctrl-s": {
        const text = this.#buf;
        this.#hint = "";
        this.#menu = null;
        if (text.trim()) {
          this.#setBuffer("");
          this.#histIndex = this.#opts.history.entries.length;
          handlers.onSteer(text);
        }
        break;
      }
      case "escape":
        // Esc closes a completion menu first, then interrupts like Ctrl-C
        if (this.#menu) this.#menu = null;
        else handlers.onInterrupt();
        break;
      case "ctrl-c":
        this.#menu = null;
        handlers.onInterrupt();
        break;
      case "ctrl-d":
        if (this.#cur < this.#buf.length) {
          this.#buf = this.#buf.slice(0, this.#cur) +
            this.#buf.slice(nextBoundary(this.#buf, this.#cur));
        }
        break;
      case "ctrl-x":
      case "ctrl-l":
        break;
      default:
        // editing keys behave as at the prompt (no exit or submit path reaches here)
        await this.#onKey(key, () => {});
        return;
    }
    this.#draw();
  }

  async #onKey(key: Key, finish: (r: ReadResult) => void): Promise<void> {
    const hadHint = this.#hint !== "";
    this.#hint = "";
    if (key.name !== "tab") this.#menu = null;
    if (key.name !== "ctrl-c") this.#armedExit = false;
    if (this.#opts.keyBindings && await this.#opts.keyBindings(key, this.#access())) {
      this.#draw();
      return;
    }
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
        this.#setBuffer("");
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
          this.#histIndex = this.#opts.history.list(false).length;
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
        // each mode recalls its own history
        this.#histIndex = this.#opts.history.list(this.shellMode).length;
        this.#draft = "";
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
      case "escape":
        // Esc closes the completion menu (and keeps the text)
        break;
      default:
        break;
    }
    if (EDITING_KEYS.has(key.name)) await this.#refreshMenu();
    this.#draw();
  }

  #access(): EditorAccess {
    return {
      text: this.#buf,
      atPrompt: this.#ctx?.kind === "prompt",
      insert: (text) => this.#insert(text),
      setText: (text) => this.#setBuffer(text),
      hint: (text) => (this.#hint = text),
    };
  }

  /**
   * Open or update the completion menu for the token at the cursor (a `/command` at the start,
   * an `@path`): it follows the typing, filtered to what matches.
   */
  async #refreshMenu(): Promise<void> {
    if (this.shellMode) return;
    const before = this.#buf.slice(0, this.#cur);
    if (!/^\/[A-Za-z0-9_:-]*$/.test(before) && !/(?:^|\s)@[^\s@]*$/.test(before)) return;
    const c = await complete(this.#buf, this.#cur, this.#opts.completion);
    if (!c || c.candidates.length === 0) return;
    // a command typed in full needs no menu
    if (c.candidates.length === 1 && this.#buf.slice(c.start, c.end) === c.candidates[0]) return;
    this.#menu = this.#menuOf(c);
  }

  #menuOf(c: Completion): CompletionMenu {
    const isCommand = this.#buf.startsWith("/") && c.start === 1;
    let items = c.candidates;
    if (isCommand && this.#opts.completion.primary) {
      // each command once, by its name (an alias only when the name does not match)
      const typed = this.#buf.slice(c.start, c.end);
      const primary = this.#opts.completion.primary;
      items = [
        ...new Set(items.map((x) => {
          const p = primary(x);
          return p && p.startsWith(typed) ? p : x;
        })),
      ].sort();
    }
    return {
      start: c.start,
      end: c.end,
      items,
      labels: items.map((x) => (isCommand ? "/" + x : "@" + x)),
      hints: items.map((x) =>
        isCommand ? this.#opts.completion.describe?.(x) ?? "" : x.endsWith("/") ? "directory" : ""
      ),
      index: -1,
    };
  }

  #insert(text: string): void {
    this.#buf = this.#buf.slice(0, this.#cur) + text + this.#buf.slice(this.#cur);
    this.#cur += text.length;
  }

  #historyMove(dir: number): void {
    const entries = this.#opts.history.list(this.shellMode);
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

  /**
   * Tab: complete the token at the cursor. One candidate is inserted; several insert their
   * common prefix, and once there is none to add, each Tab selects the next candidate in the
   * menu (replacing the token with it).
   */
  async #complete(): Promise<void> {
    if (this.shellMode) return;
    const open = this.#menu;
    if (open && (open.index >= 0 || open.items.length > 1) && this.#cur === open.end) {
      const current = this.#buf.slice(open.start, open.end);
      if (open.index >= 0 || commonPrefix(open.items) === current) {
        open.index = (open.index + 1) % open.items.length;
        const pick = open.items[open.index];
        this.#buf = this.#buf.slice(0, open.start) + pick + this.#buf.slice(open.end);
        open.end = open.start + pick.length;
        this.#cur = open.end;
        return;
      }
    }
    const c = await complete(this.#buf, this.#cur, this.#opts.completion);
    if (!c || c.candidates.length === 0) {
      this.#menu = null;
      return;
    }
    const current = this.#buf.slice(c.start, c.end);
    let replacement = c.candidates.length === 1 ? c.candidates[0] : commonPrefix(c.candidates);
    if (c.candidates.length === 1 && !replacement.endsWith("/")) replacement += " ";
    if (replacement.length > current.length || c.candidates.length === 1) {
      this.#buf = this.#buf.slice(0, c.start) + replacement + this.#buf.slice(c.end);
      this.#cur = c.start + replacement.length;
      this.#menu = null;
      // a directory completed: show what is in it
      if (replacement.endsWith("/")) await this.#refreshMenu();
      else if (c.candidates.length > 1) this.#menu = this.#menuOf({ ...c, end: this.#cur });
    } else {
      const menu = this.#menuOf(c);
      menu.index = 0;
      const pick = menu.items[0];
      this.#buf = this.#buf.slice(0, c.start) + pick + this.#buf.slice(c.end);
      menu.end = c.start + pick.length;
      this.#cur = menu.end;
      this.#menu = menu;
    }
  }

  /** The input rows (with the completion menu and hint) and the cursor. */
  frame(): EditorFrame {
    const cols = this.#opts.term.columns;
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
    if (this.#menu) rows.push(...menuRows(this.#menu, cols));
    if (this.#hint) rows.push(truncateRow(style.dim(this.#hint), cols));
    return { rows, cursor };
  }

  #draw(): void {
    const ctx = this.#ctx;
    if (ctx?.kind === "turn") {
      ctx.handlers.render();
      return;
    }
    const term = this.#opts.term;
    const { rows, cursor } = this.frame();
    const footer = this.#opts.footer().map((f) => truncateRow(f, term.columns));
    term.render([...rows, ...footer], cursor);
  }
}

/** The completion menu under the input. */
interface CompletionMenu {
  /** Replaced range of the buffer (end moves as Tab picks candidates). */
  start: number;
  end: number;
  /** Replacements. */
  items: string[];
  /** Shown names (`/cmd`, `@path`). */
  labels: string[];
  /** Descriptions. */
  hints: string[];
  /** Selected item (-1: none yet). */
  index: number;
}

/** Keys after which the menu follows the text. */
const EDITING_KEYS = new Set(["char", "paste", "backspace", "delete", "ctrl-w", "ctrl-u"]);
const MENU_ROWS = 8;

/** The menu's rows: a window of items around the selection, names aligned, descriptions dim. */
function menuRows(menu: CompletionMenu, cols: number): string[] {
  const n = menu.items.length;
  const sel = Math.max(0, menu.index);
  const first = Math.max(0, Math.min(sel - Math.floor(MENU_ROWS / 2), n - MENU_ROWS));
  const shown = menu.labels.slice(first, first + MENU_ROWS);
  const width = Math.min(32, Math.max(...shown.map((l) => displayWidth(l))));
  const rows = shown.map((label, j) => {
    const i = first + j;
    const hint = menu.hints[i] ? style.dim(`  ${menu.hints[i]}`) : "";
    const pad = " ".repeat(Math.max(0, width - displayWidth(label)));
    const row = i === menu.index
      ? style.accent(`› ${label}`) + pad + hint
      : `  ${label}${pad}${hint}`;
    return truncateRow(row, cols);
  });
  if (n > MENU_ROWS) {
    rows.push(truncateRow(style.dim(`  ${n} matches · Tab next · Esc close`), cols));
  }
  return rows;
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

/** Cut a (possibly styled) row to one terminal row. */
export function truncateRow(row: string, cols: number): string {
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
