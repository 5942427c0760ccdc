/**
 * Modal widgets drawn in the live area: a select list and a single-line text input (masked
 * for secrets).
 *
 * @module
 */
import type { Key } from "./keys.ts";
import { displayWidth, layoutLine, stripAnsi } from "./layout.ts";
import type { Terminal } from "./terminal.ts";
import { style } from "./theme.ts";

/** One option of a select. */
export interface SelectOption {
  /** Shown label. */
  label: string;
  /** Extra text shown dimmed after the label. */
  hint?: string;
}

/** Options of {@link select}. */
export interface SelectOptions {
  /** Lines above the list. */
  title: string[];
  /** The options. */
  options: SelectOption[];
  /** Initially highlighted option. */
  initial?: number;
  /** Allow several choices (Space toggles, Enter confirms). */
  multiple?: boolean;
  /** Called when Ctrl-C (rather than Escape) cancels the select. */
  onInterrupt?: () => void;
  /** The key hint under the list (default: move, select, `Esc cancel`). */
  keysHint?: string;
  /** Another key: true when it was handled (the list is drawn again). */
  onKey?: (key: Key) => boolean;
}

/**
 * Let the user pick an option: arrows or j/k move, digits pick directly, Enter confirms.
 * Resolves with the chosen indexes (one unless `multiple`), or null on Escape / Ctrl-C.
 */
export function select(term: Terminal, opts: SelectOptions): Promise<number[] | null> {
  const { promise, resolve } = Promise.withResolvers<number[] | null>();
  let index = Math.min(Math.max(0, opts.initial ?? 0), opts.options.length - 1);
  const chosen = new Set<number>();
  const maxShown = Math.max(3, term.rows - opts.title.length - 3);
  const draw = () => {
    const rows: string[] = [];
    for (const t of opts.title) rows.push(...t.split("\n"));
    const first = Math.max(
      0,
      Math.min(index - Math.floor(maxShown / 2), opts.options.length - maxShown),
    );
    opts.options.slice(first, first + maxShown).forEach((o, j) => {
      const i = first + j;
      const mark = opts.multiple ? (chosen.has(i) ? "[x] " : "[ ] ") : "";
      const text = `${i + 1}. ${mark}${o.label}${o.hint ? style.dim(`  ${o.hint}`) : ""}`;
      rows.push(i === index ? style.accent(`› ${text}`) : `  ${text}`);
    });
    const help = opts.keysHint ??
      (opts.multiple
        ? "↑/↓ move · Space toggle · Enter confirm · Esc cancel"
        : "↑/↓ move · Enter select · Esc cancel");
    rows.push(style.dim(help));
    term.render(rows.flatMap((r) => cut(r, term.columns)));
  };
  let finished = false;
  const done = (r: number[] | null) => {
    finished = true;
    term.setHandler(null);
    term.setRedraw(null);
    term.clearLive();
    resolve(r);
  };
  term.setHandler((key: Key) => {
    const n = opts.options.length;
    if (opts.onKey?.(key)) return finished ? undefined : draw();
    if (key.name === "up" || (key.name === "char" && key.text === "k")) index = (index + n - 1) % n;
    else if (
      key.name === "down" || key.name === "tab" || (key.name === "char" && key.text === "j")
    ) {
      index = (index + 1) % n;
    } else if (key.name === "char" && /^[1-9]$/.test(key.text ?? "") && Number(key.text) <= n) {
      index = Number(key.text) - 1;
      if (!opts.multiple) return done([index]);
    } else if (key.name === "char" && key.text === " " && opts.multiple) {
      if (chosen.has(index)) chosen.delete(index);
      else chosen.add(index);
    } else if (key.name === "enter") {
      if (!opts.multiple) return done([index]);
      return done(chosen.size > 0 ? [...chosen].sort((a, b) => a - b) : [index]);
    } else if (key.name === "escape" || key.name === "ctrl-c" || key.name === "ctrl-d") {
      if (key.name === "ctrl-c") opts.onInterrupt?.();
      return done(null);
    }
    draw();
  });
  term.setRedraw(draw);
  draw();
  return promise;
}

/** Options of {@link textInput}. */
export interface TextInputOptions {
  /** Lines above the input. */
  title: string[];
  /** Prefix of the input row. */
  label: string;
  /** Show `*` instead of the characters. */
  mask?: boolean;
  /** Initial text. */
  initial?: string;
}

/** Read one line of text; resolves with it, or null on Escape / Ctrl-C. */
export function textInput(term: Terminal, opts: TextInputOptions): Promise<string | null> {
  const { promise, resolve } = Promise.withResolvers<string | null>();
  let buf = opts.initial ?? "";
  const draw = () => {
    const shown = opts.mask ? "*".repeat([...buf].length) : buf;
    const lay = layoutLine(opts.label + shown, (opts.label + shown).length, term.columns);
    const title = opts.title.flatMap((t) => t.split("\n")).flatMap((r) => cut(r, term.columns));
    term.render(
      [...title, ...lay.rows, style.dim("Enter confirm · Esc cancel")],
      { row: title.length + lay.row, col: lay.col },
    );
  };
  const done = (r: string | null) => {
    term.setHandler(null);
    term.setRedraw(null);
    term.clearLive();
    resolve(r);
  };
  term.setHandler((key: Key) => {
    if (key.name === "char" || key.name === "paste") buf += (key.text ?? "").replace(/\n/g, " ");
    else if (key.name === "backspace") buf = [...buf].slice(0, -1).join("");
    else if (key.name === "ctrl-u") buf = "";
    else if (key.name === "enter") return done(buf);
    else if (key.name === "escape" || key.name === "ctrl-c") return done(null);
    draw();
  });
  term.setRedraw(draw);
  draw();
  return promise;
}

/** Split a styled row into terminal rows (long option labels wrap). */
function cut(row: string, columns: number): string[] {
  if (displayWidth(row) <= columns) return [row];
  const plain = stripAnsi(row);
  return layoutLine(plain, 0, columns).rows;
}
