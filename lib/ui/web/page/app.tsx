/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The page's root: the token gate, the theme, the layout (sidebar as a drawer below 1024 px,
 * chat, side panel) and the open session's stream. `/vis` paths render the read-only tracing
 * viewer instead.
 *
 * @module
 */
import { type JSX, render } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { adoptTokenFromLocation, api, AuthError, clearToken, saveToken } from "./api.ts";
import { ApprovalCard, assistantText, QuestionCard, TurnView } from "./chat.tsx";
import { TasksButton, TasksPanel, useBackgroundTasks } from "./tasks_panel.tsx";
import { downloadSessionZip } from "./session_export.ts";
import { undoMarks } from "./undo_marks.ts";
import { scrollToTurn } from "./turn_jump.ts";
import { ChatSearchBar } from "./chat_search_bar.tsx";
import { Composer } from "./composer.tsx";
import { FilesPanel, GitPanel, SettingsPanel } from "./panels.tsx";
import { SessionStream, type StreamSnapshot } from "./session_stream.ts";
import { displayTitle, type SessionInfo, Sidebar } from "./sidebar.tsx";
import { SidebarSplitter } from "./splitter.tsx";
import { VisApp } from "./vis.tsx";

type AuthState = "checking" | "ok" | "missing" | "refused";

function usePref(key: string, initial: string): [string, (v: string) => void] {
  const [value, setValue] = useState(() => {
    try {
      return localStorage.getItem(key) ?? initial;
    } catch {
      return initial;
    }
  });
  const set = (v: string) => {
    setValue(v);
    try {
      localStorage.setItem(key, v);
    } catch {
      // Not kept.
    }
  };
  return [value, set];
}

/** The screen shown without a valid token: says why and what to do. */
export function TokenScreen(
  { state, onToken }: { state: "missing" | "refused"; onToken: (t: string) => void },
): JSX.Element {
  const [value, setValue] = useState("");
  return (
    <main class="token-screen" aria-labelledby="token-title">
      <h1 id="token-title">
        {state === "refused" ? "This token was not accepted" : "A token is needed"}
      </h1>
      <p>
        {state === "refused"
          ? (
            <>
              The server refused the token this page had: it is wrong, or it was replaced by{" "}
              <code>kimi web rotate-token</code>.
            </>
          )
          : "This kimi web server only answers requests that carry its access token."}
      </p>
      <p>
        Open the URL that <code>kimi web</code> printed in its terminal (it carries the token after
        {" "}
        <code>#token=</code>), or paste the token here. <code>kimi web</code>{" "}
        prints it again at every start.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) onToken(value.trim());
        }}
      >
        <label class="field">
          <span>Access token</span>
          <input
            type="password"
            autoComplete="off"
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="primary">Continue</button>
      </form>
    </main>
  );
}

function beep(): void {
  try {
    const ctx = new AudioContext();
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = 880;
    gain.gain.value = 0.08;
    osc.connect(gain).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.18);
    osc.onended = () => ctx.close();
  } catch {
    // No audio.
  }
}

function useStream(
  id: string | null,
  notify: boolean,
): [SessionStream | null, StreamSnapshot | null, number] {
  const [stream, setStream] = useState<SessionStream | null>(null);
  const [snap, setSnap] = useState<StreamSnapshot | null>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (!id) {
      setStream(null);
      setSnap(null);
      return;
    }
    const s = new SessionStream(id, {
      onAttention: () => {
        if (!document.hidden || !notify) return;
        beep();
        if ("Notification" in globalThis && Notification.permission === "granted") {
          new Notification("kimi is waiting for you", {
            body: "An approval or a question waits in kimi web.",
            tag: `kimi-${id}`,
          });
        }
      },
    });
    setStream(s);
    setSnap(s.snapshot);
    const off = s.subscribe((next) => {
      setSnap(next);
      setVersion((v) => v + 1);
    });
    return () => {
      off();
      s.close();
    };
  }, [id, notify]);
  return [stream, snap, version];
}

function selectedFromUrl(): string | null {
  return new URLSearchParams(location.search).get("session");
}

type Panel = "files" | "git" | "tasks" | "settings" | null;

/** The chat app of `kimi web`. */
export function WebApp({ onAuthFailed }: { onAuthFailed: () => void }): JSX.Element {
  const [current, setCurrent] = useState<string | null>(selectedFromUrl);
  const currentRef = useRef(current);
  currentRef.current = current;
  const [drawer, setDrawer] = useState(false);
  const [panel, setPanel] = useState<Panel>(null);
  const [refreshKey, setRefreshKey] = useState(0);
  const [info, setInfo] = useState<SessionInfo | null>(null);
  const [toast, setToast] = useState<string | null>(null);
  const [theme, setTheme] = usePref("kimi.theme", "auto");
  const [notifyPref, setNotifyPref] = usePref("kimi.notify", "on");
  const notify = notifyPref === "on";
  const [stream, snap, version] = useStream(current, notify);
  const tasks = useBackgroundTasks(current, version, onAuthFailed);
  const [exporting, setExporting] = useState(false);
  const [searchOpen, setSearchOpen] = useState(false);
  const [searchTick, setSearchTick] = useState(0);
  const [reveal, setReveal] = useState<number | null>(null);
  const searchReturn = useRef<HTMLElement | null>(null);

  const openSearch = useCallback(() => {
    const active = document.activeElement as HTMLElement | null;
    if (!active?.closest(".chat-search")) searchReturn.current = active;
    setSearchOpen(true);
    setSearchTick((n) => n + 1);
  }, []);

  const closeSearch = useCallback(() => {
    setSearchOpen(false);
    setReveal(null);
    const back = searchReturn.current;
    searchReturn.current = null;
    const target = back?.isConnected && back !== document.body
      ? back
      : document.querySelector<HTMLElement>(".composer textarea");
    // After the box is gone, so focus does not land on a removed element.
    requestAnimationFrame(() => target?.focus());
  }, []);

  // Ctrl/Cmd+F and Ctrl/Cmd+K search the open session instead of the browser's page search.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
      const key = e.key.toLowerCase();
      if ((key !== "f" && key !== "k") || !currentRef.current) return;
      e.preventDefault();
      openSearch();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  // Another session: its own search.
  useEffect(() => {
    setSearchOpen(false);
    setReveal(null);
  }, [current]);

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);

  // Closing a panel puts the focus back on the button that opened it (not on the page's body).
  const closePanel = () => {
    const opener = document.querySelector<HTMLElement>(`.topbar [data-panel="${panel}"]`);
    setPanel(null);
    opener?.focus();
  };

  const onError = useCallback((message: string) => {
    setToast(message);
  }, []);

  useEffect(() => {
    if (!current) {
      setInfo(null);
      return;
    }
    // An answer that arrives after the user moved on (another session, a newer refresh) is
    // dropped: a late reply must not put back the heading of a session no longer open.
    let stale = false;
    api<SessionInfo | null>("GET", `/api/sessions/${current}`).then((s) => {
      if (!stale) setInfo(s);
    }, (e: Error) => {
      if (!stale && e instanceof AuthError) onAuthFailed();
    });
    return () => {
      stale = true;
    };
  }, [current, refreshKey]);

  useEffect(() => {
    if (snap?.fatal?.kind === "auth") onAuthFailed();
  }, [snap?.fatal]);

  // A finished turn may have titled the session: refresh the list (also once the stream is
  // live: the open session's latest time then counts as seen).
  useEffect(() => {
    if (snap && !snap.busy) setRefreshKey((k) => k + 1);
  }, [snap?.busy, snap?.link === "live"]);

  const select = useCallback((id: string | null) => {
    setCurrent(id);
    setDrawer(false);
    const url = new URL(location.href);
    if (id) url.searchParams.set("session", id);
    else url.searchParams.delete("session");
    history.pushState(null, "", url.pathname + url.search + url.hash);
  }, []);

  useEffect(() => {
    const onPop = () => setCurrent(selectedFromUrl());
    addEventListener("popstate", onPop);
    if (notify && "Notification" in globalThis && Notification.permission === "default") {
      const ask = () => {
        Notification.requestPermission().catch(() => {});
        removeEventListener("pointerdown", ask);
      };
      addEventListener("pointerdown", ask, { once: true });
    }
    return () => removeEventListener("popstate", onPop);
  }, []);

  // A hit of the search in messages: open its session, then show the turn once it is loaded.
  const [jump, setJump] = useState<{ id: string; turn: number } | null>(null);
  const openSession = useCallback((id: string, turn?: number) => {
    select(id);
    setJump(turn === undefined ? null : { id, turn });
  }, []);
  const loadedTurns = snap?.transcript.turns.length ?? 0;
  useEffect(() => {
    if (!jump || jump.id !== current || snap?.link !== "live") return;
    setJump(null);
    if (jump.turn >= loadedTurns) return;
    setReveal(jump.turn);
    scrollToTurn(jump.turn);
  }, [jump, current, snap?.link, loadedTurns]);

  const onSessionsChanged = useCallback((deleted?: string) => {
    if (deleted && deleted === currentRef.current) select(null);
    setRefreshKey((k) => k + 1);
  }, []);

  const fork = async (turnIndex: number) => {
    if (!current) return;
    try {
      const s = await api<SessionInfo>("POST", `/api/sessions/${current}/fork`, {
        turn_index: turnIndex,
      });
      setRefreshKey((k) => k + 1);
      select(s.session_id);
    } catch (e) {
      setToast((e as Error).message);
    }
  };

  const exportZip = async () => {
    if (!current) return;
    setExporting(true);
    try {
      await downloadSessionZip(current);
    } catch (e) {
      if (e instanceof AuthError) onAuthFailed();
      else setToast(`Export failed: ${(e as Error).message}`);
    } finally {
      setExporting(false);
    }
  };

  const undo = useCallback(() => {
    if (!stream || stream.snapshot.busy) return;
    const sure = confirm(
      "Undo the last turn? The files it changed are put back and the approvals it granted " +
        "for this session are revoked; the conversation goes on from before it.",
    );
    if (sure) stream.prompt("/undo");
  }, [stream]);

  const usage = snap?.transcript.usage;
  const turns = snap?.transcript.turns ?? [];
  const todos = snap?.transcript.todos ?? [];

  return (
    <div class={`app ${drawer ? "drawer-open" : ""}`}>
      <aside id="sidebar" class="sidebar">
        <Sidebar
          current={current}
          onSelect={openSession}
          refreshKey={refreshKey}
          onChanged={onSessionsChanged}
          onError={onError}
        />
      </aside>
      <SidebarSplitter />
      {drawer && <div class="scrim" onClick={() => setDrawer(false)} aria-hidden="true" />}
      <main class="main">
        <header class="topbar">
          <button
            type="button"
            class="icon menu-button"
            aria-label="Open the session list"
            aria-controls="sidebar"
            aria-expanded={drawer}
            onClick={() => setDrawer(!drawer)}
          >
            ☰
          </button>
          <div class="title-block">
            <h1 class="session-heading">
              {info ? displayTitle(info.title) : current ? "Session" : "kimi web"}
            </h1>
            {info && <span class="workdir" title={info.work_dir}>{info.work_dir}</span>}
          </div>
          {snap && (
            <span class={`link-state ${snap.link}`} role="status">
              {snap.link === "live" ? (snap.busy ? "working…" : "ready") : snap.link}
            </span>
          )}
          {usage?.contextUsage != null && (
            <span
              class="context-usage"
              title={`${usage.contextTokens ?? "?"} / ${usage.maxContextTokens ?? "?"} tokens`}
            >
              <span class="sr-only">Context used:</span>
              {Math.round(usage.contextUsage * 100)}%
            </span>
          )}
          <nav class="tools" aria-label="Panels">
            {current && (
              <>
                <button
                  type="button"
                  aria-pressed={panel === "files"}
                  data-panel="files"
                  onClick={() => setPanel(panel === "files" ? null : "files")}
                >
                  Files
                </button>
                <button
                  type="button"
                  aria-pressed={panel === "git"}
                  data-panel="git"
                  onClick={() => setPanel(panel === "git" ? null : "git")}
                >
                  Changes
                </button>
              </>
            )}
            <button
              type="button"
              aria-pressed={panel === "settings"}
              data-panel="settings"
              onClick={() => setPanel(panel === "settings" ? null : "settings")}
            >
              Settings
            </button>
            {current && (
              <button
                type="button"
                aria-pressed={searchOpen}
                aria-keyshortcuts="Control+F Meta+F Control+K Meta+K"
                title="Search in this conversation (Ctrl+F)"
                onClick={() => (searchOpen ? closeSearch() : openSearch())}
              >
                Search
              </button>
            )}
            {current && (
              <>
                <TasksButton
                  state={tasks}
                  pressed={panel === "tasks"}
                  onToggle={() => setPanel(panel === "tasks" ? null : "tasks")}
                />
                <button
                  type="button"
                  disabled={exporting}
                  title="Download this session as a ZIP (kimi vis imports it)"
                  onClick={exportZip}
                >
                  {exporting ? "Exporting…" : "Export"}
                </button>
              </>
            )}
            <button
              type="button"
              class="icon"
              aria-label={`Theme: ${theme}. Switch theme`}
              onClick={() => {
                // the opposite of what is shown: "auto" on a dark system shows dark
                const shown = theme === "auto"
                  ? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light")
                  : theme;
                setTheme(shown === "dark" ? "light" : "dark");
              }}
            >
              ◐
            </button>
          </nav>
        </header>
        {toast && (
          <div class="toast" role="alert">
            {toast}
            <button type="button" class="link" onClick={() => setToast(null)}>Dismiss</button>
          </div>
        )}
        {!current && (
          <section class="empty">
            <h2>Pick a session or start a new one</h2>
            <p>
              Sessions of every project on this machine are in the list{" "}
              <span class="wide-only">on the left</span>
              <span class="narrow-only">behind the ☰ button</span>.
            </p>
          </section>
        )}
        {current && snap?.fatal && snap.fatal.kind !== "auth" && (
          <section class="empty" role="alert">
            <h2>{snap.fatal.kind === "gone" ? "Session not found" : "Access denied"}</h2>
            <p>
              {snap.fatal.kind === "gone"
                ? "It may have been deleted (in another tab or window): pick another session in the list, or start a new one."
                : `${snap.fatal.message}. This server does not accept connections from here.`}
            </p>
          </section>
        )}
        {current && stream && snap && !snap.fatal && (
          <>
            {snap.transcript.goal && (
              <div class={`goal-strip ${snap.transcript.goal.status}`} role="status">
                <b>Goal</b> {snap.transcript.goal.objective} ·{" "}
                {snap.transcript.goal.status.replaceAll("_", " ")}
                {snap.transcript.goal.reason ? ` (${snap.transcript.goal.reason})` : ""} · turns
                {" "}
                {snap.transcript.goal.turns[0]}
                {snap.transcript.goal.turns[1] ? `/${snap.transcript.goal.turns[1]}` : ""}
              </div>
            )}
            {todos.length > 0 && (
              <details class="todo-bar">
                <summary>
                  Todos {todos.filter((t) => t.status === "done").length}/{todos.length}
                </summary>
                <ul>
                  {todos.map((t, i) => <li key={i} class={`todo ${t.status}`}>{t.title}</li>)}
                </ul>
              </details>
            )}
            {searchOpen && (
              <ChatSearchBar
                turns={turns}
                version={version}
                focusTick={searchTick}
                onReveal={setReveal}
                onClose={closeSearch}
              />
            )}
            <ChatLog
              turns={turns}
              version={version}
              onFork={fork}
              onUndo={snap.busy ? undefined : undo}
              link={snap.link}
              reveal={reveal}
            />
            {snap.transcript.approvals.slice(0, 1).map((a) => (
              <ApprovalCard
                key={a.id}
                approval={a}
                onAnswer={(response, feedback) => stream.answerApproval(a.id, response, feedback)}
              />
            ))}
            {snap.transcript.approvals.length === 0 &&
              snap.transcript.questions.slice(0, 1).map((q) => (
                <QuestionCard
                  key={q.id}
                  question={q}
                  onAnswer={(answers) => stream.answerQuestion(q.id, answers)}
                />
              ))}
            {snap.error && <p class="error inline" role="alert">{snap.error}</p>}
            <Composer sessionId={current} stream={stream} snap={snap} />
          </>
        )}
      </main>
      {panel && (
        <aside
          class="side-panel"
          aria-label="Panel"
          onKeyDown={(e) => {
            if (e.key === "Escape" && !e.defaultPrevented) {
              e.preventDefault();
              closePanel();
            }
          }}
        >
          <header>
            <h2>
              {panel === "files"
                ? "Files"
                : panel === "git"
                ? "Changes"
                : panel === "tasks"
                ? "Background tasks"
                : "Settings"}
            </h2>
            <button
              type="button"
              class="icon"
              aria-label="Close panel"
              onClick={closePanel}
            >
              ✕
            </button>
          </header>
          {panel === "files" && current && <FilesPanel sessionId={current} />}
          {panel === "git" && current && <GitPanel sessionId={current} refreshKey={version} />}
          {panel === "tasks" && current && <TasksPanel sessionId={current} state={tasks} />}
          {panel === "settings" && (
            <SettingsPanel
              theme={theme}
              setTheme={setTheme}
              notify={notify}
              setNotify={(on) => setNotifyPref(on ? "on" : "off")}
            />
          )}
        </aside>
      )}
    </div>
  );
}

/** Turns rendered when a session opens, and added per "show earlier". */
const TURN_WINDOW = 100;

function ChatLog(
  { turns, version, onFork, onUndo, link, reveal }: {
    turns: StreamSnapshot["transcript"]["turns"];
    version: number;
    onFork: (i: number) => void;
    /** Undo the latest turn (absent while a turn runs). */
    onUndo?: () => void;
    link: string;
    /** A turn that must be rendered (the in-chat search's current match). */
    reveal: number | null;
  },
): JSX.Element {
  const [el, setEl] = useState<HTMLElement | null>(null);
  const [stick, setStick] = useState(true);
  useEffect(() => {
    if (el && stick) el.scrollTop = el.scrollHeight;
  }, [version, el]);
  // Long sessions open on their latest turns; earlier ones render on request.
  const [shown, setShown] = useState(TURN_WINDOW);
  const revealAt = reveal === null ? -1 : turns.findIndex((t) => t.index === reveal);
  const needed = revealAt < 0 ? 0 : turns.length - revealAt;
  // A revealed turn stays shown once the search moves on or closes.
  useEffect(() => {
    if (needed > shown) setShown(Math.ceil(needed / TURN_WINDOW) * TURN_WINDOW);
  }, [needed]);
  const last = turns.length - 1;
  const first = Math.max(0, turns.length - Math.max(shown, needed));
  const marks = useMemo(
    () => undoMarks(turns.map((t) => ({ ...t, answer: assistantText(t) }))),
    [turns, version],
  );
  const body = useMemo(
    () =>
      turns.slice(first).map((t) => (
        <TurnView
          key={t.index}
          turn={t}
          onFork={onFork}
          onUndo={t.index === marks.target ? onUndo : undefined}
          undone={marks.undone.has(t.index)}
          version={t.index === last ? version : 0}
        />
      )),
    [turns, version, first, marks, onUndo],
  );
  return (
    <section
      ref={setEl}
      class="chat"
      role="log"
      aria-label="Conversation"
      aria-busy={link === "replaying"}
      onScroll={(e) => {
        const t = e.currentTarget as HTMLElement;
        setStick(t.scrollHeight - t.scrollTop - t.clientHeight < 80);
      }}
    >
      {turns.length === 0 && link === "live" && (
        <p class="muted center">No messages yet. Say what you want done.</p>
      )}
      {first > 0 && (
        <p class="center">
          <button type="button" onClick={() => setShown(shown + TURN_WINDOW)}>
            Show earlier messages ({first} turn{first === 1 ? "" : "s"} hidden)
          </button>
        </p>
      )}
      {body}
    </section>
  );
}

/** The root: checks the token, then renders the chat app or the vis viewer. */
export function Root(): JSX.Element {
  const [auth, setAuth] = useState<AuthState>("checking");
  const vis = location.pathname === "/vis" || location.pathname.startsWith("/vis/");
  const probe = vis ? "/api/vis/capabilities" : "/api/sessions/?limit=1";
  const check = () => {
    api("GET", probe).then(
      () => setAuth("ok"),
      (e: Error) => {
        if (!(e instanceof AuthError)) return setAuth("ok");
        clearToken();
        setAuth("refused");
      },
    );
  };
  useEffect(() => {
    const token = adoptTokenFromLocation();
    api("GET", probe).then(
      () => setAuth("ok"),
      (e: Error) => {
        if (!(e instanceof AuthError)) return setAuth("ok");
        if (token) clearToken();
        setAuth(token ? "refused" : "missing");
      },
    );
  }, []);
  if (auth === "checking") return <p class="muted center" role="status">Connecting…</p>;
  if (auth === "missing" || auth === "refused") {
    return (
      <TokenScreen
        state={auth}
        onToken={(t) => {
          saveToken(t);
          setAuth("checking");
          check();
        }}
      />
    );
  }
  const failed = () => {
    clearToken();
    setAuth("refused");
  };
  return vis ? <VisApp onAuthFailed={failed} /> : <WebApp onAuthFailed={failed} />;
}

/** Mount the page into `#app`. */
export function mount(): void {
  const el = document.getElementById("app");
  if (el) render(<Root />, el);
}
