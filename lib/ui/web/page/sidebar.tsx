/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The session sidebar (search, grouped by work dir or flat, archived section, rename, archive,
 * delete, multi-select) and the create-session dialog (startup dir, recent work dirs, create a
 * missing directory on request).
 *
 * @module
 */
import type { JSX } from "preact";
import { memo } from "preact/compat";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "./api.ts";

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
}

/** Props of {@link Sidebar}. */
export interface SidebarProps {
  /** Selected session id. */
  current: string | null;
  /** Select a session. */
  onSelect: (id: string) => void;
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
  const [creating, setCreating] = useState(false);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    const params = new URLSearchParams({ limit: "500" });
    if (q) params.set("q", q);
    if (archived) params.set("archived", "true");
    api<SessionInfo[]>("GET", `/api/sessions/?${params}`).then(
      (list) => live && setSessions(list ?? []),
      (err: Error) => live && props.onError(err.message),
    );
    return () => {
      live = false;
    };
  }, [q, archived, props.refreshKey, tick]);

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

  const groups = new Map<string, SessionInfo[]>();
  for (const s of sessions) {
    const key = grouped ? s.work_dir : "";
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }

  return (
    <nav class="sidebar-inner" aria-label="Sessions">
      <div class="sidebar-head">
        <button type="button" class="primary wide" onClick={() => setCreating(true)}>
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
      <div class="session-list">
        {sessions.length === 0 && (
          <p class="muted">
            {q ? "No session matches." : archived ? "No archived session." : "No session yet."}
          </p>
        )}
        {[...groups].map(([dir, list]) => (
          <section key={dir} class="group" aria-label={dir ? `Folder ${dir}` : "Sessions"}>
            {dir && <h3 title={dir}>{basename(dir)}</h3>}
            <ul>
              {list.map((s) => (
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
                        title={s.work_dir}
                      >
                        <span class="session-title">{displayTitle(s.title)}</span>
                        {s.status?.state === "busy" && <span class="dot busy" aria-label="busy" />}
                      </button>
                    )}
                  <details class="session-menu">
                    <summary aria-label={`Actions for ${s.title}`}>⋯</summary>
                    <div class="menu" onClick={closeMenu}>
                      <button
                        type="button"
                        onClick={() =>
                          setRenaming(s.session_id)}
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
                        class="danger"
                        onClick={() => {
                          if (confirm(`Delete “${s.title}”? This cannot be undone.`)) {
                            act(() =>
                              api("DELETE", `/api/sessions/${s.session_id}`), s.session_id);
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
          onClose={() => setCreating(false)}
          onCreated={(id) => {
            setCreating(false);
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
  { onClose, onCreated, initialDir }: {
    onClose: () => void;
    onCreated: (id: string) => void;
    initialDir?: string;
  },
): JSX.Element {
  const [dir, setDir] = useState(initialDir ?? "");
  const [recent, setRecent] = useState<string[]>([]);
  const [startup, setStartup] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
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
