/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The session sidebar (search, grouped by work dir or flat, a "Pinned" group first, archived
 * section, rename, archive, pin, delete, multi-select, unread dots), the create-session dialog
 * (startup dir, recent work dirs, create a missing directory on request) and the address bar's
 * `?action=create` / `?action=create-in-dir&workDir=<path>` links.
 *
 * @module
 */
import type { JSX } from "preact";
import { memo } from "preact/compat";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, NetworkError } from "./api.ts";
import { loadSeen, markSeen, saveSeen, trackActivity } from "./unread.ts";
import { MessageSearch } from "./message_search.tsx";

/** How often the list is refreshed while the page is visible (ms), for dots of other sessions. */
export const LIST_POLL_MS = 3000;

/** A session as `GET /api/sessions/` lists it (reference §A3). */
export interface SessionInfo {
  /** Id (UUID). */
  session_id: string;
  /** Title. */
  title: string;
  /** ISO time of the last change. */
  last_updated: string;
  /** Whether its runner is alive. */
  is_running: boolean;
  /** Status snapshot. */
  status: { state: string } | null;
  /** Work directory. */
  work_dir: string;
  /** Session directory. */
  session_dir: string;
  /** Whether archived. */
  archived: boolean;
  /** Whether pinned to the top of the list. */
  pinned: boolean;
}

/** What the create dialog opens with (a `?action=create-in-dir` that failed fills it in). */
export interface CreateRequest {
  /** Work directory to propose. */
  dir?: string;
  /** Error to show. */
  error?: string;
  /** The directory is missing: offer to create it. */
  missing?: boolean;
}

/** Group key of the pinned sessions (not a path). */
const PINNED = "\u0000pinned";

/**
 * The list's groups in display order: pinned sessions first (as "Pinned"), then by work dir
 * when `byFolder`, else one unnamed group. Order within a group is the list's order.
 */
export function groupSessions(
  sessions: readonly SessionInfo[],
  byFolder: boolean,
): { key: string; label: string | null; title?: string; sessions: SessionInfo[] }[] {
  const groups = new Map<string, SessionInfo[]>();
  const pinned = sessions.filter((s) => s.pinned);
  if (pinned.length) groups.set(PINNED, pinned);
  for (const s of sessions) {
    if (s.pinned) continue;
    const key = byFolder ? s.work_dir : "";
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups].map(([key, list]) => ({
    key,
    label: key === PINNED ? "Pinned" : key ? basename(key) : null,
    title: key === PINNED || !key ? undefined : key,
    sessions: list,
  }));
}

/** Read and remove `?action=` (and `workDir`) from the address bar (history entry replaced). */
function takeUrlAction(): { action: string; workDir: string | null } | null {
  const params = new URLSearchParams(location.search);
  const action = params.get("action");
  if (action === null) return null;
  const workDir = params.get("workDir");
  params.delete("action");
  params.delete("workDir");
  const query = params.toString();
  history.replaceState(
    history.state,
    "",
    location.pathname + (query ? `?${query}` : "") + location.hash,
  );
  return { action, workDir };
}

/** Props of {@link Sidebar}. */
export interface SidebarProps {
  /** Selected session id. */
  current: string | null;
  /** Select a session (`turn`: then show that turn, from the search in messages). */
  onSelect: (id: string, turn?: number) => void;
  /** Bumped by the app when sessions changed elsewhere. */
  refreshKey: number;
  /** Called after a mutation (the app may refresh the open session). */
  onChanged: (deletedId?: string) => void;
  /** Report an error to the user. */
  onError: (message: string) => void;
}

/**
 * A session title for display: the server titles a session after its first prompt, which may
 * begin with the upload list the server folded in; show the words instead.
 */
export function displayTitle(title: string | null | undefined): string {
  const t = (title ?? "").replace(/<uploaded_files>[\s\S]*?(<\/uploaded_files>|$)/, "")
    .replace(/<\/?(image|video|audio|document)\b[^>]*>/g, "").trim();
  return t || (title ? "Files" : "Untitled");
}

/** Close the `<details>` menu an action was picked from. */
function closeMenu(e: Event): void {
  const details = (e.target as HTMLElement).closest("details");
  if (details && (e.target as HTMLElement).tagName === "BUTTON") details.open = false;
}

function basename(p: string): string {
  return p.replace(/\/+$/, "").split("/").pop() || p;
}

/** The session list (re-rendered only when its props change, not on every streamed event). */
export const Sidebar = memo(function Sidebar(props: SidebarProps): JSX.Element {
  const [q, setQ] = useState("");
  const [archived, setArchived] = useState(false);
  const [grouped, setGrouped] = useState(true);
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [renaming, setRenaming] = useState<string | null>(null);
  const [creating, setCreating] = useState<CreateRequest | null>(null);
  const [tick, setTick] = useState(0);
  const [poll, setPoll] = useState(0);
  const [unread, setUnread] = useState<Set<string>>(new Set());
  const busyRef = useRef<Set<string>>(new Set());

  // Other sessions' activity (unread dots, busy dots) shows without a reload: the list is
  // fetched again while the tab is visible, and when it becomes visible. A failed background
  // fetch is not reported (the next one retries; a user action reports its own errors).
  const polled = useRef(false);
  useEffect(() => {
    const refresh = () => {
      if (document.visibilityState !== "visible") return;
      polled.current = true;
      setPoll((p) => p + 1);
    };
    const timer = setInterval(refresh, LIST_POLL_MS);
    document.addEventListener("visibilitychange", refresh);
    return () => {
      clearInterval(timer);
      document.removeEventListener("visibilitychange", refresh);
    };
  }, []);

  // The seen times are re-read each time: another tab may have opened a session meanwhile.
  // A session just left counts as open until its latest time is known (what it wrote while
  // open, after the last look at the list, is not new activity).
  const leaving = useRef<Set<string>>(new Set());
  const [left, setLeft] = useState(0);
  useEffect(() => {
    const r = trackActivity({
      seen: loadSeen(),
      sessions,
      current: props.current,
      open: leaving.current,
      busy: busyRef.current,
    });
    busyRef.current = r.busy;
    saveSeen(r.seen);
    setUnread(r.unread);
  }, [sessions, props.current, left]);
  useEffect(() => {
    const id = props.current;
    if (!id) return;
    return () => {
      leaving.current.add(id);
      api<SessionInfo | null>("GET", `/api/sessions/${id}`).then((s) => {
        if (s) saveSeen(markSeen(loadSeen(), s));
      }, () => {}).finally(() => {
        leaving.current.delete(id);
        setLeft((n) => n + 1);
      });
    };
  }, [props.current]);

  // `?action=create` opens the dialog; `?action=create-in-dir&workDir=<p>` creates a session in
  // <p> and opens it. The parameters leave the address bar first, so a reload does not repeat it.
  useEffect(() => {
    const taken = takeUrlAction();
    if (!taken) return;
    const { action, workDir } = taken;
    if (action === "create") {
      setCreating({ dir: workDir ?? undefined });
    } else if (action === "create-in-dir") {
      if (!workDir?.trim()) {
        setCreating({
          error: "The link has action=create-in-dir but no workDir: pick a work directory.",
        });
        return;
      }
      api<SessionInfo>("POST", "/api/sessions/", { work_dir: workDir.trim() }).then((s) => {
        reload();
        props.onSelect(s.session_id);
      }, (err: Error) => {
        setCreating({
          dir: workDir.trim(),
          error: err.message,
          missing: err instanceof ApiError && err.status === 404,
        });
      });
    } else {
      props.onError(
        `Unknown action “${action}” in the address: use ?action=create or ?action=create-in-dir&workDir=<path>.`,
      );
    }
  }, []);

  useEffect(() => {
    let live = true;
    const quiet = polled.current;
    polled.current = false;
    const params = new URLSearchParams({ limit: "500" });
    if (q) params.set("q", q);
    if (archived) params.set("archived", "true");
    api<SessionInfo[]>("GET", `/api/sessions/?${params}`).then(
      (list) => live && setSessions(list ?? []),
      // A server out of reach is already told by the link state, and the next poll retries.
      (err: Error) =>
        live && !quiet && !(err instanceof NetworkError) && props.onError(err.message),
    );
    return () => {
      live = false;
    };
  }, [q, archived, props.refreshKey, tick, poll]);

  const reload = (deleted?: string) => {
    setTick((t) => t + 1);
    props.onChanged(deleted);
  };

  const act = async (fn: () => Promise<unknown>, deleted?: string) => {
    try {
      await fn();
      reload(deleted);
    } catch (err) {
      props.onError((err as Error).message);
    }
  };

  const bulk = (what: "archive" | "unarchive" | "delete") => {
    const ids = [...selected];
    if (what === "delete" && !confirm(`Delete ${ids.length} session(s)? This cannot be undone.`)) {
      return;
    }
    setSelected(new Set());
    act(
      async () => {
        for (const id of ids) {
          if (what === "delete") await api("DELETE", `/api/sessions/${id}`);
          else await api("PATCH", `/api/sessions/${id}`, { archived: what === "archive" });
        }
      },
      what === "delete" && props.current && ids.includes(props.current) ? props.current : undefined,
    );
  };

  const groups = groupSessions(sessions, grouped);

  return (
    <nav class="sidebar-inner" aria-label="Sessions">
      <div class="sidebar-head">
        <button type="button" class="primary wide" onClick={() => setCreating({})}>
          + New session
        </button>
        <label>
          <span class="sr-only">Search sessions</span>
          <input
            type="search"
            placeholder="Search sessions"
            value={q}
            onInput={(e) => setQ((e.target as HTMLInputElement).value)}
          />
        </label>
        <div class="row small">
          <label>
            <input
              type="checkbox"
              checked={grouped}
              onChange={() => setGrouped(!grouped)}
            />{" "}
            By folder
          </label>
          <label>
            <input
              type="checkbox"
              checked={archived}
              onChange={() => setArchived(!archived)}
            />{" "}
            Archived
          </label>
        </div>
        {selected.size > 0 && (
          <div class="row small bulk" role="toolbar" aria-label="Selected sessions">
            <span>{selected.size} selected</span>
            <button
              type="button"
              onClick={() =>
                bulk(archived ? "unarchive" : "archive")}
            >
              {archived ? "Unarchive" : "Archive"}
            </button>
            <button
              type="button"
              class="danger"
              onClick={() =>
                bulk("delete")}
            >
              Delete
            </button>
          </div>
        )}
      </div>
      <MessageSearch
        q={q}
        current={props.current}
        onSelect={props.onSelect}
        onError={props.onError}
      />
      <div class="session-list">
        {sessions.length === 0 && (
          <p class="muted">
            {q ? "No session matches." : archived ? "No archived session." : "No session yet."}
          </p>
        )}
        {groups.map((g) => (
          <section
            key={g.key}
            class={g.key === PINNED ? "group pinned" : "group"}
            aria-label={g.title ? `Folder ${g.title}` : g.label ?? "Sessions"}
          >
            {g.label && <h3 title={g.title}>{g.label}</h3>}
            <ul>
              {g.sessions.map((s) => (
                <li
                  key={s.session_id}
                  class={`session ${s.session_id === props.current ? "current" : ""}`}
                >
                  <input
                    type="checkbox"
                    aria-label={`Select ${s.title}`}
                    checked={selected.has(s.session_id)}
                    onChange={() => {
                      const next = new Set(selected);
                      if (next.has(s.session_id)) next.delete(s.session_id);
                      else next.add(s.session_id);
                      setSelected(next);
                    }}
                  />
                  {renaming === s.session_id
                    ? (
                      <RenameForm
                        title={s.title}
                        onDone={(title) => {
                          setRenaming(null);
                          if (title && title !== s.title) {
                            act(() => api("PATCH", `/api/sessions/${s.session_id}`, { title }));
                          }
                        }}
                      />
                    )
                    : (
                      <button
                        type="button"
                        class="session-open"
                        aria-current={s.session_id === props.current ? "page" : undefined}
                        onClick={() => props.onSelect(s.session_id)}
                        // the whole title (the list cuts long ones), then the folder
                        title={`${displayTitle(s.title)}\n${s.work_dir}`}
                      >
                        <span class="session-title">{displayTitle(s.title)}</span>
                        {s.status?.state === "busy" && <span class="dot busy" aria-label="busy" />}
                        {unread.has(s.session_id) && s.session_id !== props.current && (
                          <span class="dot unread">
                            <span class="sr-only">new activity</span>
                          </span>
                        )}
                      </button>
                    )}
                  <details class="session-menu">
                    <summary aria-label={`Actions for ${s.title}`}>⋯</summary>
                    <div class="menu" onClick={closeMenu}>
                      <button
                        type="button"
                        onClick={() => setRenaming(s.session_id)}
                      >
                        Rename
                      </button>
                      <button
                        type="button"
                        onClick={() =>
                          act(() =>
                            api("PATCH", `/api/sessions/${s.session_id}`, { archived: !s.archived })
                          )}
                      >
                        {s.archived ? "Unarchive" : "Archive"}
                      </button>
                      <button
                        type="button"
                        class="pin"
                        onClick={() =>
                          act(() =>
                            api("PATCH", `/api/sessions/${s.session_id}`, { pinned: !s.pinned })
                          )}
                      >
                        {s.pinned ? "Unpin" : "Pin"}
                      </button>
                      <button
                        type="button"
                        class="danger"
                        onClick={() => {
                          if (confirm(`Delete “${s.title}”? This cannot be undone.`)) {
                            act(() => api("DELETE", `/api/sessions/${s.session_id}`), s.session_id);
                          }
                        }}
                      >
                        Delete
                      </button>
                    </div>
                  </details>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </div>
      {creating && (
        <CreateDialog
          initialDir={creating.dir}
          initialError={creating.error}
          initialMissing={creating.missing}
          onClose={() => setCreating(null)}
          onCreated={(id) => {
            setCreating(null);
            reload();
            props.onSelect(id);
          }}
        />
      )}
    </nav>
  );
});

function RenameForm(
  { title, onDone }: { title: string; onDone: (t: string | null) => void },
): JSX.Element {
  const [value, setValue] = useState(title);
  return (
    <form
      class="rename"
      onSubmit={(e) => {
        e.preventDefault();
        onDone(value.trim().slice(0, 200));
      }}
    >
      <label class="grow">
        <span class="sr-only">New title</span>
        <input
          autoFocus
          value={value}
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => e.key === "Escape" && onDone(null)}
          onBlur={() => onDone(value.trim().slice(0, 200))}
        />
      </label>
    </form>
  );
}

/** The create-session dialog. */
export function CreateDialog(
  { onClose, onCreated, initialDir, initialError, initialMissing }: {
    onClose: () => void;
    onCreated: (id: string) => void;
    initialDir?: string;
    initialError?: string;
    initialMissing?: boolean;
  },
): JSX.Element {
  const [dir, setDir] = useState(initialDir ?? "");
  const [recent, setRecent] = useState<string[]>([]);
  const [startup, setStartup] = useState("");
  const [error, setError] = useState<string | null>(initialError ?? null);
  const [missing, setMissing] = useState(initialMissing ?? false);
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  // Once the user has typed or picked a directory, the late default never replaces it.
  const touched = useRef(false);

  useEffect(() => {
    dialog.current?.showModal?.();
    api<string>("GET", "/api/work-dirs/startup").then((s) => {
      setStartup(s);
      if (!touched.current) setDir((d) => d || s);
    }, () => {});
    api<string[]>("GET", "/api/work-dirs/").then((r) => setRecent(r ?? []), () => {});
  }, []);

  const create = async (createDir: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const body = dir.trim() ? { work_dir: dir.trim(), create_dir: createDir } : {};
      const s = await api<SessionInfo>("POST", "/api/sessions/", body);
      onCreated(s.session_id);
    } catch (err) {
      const e = err as Error;
      setMissing(e instanceof ApiError && e.status === 404);
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={dialog}
      class="dialog"
      aria-labelledby="create-title"
      onClose={onClose}
      onCancel={onClose}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          create(false);
        }}
      >
        <h2 id="create-title">New session</h2>
        <label class="field">
          <span>Work directory</span>
          <input
            name="work_dir"
            value={dir}
            placeholder={startup || "/path/to/project"}
            onInput={(e) => {
              touched.current = true;
              setDir((e.target as HTMLInputElement).value);
              setMissing(false);
            }}
          />
        </label>
        {(startup || recent.length > 0) && (
          <div class="recent" role="group" aria-label="Recent work directories">
            {[
              startup,
              ...recent.filter((r) =>
                r !== startup
              ),
            ].filter(Boolean).map((r) => (
              <button
                key={r}
                type="button"
                class="chip"
                onClick={() => {
                  touched.current = true;
                  setDir(r);
                }}
              >
                {r}
              </button>
            ))}
          </div>
        )}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          {missing
            ? (
              <button type="button" class="primary" disabled={busy} onClick={() => create(true)}>
                Create the directory and start
              </button>
            )
            : <button type="submit" class="primary" disabled={busy}>Create</button>}
          <button type="button" onClick={onClose}>Cancel</button>
        </div>
      </form>
    </dialog>
  );
}
