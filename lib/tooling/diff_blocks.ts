/**
 * Diff display blocks for file edits: one block per hunk with 3 lines of context, or a single
 * summary block for files over 10,000 lines.
 *
 * @module
 */
import type { DiffBlock } from "../wire/display.ts";

/** Context lines kept around each change. */
export const DIFF_CONTEXT_LINES = 3;
/** Above this many lines (old or new) no diff is computed; a summary block is shown instead. */
export const HUGE_FILE_LINES = 10_000;

// Python's line boundaries include the file/group/record separators \x1c-\x1e.
// deno-lint-ignore no-control-regex
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** Split text into lines like Python's `str.splitlines()` (no empty last line after a break). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(LINE_BREAK);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** One opcode: tag plus old range [i1, i2) and new range [j1, j2). */
type Opcode = [tag: "equal" | "change", i1: number, i2: number, j1: number, j2: number];

type DiffArrays = typeof import("diff").diffArrays;

function opcodes(diffArrays: DiffArrays, oldLines: string[], newLines: string[]): Opcode[] {
  const codes: Opcode[] = [];
  let i = 0;
  let j = 0;
  for (const change of diffArrays(oldLines, newLines)) {
    const n = change.count;
    const last = codes[codes.length - 1];
    if (!change.added && !change.removed) {
      codes.push(["equal", i, i + n, j, j + n]);
      i += n;
      j += n;
      continue;
    }
    const [di, dj] = change.removed ? [n, 0] : [0, n];
    if (last && last[0] === "change") {
      last[2] += di;
      last[4] += dj;
    } else {
      codes.push(["change", i, i + di, j, j + dj]);
    }
    i += di;
    j += dj;
  }
  return codes;
}

/** Group opcodes into hunks with `n` context lines, like difflib's `get_grouped_opcodes`. */
function groupedOpcodes(codes: Opcode[], n: number): Opcode[][] {
  if (codes.length === 0) codes = [["equal", 0, 1, 0, 1]];
  codes = codes.map((c) => [...c] as Opcode);
  const first = codes[0];
  if (first[0] === "equal") {
    first[1] = Math.max(first[1], first[2] - n);
    first[3] = Math.max(first[3], first[4] - n);
  }
  const last = codes[codes.length - 1];
  if (last[0] === "equal") {
    last[2] = Math.min(last[2], last[1] + n);
    last[4] = Math.min(last[4], last[3] + n);
  }
  const groups: Opcode[][] = [];
  let group: Opcode[] = [];
  for (const code of codes) {
    let [tag, i1, i2, j1, j2] = code;
    if (tag === "equal" && i2 - i1 > 2 * n) {
      group.push([tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)]);
      groups.push(group);
      group = [];
      i1 = Math.max(i1, i2 - n);
      j1 = Math.max(j1, j2 - n);
    }
    group.push([tag, i1, i2, j1, j2]);
  }
  if (group.length > 0 && !(group.length === 1 && group[0][0] === "equal")) groups.push(group);
  return groups;
}

function diffBlock(path: string, fields: Partial<DiffBlock>): DiffBlock {
  return {
    type: "diff",
    path,
    old_text: "",
    new_text: "",
    old_start: 1,
    new_start: 1,
    is_summary: false,
    ...fields,
  };
}

/**
 * Diff blocks between the old and new text of a file. Identical texts give no blocks; files over
 * {@link HUGE_FILE_LINES} lines give one summary block (`(N lines)` / `(M lines[, modified])`).
 * The `diff` package loads on the first real diff (not at start-up).
 */
export async function buildDiffBlocks(
  path: string,
  oldText: string,
  newText: string,
): Promise<DiffBlock[]> {
  if (oldText === newText) return [];
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  if (Math.max(oldLines.length, newLines.length) > HUGE_FILE_LINES) {
    const modified = oldLines.length === newLines.length ? ", modified" : "";
    return [diffBlock(path, {
      old_text: `(${oldLines.length} lines)`,
      new_text: `(${newLines.length} lines${modified})`,
      is_summary: true,
    })];
  }
  const blocks: DiffBlock[] = [];
  const { diffArrays } = await import("diff");
  const codes = opcodes(diffArrays, oldLines, newLines);
  for (const group of groupedOpcodes(codes, DIFF_CONTEXT_LINES)) {
    const i1 = group[0][1];
    const i2 = group[group.length - 1][2];
    const j1 = group[0][3];
    const j2 = group[group.length - 1][4];
    blocks.push(diffBlock(path, {
      old_text: oldLines.slice(i1, i2).join("\n"),
      new_text: newLines.slice(j1, j2).join("\n"),
      old_start: i1 + 1,
      new_start: j1 + 1,
    }));
  }
  return blocks;
}
