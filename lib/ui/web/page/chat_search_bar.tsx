/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The in-chat search box: counts the query's occurrences over the loaded transcript (turns
 * hidden behind "Show earlier messages" included: the one holding the current match is
 * revealed), moves between them with Enter / Shift+Enter or ▲▼, scrolls the current one into
 * view and highlights it. Highlighting uses the CSS Custom Highlight API over the rendered text,
 * so the sanitised markdown is never rewritten; the message holding the current match also gets
 * the `search-current` class (the only mark where the API is missing, or where the rendered card
 * shows the text differently from the transcript).
 *
 * @module
 */
import type { JSX } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import {
  findMatches,
  matchLabel,
  occurrences,
  type SearchMatch,
  stepMatch,
} from "./chat_search.ts";
import { renderMarkdown } from "./markdown.ts";
import type { Turn } from "./transcript.ts";

/** Highlight names (styled by `::highlight(...)` in the stylesheet). */
const ALL = "kimi-search";
const CURRENT = "kimi-search-current";
/** Markdown texts kept rendered for search before the cache starts over. */
const PLAIN_CACHE_LIMIT = 4000;

/** Ranges over the text nodes of `root` where `query` occurs (case-insensitive). */
export function textRanges(root: Node, query: string): Range[] {
  const nodes: { node: Text; start: number }[] = [];
  let text = "";
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    nodes.push({ node: n as Text, start: text.length });
    text += (n as Text).data;
  }
  const locate = (offset: number, end: boolean) => {
    let i = nodes.length - 1;
    while (i > 0 && (end ? nodes[i].start >= offset : nodes[i].start > offset)) i--;
    return { node: nodes[i].node, offset: offset - nodes[i].start };
  };
  // Offsets are found in the lower-cased text: exact only where lower-casing keeps lengths
  // (not so for a few letters, e.g. "İ"); elsewhere the caller marks the whole message.
  if (text.toLowerCase().length !== text.length || query.toLowerCase().length !== query.length) {
    return [];
  }
  return occurrences(text, query).map((at) => {
    const range = document.createRange();
    const a = locate(at, false);
    const b = locate(at + query.length, true);
    range.setStart(a.node, a.offset);
    range.setEnd(b.node, b.offset);
    return range;
  });
}

interface SegmentElements {
  /** Where the text of the segment is. */
  text: HTMLElement;
  /** The message or card that gets `search-current`. */
  box: HTMLElement;
}

function segmentElements(root: HTMLElement, m: SearchMatch): SegmentElements | null {
  const turn = root.querySelector<HTMLElement>(`section.turn[data-turn="${m.turn}"]`);
  if (!turn) return null;
  if (m.seg === 0) {
    const box = turn.querySelector<HTMLElement>(":scope > .msg.user");
    const text = box?.querySelector<HTMLElement>(".user-text");
    return box && text ? { box, text } : null;
  }
  const block = turn.querySelector(":scope > .msg.assistant")?.children[m.seg - 1] as
    | HTMLElement
    | undefined;
  if (!block) return null;
  const text = m.kind === "think" ? block.querySelector<HTMLElement>(".think-text") : block;
  return text ? { box: block, text } : null;
}

function openAncestors(node: Node | null, stop: HTMLElement): void {
  for (let el = node?.parentElement ?? null; el && el !== stop; el = el.parentElement) {
    if (el instanceof HTMLDetailsElement) el.open = true;
  }
}

function highlights(): HighlightRegistry | null {
  return typeof CSS !== "undefined" && "highlights" in CSS && typeof Highlight === "function"
    ? CSS.highlights
    : null;
}

function clearMarks(root: ParentNode): void {
  highlights()?.delete(ALL);
  highlights()?.delete(CURRENT);
  for (const el of root.querySelectorAll(".search-current")) el.classList.remove("search-current");
}

/**
 * Mark the matches shown in `chat` and bring `current` into view. Returns false when the turn
 * of the current match is not rendered yet (the caller tries again after the next frame).
 */
function applyMarks(
  chat: HTMLElement,
  matches: SearchMatch[],
  current: number,
  query: string,
  scroll: boolean,
): boolean {
  clearMarks(chat);
  if (!query || current < 0 || !matches[current]) return true;
  const all: Range[] = [];
  const seen = new Map<string, Range[] | null>();
  let currentRange: Range | null = null;
  for (let i = 0; i < matches.length; i++) {
    const m = matches[i];
    const key = `${m.turn}:${m.seg}`;
    if (!seen.has(key)) {
      const els = segmentElements(chat, m);
      const ranges = els ? textRanges(els.text, query) : [];
      // Exact ranges only when the page shows as many as the transcript holds.
      seen.set(key, ranges.length === m.inSegment ? ranges : null);
      if (ranges.length === m.inSegment) all.push(...ranges);
    }
    if (i === current) currentRange = seen.get(key)?.[m.occurrence] ?? null;
  }
  const m = matches[current];
  const els = segmentElements(chat, m);
  if (!els) return false;
  els.box.classList.add("search-current");
  const registry = highlights();
  if (registry) {
    registry.set(ALL, new Highlight(...all));
    if (currentRange) registry.set(CURRENT, new Highlight(currentRange));
  }
  if (currentRange) openAncestors(currentRange.startContainer, chat);
  else if (els.box instanceof HTMLDetailsElement) els.box.open = true;
  if (scroll) {
    const target = currentRange?.startContainer.parentElement ?? els.box;
    target.scrollIntoView({ block: "center" });
  }
  return true;
}

/** The index of the first turn shown in the chat's viewport (0 when none is). */
function firstVisibleTurn(): number {
  const chat = document.querySelector<HTMLElement>(".chat");
  if (!chat) return 0;
  const top = chat.getBoundingClientRect().top;
  for (const el of chat.querySelectorAll<HTMLElement>("section.turn[data-turn]")) {
    // (A pixel of slack: the turn above may end a fraction of a pixel below the edge.)
    if (el.getBoundingClientRect().bottom > top + 1) return Number(el.dataset.turn);
  }
  return 0;
}

/** Properties of {@link ChatSearchBar}. */
export interface ChatSearchBarProps {
  /** The transcript's turns. */
  turns: readonly Turn[];
  /** Changes whenever the transcript does (turns are updated in place). */
  version: number;
  /** Changes when the user asks for the box again (focus and select the query). */
  focusTick: number;
  /** Make sure the turn with this index is rendered. */
  onReveal: (turnIndex: number) => void;
  /** Close the box. */
  onClose: () => void;
}

/** The search box over the chat. */
export function ChatSearchBar(
  { turns, version, focusTick, onReveal, onClose }: ChatSearchBarProps,
): JSX.Element {
  const [query, setQuery] = useState("");
  // -1: the first match from the top of the chat's viewport on (`anchor`), like a browser's find.
  const [current, setCurrent] = useState(-1);
  const [anchor, setAnchor] = useState(0);
  const [moved, setMoved] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const cache = useRef(new Map<string, string>());

  const plain = (markdown: string): string => {
    const known = cache.current.get(markdown);
    if (known !== undefined) return known;
    if (cache.current.size >= PLAIN_CACHE_LIMIT) cache.current.clear();
    const t = document.createElement("template");
    t.innerHTML = renderMarkdown(markdown);
    const text = t.content.textContent ?? "";
    cache.current.set(markdown, text);
    return text;
  };

  const matches = useMemo(() => findMatches(turns, query, plain), [turns, query, version]);
  const total = matches.length;
  const index = total === 0
    ? -1
    : current >= 0
    ? Math.min(current, total - 1)
    : Math.max(0, matches.findIndex((m) => m.turn >= anchor));
  const target = index >= 0 ? matches[index] : null;

  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, [focusTick]);

  useEffect(() => {
    if (target) onReveal(target.turn);
  }, [target?.turn]);

  // Mark after every render of the chat; scroll only when the user moved to another match.
  const scrolled = useRef(-1);
  useEffect(() => {
    const chat = document.querySelector<HTMLElement>(".chat");
    if (!chat) return;
    let frame = 0;
    let tries = 0;
    const run = () => {
      const scroll = scrolled.current !== moved;
      if (applyMarks(chat, matches, index, query, scroll)) {
        scrolled.current = moved;
      } else if (tries++ < 30) frame = requestAnimationFrame(run);
    };
    run();
    return () => cancelAnimationFrame(frame);
  }, [matches, index, query, moved, version]);

  useEffect(() => () => {
    const chat = document.querySelector<HTMLElement>(".chat");
    clearMarks(chat ?? document);
  }, []);

  const go = (direction: 1 | -1) => {
    if (total === 0) return;
    setCurrent(stepMatch(index, total, direction));
    setMoved((n) => n + 1);
  };

  const label = matchLabel(index, total, query);
  return (
    <div class="chat-search" role="search" aria-label="Search this conversation">
      <label class="grow">
        <span class="sr-only">Search in this conversation</span>
        <input
          ref={input}
          type="search"
          placeholder="Search in this conversation"
          value={query}
          aria-describedby="chat-search-count"
          onInput={(e) => {
            // A new search starts from the view; typing on refines it from the same place.
            if (!query) setAnchor(firstVisibleTurn());
            setQuery((e.target as HTMLInputElement).value);
            setCurrent(-1);
            setMoved((n) => n + 1);
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.isComposing) {
              e.preventDefault();
              go(e.shiftKey ? -1 : 1);
            } else if (e.key === "Escape") {
              e.preventDefault();
              e.stopPropagation();
              onClose();
            }
          }}
        />
      </label>
      <span id="chat-search-count" class="search-count" role="status" aria-live="polite">
        {label}
      </span>
      <button
        type="button"
        class="icon"
        aria-label="Previous match"
        disabled={total === 0}
        onClick={() => go(-1)}
      >
        ▲
      </button>
      <button
        type="button"
        class="icon"
        aria-label="Next match"
        disabled={total === 0}
        onClick={() => go(1)}
      >
        ▼
      </button>
      <button type="button" class="icon" aria-label="Close search" onClick={onClose}>
        ✕
      </button>
    </div>
  );
}
