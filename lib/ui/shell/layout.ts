/**
 * Fitting text into terminal rows: display width of wide (CJK, emoji) text, wrapping to a
 * column count, and the row/column of a cursor offset.
 *
 * @module
 */
import stringWidth from "string-width";
import wrapAnsi from "wrap-ansi";

const segmenter = new Intl.Segmenter();
const SGR = new RegExp("\u001b\\[[0-9;]*m", "g");

/** Text without SGR colour codes. */
export function stripAnsi(text: string): string {
  return text.replace(SGR, "");
}

/** Display width of text in terminal columns (ANSI codes ignored). */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** Wrap (possibly ANSI-coloured) text to `columns`, hard-breaking long words; one string per row. */
export function wrapRows(text: string, columns: number): string[] {
  const width = Math.max(1, columns);
  return wrapAnsi(text, width, { hard: true, trim: false }).split("\n");
}

/** A laid-out plain-text line with the row/column of a cursor offset inside it. */
export interface CursorLayout {
  /** The rows. */
  rows: string[];
  /** Row of the cursor. */
  row: number;
  /** Column of the cursor. */
  col: number;
}

/**
 * Break plain text (no newlines) into rows of at most `columns` cells, character by character
 * (a wide character never straddles two rows), and locate the cursor at offset `cursor`.
 */
export function layoutLine(text: string, cursor: number, columns: number): CursorLayout {
  const width = Math.max(2, columns);
  const rows: string[] = [""];
  let rowWidth = 0;
  let offset = 0;
  let row = 0;
  let col = 0;
  let placed = false;
  for (const { segment } of segmenter.segment(text)) {
    if (!placed && offset >= cursor) {
      row = rows.length - 1;
      col = rowWidth;
      placed = true;
    }
    const w = stringWidth(segment);
    if (rowWidth + w > width) {
      rows.push("");
      rowWidth = 0;
      if (placed && row === rows.length - 2 && col >= width) {
        row++;
        col = 0;
      }
    }
    rows[rows.length - 1] += segment;
    rowWidth += w;
    offset += segment.length;
  }
  if (!placed) {
    row = rows.length - 1;
    col = rowWidth;
  }
  if (col >= width) {
    rows.push("");
    row = rows.length - 1;
    col = 0;
  }
  return { rows, row, col };
}
