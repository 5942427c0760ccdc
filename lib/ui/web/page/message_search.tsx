/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Cross-session search in the sidebar: what is typed in the sidebar's search box is also looked
 * for in the user messages of every session (`GET /api/search`, archived sessions included),
 * shown under "Found in messages" with a snippet per matching message, a page at a time.
 *
 * @module
 */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, AuthError } from "./api.ts";
import { highlightParts, type MessageSearchPage, searchPath } from "./search_hits.ts";

/** Shortest text searched in messages. */
const MIN_QUERY_CHARS = 2;
/** Quiet time after typing before searching. */
const DEBOUNCE_MS = 250;

function Highlighted({ text, q }: { text: string; q: string }): JSX.Element {
  return (
    <>{highlightParts(text, q).map((p, i) => p.hit ? <mark key={i}>{p.text}</mark> : p.text)}</>
  );
}

/** The "Found in messages" section for the sidebar's search text `q`. */
export function MessageSearch(
  { q, current, onSelect, onError }: {
    q: string;
    current: string | null;
    /** Open a session at one of its turns. */
    onSelect: (id: string, turn?: number) => void;
    onError: (message: string) => void;
  },
): JSX.Element | null {
  const [page, setPage] = useState<MessageSearchPage | null>(null);
  const [loading, setLoading] = useState(false);
  // one letter would read every session's messages for little use
  const query = q.trim().length >= MIN_QUERY_CHARS ? q.trim() : "";

  useEffect(() => {
    setPage(null);
    if (!query) return;
    let live = true;
    const timer = setTimeout(() => {
      setLoading(true);
      api<MessageSearchPage>("GET", searchPath(query, 0)).then(
        (p) => live && setPage(p),
        (e: Error) => live && !(e instanceof AuthError) && onError(`Search failed: ${e.message}`),
      ).finally(() => live && setLoading(false));
    }, DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query]);

  const more = () => {
    if (!page) return;
    setLoading(true);
    api<MessageSearchPage>("GET", searchPath(query, page.items.length)).then(
      (next) =>
        setPage((cur) =>
          cur && { ...next, items: [...cur.items, ...next.items], truncated: next.truncated }
        ),
      (e: Error) => onError(`Search failed: ${e.message}`),
    ).finally(() => setLoading(false));
  };

  if (!query) return null;
  const hits = page?.items.filter((h) => h.matches.length > 0) ?? [];
  return (
    <section class="message-search" aria-label="Found in messages" aria-busy={loading}>
      <h3>Found in messages</h3>
      {page && hits.length === 0 && !page.has_more && (
        <p class="muted small">No user message contains “{query}”.</p>
      )}
      <ul>
        {hits.map((h) => (
          <li key={h.session_id}>
            <button
              type="button"
              class={`hit ${h.session_id === current ? "current" : ""}`}
              onClick={() => onSelect(h.session_id, h.matches[0]?.turn_index)}
            >
              <span class="hit-title">
                {h.title}
                {h.archived && <span class="muted">· archived</span>}
              </span>
              {h.matches.map((m) => (
                <span key={m.turn_index} class="hit-snippet">
                  <Highlighted text={m.snippet} q={query} />
                </span>
              ))}
            </button>
          </li>
        ))}
      </ul>
      {page?.truncated && (
        <p class="muted small">
          Some long sessions were searched only in part (a size bound); narrow the words.
        </p>
      )}
      {page?.has_more && (
        <button type="button" class="link" disabled={loading} onClick={more}>
          More results
        </button>
      )}
    </section>
  );
}
