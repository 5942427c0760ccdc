/**
 * The answers of `GET /api/search` (cross-session search) as the page reads them, the URL of a
 * page of results, and a snippet split around the searched text for highlighting.
 *
 * @module
 */

/** One matching message. */
export interface MessageMatch {
  /** Index of its turn. */
  turn_index: number;
  /** The text around the match. */
  snippet: string;
}

/** One session found. */
export interface MessageSearchHit {
  /** Session id. */
  session_id: string;
  /** Title. */
  title: string;
  /** Work dir. */
  work_dir: string;
  /** Whether archived. */
  archived: boolean;
  /** Last update (ISO). */
  last_updated: string;
  /** Whether the title matched. */
  title_match: boolean;
  /** Matching user messages (the first few). */
  matches: MessageMatch[];
}

/** A page of the search. */
export interface MessageSearchPage {
  /** Sessions found. */
  items: MessageSearchHit[];
  /** Whether a next page exists. */
  has_more: boolean;
  /** Whether a size bound stopped the reading. */
  truncated: boolean;
}

/** Results per page. */
export const SEARCH_PAGE_SIZE = 20;
/** The search URL of a page. */
export function searchPath(q: string, offset: number): string {
  const params = new URLSearchParams({
    q: q.trim(),
    limit: String(SEARCH_PAGE_SIZE),
    offset: String(offset),
  });
  return `/api/search?${params}`;
}

/** `text` split around the case-insensitive occurrences of `q`, for highlighting. */
export function highlightParts(text: string, q: string): { text: string; hit: boolean }[] {
  const needle = q.trim().toLowerCase();
  if (!needle) return [{ text, hit: false }];
  const out: { text: string; hit: boolean }[] = [];
  const lower = text.toLowerCase();
  let at = 0;
  for (;;) {
    const i = lower.indexOf(needle, at);
    if (i < 0) break;
    if (i > at) out.push({ text: text.slice(at, i), hit: false });
    out.push({ text: text.slice(i, i + needle.length), hit: true });
    at = i + needle.length;
  }
  if (at < text.length) out.push({ text: text.slice(at), hit: false });
  return out;
}
