/**
 * The terminal the shell draws on: raw-mode keyboard input dispatched to one handler at a
 * time, output writes, and the live area (the redrawable rows at the bottom: the prompt,
 * spinners, selects, the status line) above which finished output is printed.
 *
 * @module
 */
import { type Key, KeyDecoder } from "./keys.ts";
import { displayWidth, wrapRows } from "./layout.ts";
import { log } from "../../log.ts";

const encoder = new TextEncoder();

function logHandlerFailure(err: unknown): void {
  log("ERROR", "shell", `key handler failed: ${(err as Error)?.stack ?? err}`);
}

/** Where output goes and input comes from (replaceable in tests). */
export interface TerminalIO {
  /** Writes bytes synchronously. */
  write(data: Uint8Array): void;
  /** Terminal size. */
  size(): { columns: number; rows: number };
  /** Switch raw mode. */
  setRaw(on: boolean): void;
  /** Input byte stream. */
  input: ReadableStream<Uint8Array>;
}

/** The process's own terminal. */
export function denoTerminalIO(): TerminalIO {
  return {
    write(data) {
      let off = 0;
      while (off < data.length) off += Deno.stdout.writeSync(data.subarray(off));
    },
    size() {
      try {
        return Deno.consoleSize();
      } catch {
        return { columns: 80, rows: 24 };
      }
    },
    setRaw(on) {
      try {
        Deno.stdin.setRaw(on);
      } catch {
        // not a terminal
      }
    },
    input: Deno.stdin.readable,
  };
}

/**
 * Erase from the cursor (at a row's start) to the end of the screen, cursor back at the row's
 * start. Not a plain erase-below: from the screen's top-left corner that is a clear-screen,
 * which tmux (`scroll-on-clear`, on by default) answers by scrolling the screen into the
 * history, leaving a copy of the live area there at each redraw once its top reaches row 0. So
 * the row is erased by itself and the rest from its second column.
 */
const ERASE_BELOW = "\x1b[K\x1b[C\x1b[J\r";

/**
 * A key handler; the terminal sends every key to the current one. A handler that returns a
 * promise holds the next key until it settles (the key then goes to whoever is the handler at
 * that moment), so keys are handled one at a time and in the order typed.
 */
export type KeyHandler = (key: Key) => void | Promise<void>;

/** Raw-mode terminal with a live area. */
export class Terminal {
  readonly #io: TerminalIO;
  readonly #decoder = new KeyDecoder();
  #handler: KeyHandler | null = null;
  /** Keys read (or injected) and not delivered yet, oldest first. */
  #queued: Key[] = [];
  /** A handler's promise for the last key delivered has not settled (the next key waits). */
  #busy = false;
  #liveRows = 0;
  #cursorRow = 0;
  #cursorCol = 0;
  /** Display width of each row of the live area as drawn (to find its top after a reflow). */
  #liveWidths: number[] = [];
  #redraw: (() => void) | null = null;
  #lastLive: { rows: string[]; cursor: { row: number; col: number } | null } = {
    rows: [],
    cursor: null,
  };
  #reader: Promise<void> | null = null;
  #focused: boolean | null = null;
  #closed = false;
  #suspended = false;
  #wakeReader: (() => void) | null = null;
  readonly #onResize = () => this.refresh();

  /** Create a terminal over an IO. */
  constructor(io: TerminalIO = denoTerminalIO()) {
    this.#io = io;
  }

  /** Terminal width in columns. */
  get columns(): number {
    return this.#io.size().columns;
  }

  /** Terminal height in rows. */
  get rows(): number {
    return this.#io.size().rows;
  }

  /**
   * Whether the terminal window has focus: null until the terminal reports it (focus
   * reporting is on while the shell runs; terminals without it never report).
   */
  get focused(): boolean | null {
    return this.#focused;
  }

  /**
   * Write control bytes that draw nothing (a bell, an OSC notification) without touching the
   * live area.
   */
  writeControl(text: string): void {
    this.#writeRaw(text);
  }

  /** Enter raw mode, enable bracketed paste and focus reports and start reading keys. */
  start(): void {
    this.#io.setRaw(true);
    this.#writeRaw("\x1b[?2004h\x1b[?1004h");
    this.#reader = this.#readLoop();
    try {
      Deno.addSignalListener("SIGWINCH", this.#onResize);
    } catch {
      // no SIGWINCH on this platform
    }
  }

  /** Leave raw mode and restore the terminal. */
  stop(): void {
    this.#closed = true;
    this.#wake();
    try {
      Deno.removeSignalListener("SIGWINCH", this.#onResize);
    } catch {
      // ignore
    }
    this.#writeRaw("\x1b[?1004l\x1b[?2004l\x1b[?7h\x1b[?25h");
    this.#io.setRaw(false);
  }

  /**
   * Read keys only while someone takes them: with no handler (between an Enter and the next
   * prompt or turn) or while suspended (a child such as $EDITOR owns the terminal) no read is
   * pending, so keys typed meanwhile stay in the terminal's buffer for whoever reads next
   * instead of being swallowed by a read issued too early.
   */
  async #readLoop(): Promise<void> {
    const decoder = new TextDecoder();
    const reader = this.#io.input.getReader();
    try {
      while (!this.#closed) {
        // Let handlers react to the keys just dispatched (e.g. drop themselves) first.
        await new Promise((r) => setTimeout(r, 0));
        while (!this.#closed && (this.#handler === null || this.#suspended)) {
          await new Promise<void>((r) => (this.#wakeReader = r));
        }
        if (this.#closed) break;
        const { value, done } = await reader.read();
        if (done) break;
        for (const key of this.#decoder.feed(decoder.decode(value, { stream: true }))) {
          this.#dispatch(key);
        }
      }
    } catch {
      // input closed
    } finally {
      reader.releaseLock();
    }
    if (!this.#closed) this.#dispatch({ name: "ctrl-d" });
  }

  #wake(): void {
    const wake = this.#wakeReader;
    this.#wakeReader = null;
    wake?.();
  }

  #dispatch(key: Key): void {
    if (key.name === "focus-in" || key.name === "focus-out") {
      this.#focused = key.name === "focus-in";
      return;
    }
    if (this.#suspended) return;
    this.#queued.push(key);
    this.#pump();
  }

  /**
   * Deliver queued keys, oldest first, to the handler current when each is delivered; stop at a
   * handler's pending promise, with no handler or while suspended.
   */
  #pump(): void {
    while (!this.#busy && this.#handler && !this.#suspended && this.#queued.length > 0) {
      this.#deliver(this.#handler, this.#queued.shift()!);
    }
  }

  /** Give `key` to `handler`; a handler that fails loses its key, never the keys after it. */
  #deliver(handler: KeyHandler, key: Key): void {
    let done: void | Promise<void>;
    try {
      done = handler(key);
    } catch (err) {
      logHandlerFailure(err);
      return;
    }
    if (!(done instanceof Promise)) return;
    this.#busy = true;
    done.catch(logHandlerFailure).then(() => {
      this.#busy = false;
      this.#pump();
    });
  }

  /** Hand the terminal to a child program (cooked mode, keys ignored) until {@link resume}. */
  suspend(): void {
    this.clearLive();
    this.#suspended = true;
    this.#writeRaw("\x1b[?1004l\x1b[?2004l\x1b[?25h");
    this.#io.setRaw(false);
  }

  /** Take the terminal back after {@link suspend}. */
  resume(): void {
    this.#io.setRaw(true);
    this.#writeRaw("\x1b[?2004h\x1b[?1004h");
    this.#suspended = false;
    this.#wake();
    this.#pump();
  }

  /**
   * Deliver a key as if typed (e.g. to close a modal), ahead of keys typed but not delivered
   * yet: at once to the current handler when it is free, else first to whoever takes keys next.
   */
  inject(key: Key): void {
    if (this.#suspended) return;
    if (this.#handler && !this.#busy) this.#deliver(this.#handler, key);
    else this.#queued.unshift(key);
  }

  /**
   * Route keys to `handler` (keys typed while no handler was set are delivered first, in
   * order; while the previous handler still handles a key, they wait for it).
   */
  setHandler(handler: KeyHandler | null): void {
    this.#handler = handler;
    if (handler) {
      this.#wake();
      this.#pump();
    }
  }

  /** Drop keys typed ahead while no handler was listening. */
  discardQueued(): void {
    this.#queued = [];
  }

  #writeRaw(text: string): void {
    this.#io.write(encoder.encode(text));
  }

  /**
   * The bytes that erase the live area from wherever the cursor is in it. Counted in physical
   * rows at the current width: after the terminal narrowed, it re-wraps (reflows) each row
   * wider than the new width over several rows, and stepping up only the rows we drew would
   * leave their upper parts behind (stale prompts, duplicated stream fragments).
   */
  #clearLiveSeq(): string {
    if (this.#liveRows === 0) return "";
    const cols = Math.max(1, this.columns);
    const height = (w: number) => Math.max(1, Math.ceil(w / cols));
    let up = 0;
    for (let i = 0; i < this.#cursorRow; i++) up += height(this.#liveWidths[i] ?? 0);
    const own = height(this.#liveWidths[this.#cursorRow] ?? 0);
    up += Math.min(Math.floor(this.#cursorCol / cols), own - 1);
    return `\r${up > 0 ? `\x1b[${up}A` : ""}${ERASE_BELOW}`;
  }

  /**
   * Redraw the live area: `rows` must each fit one terminal row (see {@link wrapRows});
   * `cursor` places the visible cursor (hidden when null: the cursor then rests at the area's
   * top, where erasing it cannot miss rows the terminal re-wrapped after a resize).
   */
  render(rows: string[], cursor: { row: number; col: number } | null = null): void {
    this.#writeFrame(this.#clearLiveSeq() + this.#liveSeq(rows, cursor));
  }

  /**
   * The bytes drawing the live area from the cursor at its first row's start. With no visible
   * cursor, the cursor then rests back at that start (see {@link #restAtTop}).
   */
  #liveSeq(rows: string[], cursor: { row: number; col: number } | null): string {
    this.#lastLive = { rows, cursor };
    const height = Math.max(1, this.rows - 1);
    let shown = rows;
    let cur = cursor;
    if (rows.length > height) {
      const drop = rows.length - height;
      shown = rows.slice(drop);
      cur = cursor ? { row: Math.max(0, cursor.row - drop), col: cursor.col } : null;
    }
    this.#liveRows = shown.length;
    this.#liveWidths = shown.map((r) => displayWidth(r));
    if (!cur) return this.#restAtTop(shown);
    let out = shown.join("\r\n");
    const up = shown.length - 1 - cur.row;
    if (up > 0) out += `\x1b[${up}A`;
    out += "\r" + (cur.col > 0 ? `\x1b[${cur.col}C` : "") + "\x1b[?25h";
    this.#cursorRow = cur.row;
    this.#cursorCol = cur.col;
    return out;
  }

  /**
   * Draw rows with no visible cursor and leave the cursor at their first row's start: erasing
   * them then needs no motion at all, so it stays exact when the width changes under them. A
   * terminal that narrows re-wraps (reflows) rows at once and keeps the cursor on its cell, but
   * the program learns the new width only later (SIGWINCH): a frame laid out for the old width
   * can reach the terminal after the reflow, and stepping up over rows counted at the old width
   * would leave the upper parts of the old rows behind (a streamed paragraph's start drawn
   * twice). So no step counts rows that can re-wrap: blank rows are made room for first (a
   * blank row never re-wraps), then the rows are drawn bottom-up, each inserted at the top
   * (IL), the cursor staying there, with auto-wrap off so each takes one terminal row whatever
   * the width by then (a row too wide for it is cut until the redraw for the new width).
   */
  #restAtTop(shown: string[]): string {
    this.#cursorRow = 0;
    this.#cursorCol = 0;
    if (shown.length === 0) return "";
    const n = shown.length - 1;
    const room = n > 0 ? "\r\n".repeat(n) + `\x1b[${n}A` : "";
    const rows = shown.toReversed().map((r) => `\x1b[L${r}\r`).join("");
    return `${room}\x1b[?7l${rows}\x1b[?7h`;
  }

  /**
   * Write one frame in a single write, as a synchronized update (terminals that support mode
   * 2026 show it at once; others ignore the mode), with the cursor hidden while it moves.
   */
  #writeFrame(body: string): void {
    this.#writeRaw(`\x1b[?2026h\x1b[?25l${body}\x1b[?2026l`);
  }

  /**
   * Set who redraws the live area after a resize (null: the rows last rendered are re-cut to
   * the new width). Drawers lay out for the current width, so they are asked rather than
   * replaying rows laid out for the old one.
   */
  setRedraw(redraw: (() => void) | null): void {
    this.#redraw = redraw;
  }

  /** Redraw the live area for the current size (after a resize). */
  refresh(): void {
    if (this.#liveRows === 0 && this.#lastLive.rows.length === 0) return;
    if (this.#redraw) {
      this.#redraw();
      return;
    }
    const { rows, cursor } = this.#lastLive;
    const cols = this.columns;
    const recut = rows.flatMap((r) => wrapRows(r, cols));
    this.render(recut, recut.length === rows.length ? cursor : null);
  }

  /** Remove the live area (the rows are forgotten). */
  clearLive(): void {
    this.#writeRaw(this.#clearLiveSeq());
    this.#liveRows = 0;
    this.#cursorRow = 0;
    this.#cursorCol = 0;
    this.#lastLive = { rows: [], cursor: null };
  }

  /** Print finished text above the live area (wrapped to the width), then redraw the area. */
  print(text: string): void {
    const rows = text.split("\n").flatMap((l) => wrapRows(l, this.columns));
    let out = this.#clearLiveSeq();
    out += rows.join("\r\n") + "\r\n";
    this.#liveRows = 0;
    this.#cursorRow = 0;
    this.#cursorCol = 0;
    const { rows: live, cursor } = this.#lastLive;
    if (live.length > 0) out += this.#liveSeq(live, cursor);
    this.#writeFrame(out);
  }

  /** Wait until the reader stops (after {@link stop}). */
  async closed(): Promise<void> {
    await this.#reader;
  }
}
