/**
 * In-chat search, the pure part: the searchable text of each turn (the user message, assistant
 * text, thinking and tool cards, subagent steps included), case-insensitive occurrences of a
 * query in it, and stepping between matches. No DOM, so it is tested without a browser; the
 * page maps a match to the element that shows it.
 *
 * Segment `0` of a turn is the user message, segment `i + 1` the turn's block `i` (the
 * assistant message's `i`-th child element in the page).
 *
 * @module
 */
import type { Block, DisplayBlock, ToolBlock, Turn } from "./transcript.ts";

/** What a segment holds: the user message, assistant text, thinking or a tool card. */
export type SegmentKind = "user" | "text" | "think" | "tool";

/** One searchable piece of a turn. */
export interface SearchSegment {
  /** The turn's index. */
  turn: number;
  /** `0` the user message, `i + 1` block `i`. */
  seg: number;
  /** What it holds. */
  kind: SegmentKind;
  /** The text a reader sees in it. */
  text: string;
}

/** One occurrence of the query. */
export interface SearchMatch {
  /** The turn's index. */
  turn: number;
  /** The segment ({@link SearchSegment.seg}). */
  seg: number;
  /** What the segment holds. */
  kind: SegmentKind;
  /** Which occurrence of the query in this segment (0-based). */
  occurrence: number;
  /** Occurrences of the query in this segment in all. */
  inSegment: number;
}

/** Turns markdown source into the text its rendering shows (identity when omitted). */
export type PlainText = (markdown: string) => string;

/** Start offsets of the non-overlapping, case-insensitive occurrences of `query` in `text`. */
export function occurrences(text: string, query: string): number[] {
  const q = query.toLowerCase();
  if (!q) return [];
  const hay = text.toLowerCase();
  const out: number[] = [];
  for (let at = hay.indexOf(q); at !== -1; at = hay.indexOf(q, at + q.length)) out.push(at);
  return out;
}

function displayText(d: DisplayBlock): string {
  if (d.type === "brief" && typeof d.text === "string") return d.text;
  if (d.type === "shell" && typeof d.command === "string") return `$ ${d.command}`;
  if (d.type === "todo" && Array.isArray(d.items)) {
    return (d.items as { title?: unknown }[]).map((i) => String(i.title ?? "")).join("\n");
  }
  if (d.type === "diff" && typeof d.path === "string") {
    return [d.path, String(d.old_text ?? ""), String(d.new_text ?? "")].join("\n");
  }
  if (d.type === "background_task") {
    return `Background task ${String(d.task_id)}: ${String(d.description)} (${String(d.status)})`;
  }
  return "";
}

/** The text of a tool card: name, arguments, output, display blocks, error, subagent steps. */
export function toolText(tool: ToolBlock, plain: PlainText = (s) => s): string {
  const parts = [tool.name, tool.args];
  const r = tool.result;
  if (r) {
    parts.push(r.output, ...r.display.map(displayText));
    if (r.isError) parts.push(r.message);
  }
  if (tool.subagent) {
    parts.push(tool.subagent.type, ...tool.subagent.blocks.map((b) => blockText(b, plain)));
  }
  return parts.filter((p) => p).join("\n");
}

function blockText(b: Block, plain: PlainText): string {
  switch (b.kind) {
    case "text":
      return plain(b.text);
    case "think":
      return b.text;
    case "tool":
      return toolText(b, plain);
    default:
      return "";
  }
}

/** The searchable segments of a turn (blocks with nothing to search are left out). */
export function turnSegments(turn: Turn, plain: PlainText = (s) => s): SearchSegment[] {
  const out: SearchSegment[] = [];
  if (turn.userText) out.push({ turn: turn.index, seg: 0, kind: "user", text: turn.userText });
  turn.blocks.forEach((b, i) => {
    if (b.kind !== "text" && b.kind !== "think" && b.kind !== "tool") return;
    const text = blockText(b, plain);
    if (text) out.push({ turn: turn.index, seg: i + 1, kind: b.kind, text });
  });
  return out;
}

/** Every occurrence of `query` in `turns`, in reading order. */
export function findMatches(
  turns: readonly Turn[],
  query: string,
  plain: PlainText = (s) => s,
): SearchMatch[] {
  const out: SearchMatch[] = [];
  if (!query) return out;
  for (const turn of turns) {
    for (const s of turnSegments(turn, plain)) {
      const found = occurrences(s.text, query);
      found.forEach((_, occurrence) =>
        out.push({
          turn: s.turn,
          seg: s.seg,
          kind: s.kind,
          occurrence,
          inSegment: found.length,
        })
      );
    }
  }
  return out;
}

/** The match after (`+1`) or before (`-1`) `current`, wrapping around; `-1` when none. */
export function stepMatch(current: number, total: number, direction: 1 | -1): number {
  if (total <= 0) return -1;
  if (current < 0 || current >= total) return direction === 1 ? 0 : total - 1;
  return (current + direction + total) % total;
}

/** The "n of m" of the search box. */
export function matchLabel(current: number, total: number, query: string): string {
  if (!query) return "";
  if (total === 0) return "No matches";
  return `${current + 1} of ${total}`;
}
