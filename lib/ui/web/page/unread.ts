/**
 * Unread dots of the session list. Per session, this browser keeps the last `last_updated` it
 * has seen while the session was open (`localStorage`); a session that is not open and whose
 * `last_updated` is newer, or that went from busy to idle meanwhile, has new activity. A session
 * first met takes its current time as seen (old sessions get no dot).
 *
 * @module
 */

/** `localStorage` key of the seen times. */
export const SEEN_KEY = "kimi.seen";
/** At most this many sessions are remembered (the least recently updated are forgotten). */
export const MAX_SEEN = 1000;

/** Last seen `last_updated` (ms since the epoch) per session id. */
export type SeenMap = Record<string, number>;

/** What {@link trackActivity} needs of a listed session. */
export interface ActivitySession {
  /** Id. */
  session_id: string;
  /** ISO time of the last change. */
  last_updated: string;
  /** Runtime status (`state` is "busy" while a turn runs). */
  status: { state: string } | null;
}

/** Result of {@link trackActivity}. */
export interface ActivityUpdate {
  /** The new seen times (a new object when anything changed, else the one given). */
  seen: SeenMap;
  /** Ids of the listed sessions with new activity. */
  unread: Set<string>;
  /** Ids of the listed sessions that are busy now (pass back as `busy` next time). */
  busy: Set<string>;
}

/**
 * Fold a fresh session list into the seen times: the open session (`current`) is seen up to
 * its `last_updated`; a session met for the first time is seen up to now; one that was busy at
 * the previous look (`busy`) and is idle now counts as having new output.
 */
export function trackActivity(
  { seen, sessions, current, open = new Set(), busy }: {
    seen: SeenMap;
    sessions: readonly ActivitySession[];
    current: string | null;
    /** Sessions treated like `current` (just left; their latest time is being fetched). */
    open?: ReadonlySet<string>;
    busy: ReadonlySet<string>;
  },
): ActivityUpdate {
  const next: SeenMap = { ...seen };
  let changed = false;
  const unread = new Set<string>();
  const nowBusy = new Set<string>();
  const put = (id: string, t: number) => {
    if (next[id] !== t) {
      next[id] = t;
      changed = true;
    }
  };
  for (const s of sessions) {
    const id = s.session_id;
    const t = Date.parse(s.last_updated);
    if (!Number.isFinite(t)) continue;
    const isBusy = s.status?.state === "busy";
    if (isBusy) nowBusy.add(id);
    const before = next[id];
    if (id === current || open.has(id)) {
      put(id, Math.max(before ?? 0, t));
      continue;
    }
    if (before === undefined) put(id, t);
    else if (busy.has(id) && !isBusy && before >= t) put(id, t - 1);
    if (t > next[id]) unread.add(id);
  }
  return { seen: changed ? prune(next) : seen, unread, busy: nowBusy };
}

/** `seen` with `session` seen up to its `last_updated` (a new object). */
export function markSeen(seen: SeenMap, session: ActivitySession): SeenMap {
  const t = Date.parse(session.last_updated);
  if (!Number.isFinite(t)) return seen;
  return prune({ ...seen, [session.session_id]: Math.max(seen[session.session_id] ?? 0, t) });
}

function prune(seen: SeenMap): SeenMap {
  const entries = Object.entries(seen);
  if (entries.length <= MAX_SEEN) return seen;
  entries.sort((a, b) => b[1] - a[1]);
  return Object.fromEntries(entries.slice(0, MAX_SEEN));
}

/** The seen times stored in this browser (empty when none or unreadable). */
export function loadSeen(): SeenMap {
  try {
    const raw = JSON.parse(localStorage.getItem(SEEN_KEY) ?? "{}");
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return {};
    const out: SeenMap = {};
    for (const [k, v] of Object.entries(raw)) if (typeof v === "number") out[k] = v;
    return out;
  } catch {
    return {};
  }
}

/** Keep the seen times. */
export function saveSeen(seen: SeenMap): void {
  try {
    localStorage.setItem(SEEN_KEY, JSON.stringify(seen));
  } catch {
    // Storage disabled or full: the dots last as long as the page.
  }
}
