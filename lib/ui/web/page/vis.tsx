/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * `kimi vis`: the read-only tracing viewer over `/api/vis` — sessions explorer by project,
 * a wire timeline per turn and step with durations and token usage, the context, the state,
 * subagents, statistics, and ZIP export/import.
 *
 * @module
 */
import type { JSX } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, AuthError, currentToken, tokenUrl } from "./api.ts";
import { Markdown } from "./chat.tsx";
import { buildTimeline, type VisEvent, type VisTurn } from "./timeline.ts";
import { DecisionPathView, IntegrityView, ToolStatsView, UsageView } from "./vis_views.tsx";

/** A session as `GET /api/vis/sessions` lists it. */
export interface VisSession {
  /** Id. */
  session_id: string;
  /** Directory. */
  session_dir: string;
  /** Work dir, when known. */
  work_dir: string | null;
  /** Hash of the work dir (the URL's first segment). */
  work_dir_hash: string;
  /** Title. */
  title: string;
  /** Last change (unix seconds). */
  last_updated: number;
  /** Number of turns. */
  turns: number;
  /** Whether imported. */
  imported: boolean;
  /** Subagents recorded. */
  subagent_count: number;
  /** Size of wire.jsonl. */
  wire_size: number;
}

function secs(a: number, b: number): string {
  const d = Math.max(0, b - a);
  return d < 10 ? `${d.toFixed(2)} s` : `${d.toFixed(1)} s`;
}

function visPath(): { hash: string; id: string } | null {
  const m = /^\/vis\/sessions\/([^/]+)\/([^/]+)/.exec(location.pathname);
  return m ? { hash: decodeURIComponent(m[1]), id: decodeURIComponent(m[2]) } : null;
}

/** The vis app. */
export function VisApp({ onAuthFailed }: { onAuthFailed: () => void }): JSX.Element {
  const [route, setRoute] = useState(visPath);
  const [view, setView] = useState<"sessions" | "stats">("sessions");
  useEffect(() => {
    const onPop = () => setRoute(visPath());
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);
  const go = (r: { hash: string; id: string } | null) => {
    history.pushState(
      null,
      "",
      r ? `/vis/sessions/${encodeURIComponent(r.hash)}/${encodeURIComponent(r.id)}` : "/vis",
    );
    setRoute(r);
  };
  const onError = (e: Error) => {
    if (e instanceof AuthError) onAuthFailed();
  };
  return (
    <div class="vis">
      <header class="topbar">
        <h1 class="session-heading">
          <button type="button" class="link" onClick={() => go(null)}>kimi vis</button>
        </h1>
        <span class="muted">Agent tracing visualizer · read-only</span>
        <nav class="tools" aria-label="Views">
          <button
            type="button"
            aria-pressed={!route && view === "sessions"}
            onClick={() => {
              go(null);
              setView("sessions");
            }}
          >
            Sessions
          </button>
          <button
            type="button"
            aria-pressed={!route && view === "stats"}
            onClick={() => {
              go(null);
              setView("stats");
            }}
          >
            Statistics
          </button>
        </nav>
      </header>
      <main class="vis-main">
        {route
          ? <VisSessionView hash={route.hash} id={route.id} onError={onError} />
          : view === "stats"
          ? <VisStats onError={onError} />
          : <VisExplorer onOpen={go} onError={onError} />}
      </main>
    </div>
  );
}

function VisExplorer(
  { onOpen, onError }: {
    onOpen: (r: { hash: string; id: string }) => void;
    onError: (e: Error) => void;
  },
): JSX.Element {
  const [sessions, setSessions] = useState<VisSession[] | null>(null);
  const [q, setQ] = useState("");
  const [importedOnly, setImportedOnly] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    api<VisSession[]>("GET", "/api/vis/sessions").then(setSessions, (e: Error) => {
      setMessage(e.message);
      onError(e);
    });
  }, [tick]);
  const shown = (sessions ?? []).filter((s) =>
    (!importedOnly || s.imported) &&
    (!q || `${s.title} ${s.work_dir ?? ""} ${s.session_id}`.toLowerCase().includes(q.toLowerCase()))
  );
  const groups = new Map<string, VisSession[]>();
  for (const s of shown) {
    const key = s.imported ? "Imported" : s.work_dir ?? s.work_dir_hash;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  const importZip = async (file: File) => {
    const form = new FormData();
    form.append("file", file, file.name);
    const token = currentToken();
    const res = await fetch("/api/vis/sessions/import", {
      method: "POST",
      body: form,
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });
    const body = await res.json().catch(() => ({}));
    setMessage(
      res.ok ? `Imported ${body.session_id ?? "session"}.` : String(body.detail ?? res.statusText),
    );
    setTick((t) => t + 1);
  };
  return (
    <section aria-label="Sessions explorer" class="vis-explorer">
      <div class="row">
        <label class="grow">
          <span class="sr-only">Search sessions</span>
          <input
            type="search"
            placeholder="Search by title, folder or id"
            value={q}
            onInput={(e) => setQ((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          <input
            type="checkbox"
            checked={importedOnly}
            onChange={() => setImportedOnly(!importedOnly)}
          />{" "}
          Imported only
        </label>
        <label class="button">
          Import ZIP
          <input
            type="file"
            accept=".zip,application/zip"
            hidden
            onChange={(e) => {
              const f = (e.target as HTMLInputElement).files?.[0];
              if (f) importZip(f).catch((err) => setMessage((err as Error).message));
            }}
          />
        </label>
      </div>
      {message && <p role="status">{message}</p>}
      {sessions === null && !message && <p class="muted">Loading…</p>}
      {sessions?.length === 0 && <p class="muted">No recorded session.</p>}
      {[...groups].map(([dir, list]) => (
        <section key={dir} class="group" aria-label={`Project ${dir}`}>
          <h2 title={dir}>{dir}</h2>
          <table class="vis-table">
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Turns</th>
                <th scope="col">Updated</th>
                <th scope="col">Size</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((s) => (
                <tr key={`${s.work_dir_hash}/${s.session_id}`}>
                  <td>
                    <button
                      type="button"
                      class="link"
                      onClick={() => onOpen({ hash: s.work_dir_hash, id: s.session_id })}
                    >
                      {s.title || s.session_id}
                    </button>
                  </td>
                  <td>{s.turns}</td>
                  <td>{new Date(s.last_updated * 1000).toLocaleString()}</td>
                  <td>{Math.ceil(s.wire_size / 1024)} KB</td>
                  <td>
                    <a
                      href={tokenUrl(
                        `/api/vis/sessions/${encodeURIComponent(s.work_dir_hash)}/${
                          encodeURIComponent(s.session_id)
                        }/download`,
                      )}
                    >
                      ZIP
                    </a>{" "}
                    <button
                      type="button"
                      class="link"
                      onClick={() =>
                        navigator.clipboard?.writeText(s.session_dir)}
                    >
                      Copy dir
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
    </section>
  );
}

type VisTab =
  | "timeline"
  | "decisions"
  | "integrity"
  | "tools"
  | "usage"
  | "context"
  | "dual"
  | "state"
  | "subagents";

const TABS: readonly [VisTab, string][] = [
  ["timeline", "Timeline"],
  ["decisions", "Decision path"],
  ["integrity", "Integrity"],
  ["tools", "Tools"],
  ["usage", "Usage"],
  ["context", "Context"],
  ["dual", "Dual view"],
  ["state", "State"],
  ["subagents", "Subagents"],
];

/** A record to reveal in the timeline (`seq` makes a second click on the same record count). */
interface Reveal {
  index: number;
  seq: number;
}

function VisSessionView(
  { hash, id, onError }: { hash: string; id: string; onError: (e: Error) => void },
): JSX.Element {
  const base = `/api/vis/sessions/${encodeURIComponent(hash)}/${encodeURIComponent(id)}`;
  const [tab, setTab] = useState<VisTab>("timeline");
  const [wire, setWire] = useState<{ events: VisEvent[]; skipped: number } | null>(null);
  const [summary, setSummary] = useState<Record<string, unknown> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [title, setTitle] = useState(id);
  const [reveal, setReveal] = useState<Reveal | null>(null);
  useEffect(() => {
    api<VisSession[]>("GET", "/api/vis/sessions").then((list) => {
      const s = list.find((x) => x.session_id === id && x.work_dir_hash === hash);
      if (s) setTitle(s.title);
    }, () => {});
    api<{ events: VisEvent[]; skipped?: number }>("GET", `${base}/wire`).then(
      (w) => setWire({ events: w.events, skipped: w.skipped ?? 0 }),
      (e: Error) => {
        setError(e.message);
        onError(e);
      },
    );
    api<Record<string, unknown>>("GET", `${base}/summary`).then(setSummary, () => {});
  }, [base]);
  const events = wire?.events ?? null;
  const turns = useMemo(() => buildTimeline(events ?? []), [events]);
  const show = (index: number) => {
    setReveal((r) => ({ index, seq: (r?.seq ?? 0) + 1 }));
    setTab("timeline");
  };
  const onTabKey = (e: KeyboardEvent) => {
    const at = TABS.findIndex(([t]) => t === tab);
    const next = e.key === "ArrowRight"
      ? (at + 1) % TABS.length
      : e.key === "ArrowLeft"
      ? (at + TABS.length - 1) % TABS.length
      : e.key === "Home"
      ? 0
      : e.key === "End"
      ? TABS.length - 1
      : -1;
    if (next < 0) return;
    e.preventDefault();
    setTab(TABS[next][0]);
    document.getElementById(`vis-tab-${TABS[next][0]}`)?.focus();
  };
  const needsWire = tab !== "context" && tab !== "state" && tab !== "subagents" &&
    tab !== "dual";
  return (
    <section aria-label="Session trace" class="vis-session">
      <h2 title={id}>{title}</h2>
      {summary && (
        <dl class="summary">
          {["turns", "steps", "tool_calls", "errors", "compactions", "duration_sec"].map((k) => (
            <div key={k}>
              <dt>{k.replace("_", " ")}</dt>
              <dd>
                {typeof summary[k] === "number" ? Math.round(summary[k] as number * 10) / 10 : "–"}
              </dd>
            </div>
          ))}
        </dl>
      )}
      <div class="vis-tabbar">
        <div role="tablist" aria-label="Trace views" class="tabs" onKeyDown={onTabKey}>
          {TABS.map(([t, label]) => (
            <button
              key={t}
              id={`vis-tab-${t}`}
              type="button"
              role="tab"
              aria-selected={tab === t}
              aria-controls="vis-panel"
              tabIndex={tab === t ? 0 : -1}
              onClick={() => setTab(t)}
            >
              {label}
            </button>
          ))}
        </div>
        <a class="button" href={tokenUrl(`${base}/download`)}>Download ZIP</a>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      <div
        id="vis-panel"
        role="tabpanel"
        aria-labelledby={`vis-tab-${tab}`}
        class={`vis-panel vis-panel-${tab}`}
      >
        {tab === "timeline" && events && (
          <Timeline
            turns={turns}
            reveal={reveal}
            onRevealed={() => setReveal(null)}
          />
        )}
        {tab === "decisions" && events && <DecisionPathView events={events} onShow={show} />}
        {tab === "integrity" && wire && (
          <IntegrityView events={wire.events} skipped={wire.skipped} onShow={show} />
        )}
        {tab === "tools" && events && <ToolStatsView events={events} />}
        {tab === "usage" && events && <UsageView events={events} />}
        {tab === "context" && <ContextView url={`${base}/context`} />}
        {tab === "dual" && (
          <div class="vis-dual">
            <section aria-label="Wire timeline">
              <h3>Wire</h3>
              {events
                ? <Timeline turns={turns} reveal={null} onRevealed={() => {}} />
                : <p class="muted">Loading…</p>}
            </section>
            <section aria-label="Context messages">
              <h3>Context</h3>
              <ContextView url={`${base}/context`} />
            </section>
          </div>
        )}
        {tab === "state" && <JsonView url={`${base}/state`} />}
        {tab === "subagents" && <JsonView url={`${base}/subagents`} />}
        {needsWire && !events && !error && <p class="muted">Loading…</p>}
      </div>
    </section>
  );
}

/** Open every `<details>` around `el` and its own, so that it shows. */
function openAround(el: Element): void {
  for (let d = el.closest("details"); d; d = d.parentElement?.closest("details") ?? null) {
    d.open = true;
  }
  el.querySelector("details")?.setAttribute("open", "");
}

function Timeline(
  { turns, reveal, onRevealed }: {
    turns: VisTurn[];
    reveal: Reveal | null;
    onRevealed: () => void;
  },
): JSX.Element {
  const [filter, setFilter] = useState("");
  const [highlight, setHighlight] = useState<number | null>(null);
  useEffect(() => {
    if (!reveal) return;
    // Revealed once: coming back to the timeline later does not move the focus again.
    onRevealed();
    setFilter("");
    // The record itself or, for a TurnBegin or StepBegin (which head their turn or step rather
    // than show in it), the first record after it.
    const all = [...document.querySelectorAll<HTMLElement>(".timeline [data-index]")];
    const at = (el: HTMLElement) => Number(el.dataset.index);
    const after = all.filter((el) => at(el) >= reveal.index).sort((a, b) => at(a) - at(b));
    const target = after[0] ?? all.at(-1);
    if (!target) return;
    setHighlight(Number(target.dataset.index));
    openAround(target);
    target.scrollIntoView({ block: "center" });
    target.querySelector<HTMLElement>("summary")?.focus();
  }, [reveal?.seq]);
  if (turns.length === 0) return <p class="muted">This session has no recorded turn.</p>;
  return (
    <div class="timeline">
      <label>
        <span class="sr-only">Filter events by type</span>
        <input
          type="search"
          placeholder="Filter events by type (e.g. ToolCall)"
          value={filter}
          onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
        />
      </label>
      {turns.map((t) => (
        <details key={t.n} class="vis-turn" open={turns.length <= 5}>
          <summary>
            <b>Turn {t.n}</b> · {secs(t.start, t.end)} · {t.steps.length} step(s) ·{" "}
            <span class="user-text">{t.input.slice(0, 120)}</span>
          </summary>
          {t.steps.map((s) => (
            <div key={s.n} class="vis-step">
              <h4>
                Step {s.n} · {secs(s.start, s.end)}
                {s.tokens && ` · ${s.tokens.input} in / ${s.tokens.output} out tokens`}
              </h4>
              {s.tools.length > 0 && (
                <ul class="vis-tools" aria-label="Tool calls">
                  {s.tools.map((tool) => (
                    <li key={tool.id} class={tool.error ? "error" : ""}>
                      {tool.name}
                      {tool.error === true ? " (error)" : tool.error === null ? " (no result)" : ""}
                    </li>
                  ))}
                </ul>
              )}
              <EventList
                events={s.events}
                start={s.start}
                filter={filter}
                highlight={highlight}
              />
            </div>
          ))}
          {t.loose.length > 0 && (
            <div class="vis-step loose">
              <h4>Outside any step</h4>
              <EventList
                events={t.loose}
                start={t.start}
                filter={filter}
                highlight={highlight}
              />
            </div>
          )}
        </details>
      ))}
    </div>
  );
}

function EventList(
  { events, start, filter, highlight }: {
    events: VisEvent[];
    start: number;
    filter: string;
    highlight: number | null;
  },
): JSX.Element {
  return (
    <ol class="vis-events">
      {events.filter((e) => !filter || e.type.toLowerCase().includes(filter.toLowerCase()))
        .map((e) => (
          <li
            key={e.index}
            id={`vis-ev-${e.index}`}
            data-index={e.index}
            class={highlight === e.index ? "vis-hl" : undefined}
            aria-current={highlight === e.index ? "true" : undefined}
          >
            <details>
              <summary>
                <code>{e.type}</code> <small>#{e.index} · +{secs(start, e.timestamp)}</small>
              </summary>
              <pre>{JSON.stringify(e.payload, null, 2)}</pre>
            </details>
          </li>
        ))}
    </ol>
  );
}

function ContextView({ url }: { url: string }): JSX.Element {
  const [messages, setMessages] = useState<Record<string, unknown>[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ messages: Record<string, unknown>[] }>("GET", url).then(
      (r) => setMessages(r.messages),
      (e: Error) => setError(e.message),
    );
  }, [url]);
  if (error) return <p class="error">{error}</p>;
  if (!messages) return <p class="muted">Loading…</p>;
  return (
    <div class="context-view">
      <ol class="context">
        {messages.map((m, i) => (
          <li key={i} class={`ctx ${String(m.role ?? "")}`}>
            <b>{String(m.role ?? "?")}</b>
            {typeof m.content === "string"
              ? <Markdown text={m.content} />
              : <pre>{JSON.stringify(m.content ?? m, null, 2)}</pre>}
            {Array.isArray(m.tool_calls) && <pre>{JSON.stringify(m.tool_calls, null, 2)}</pre>}
          </li>
        ))}
      </ol>
    </div>
  );
}

function JsonView({ url }: { url: string }): JSX.Element {
  const [data, setData] = useState<unknown>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api("GET", url).then(setData, (e: Error) => setError(e.message));
  }, [url]);
  if (error) return <p class="error">{error}</p>;
  return <pre>{data === undefined ? "Loading…" : JSON.stringify(data, null, 2)}</pre>;
}

function VisStats({ onError }: { onError: (e: Error) => void }): JSX.Element {
  const [stats, setStats] = useState<Record<string, unknown> | null>(null);
  useEffect(() => {
    api<Record<string, unknown>>("GET", "/api/vis/statistics").then(setStats, onError);
  }, []);
  if (!stats) return <p class="muted">Loading…</p>;
  const totals = (stats.totals ?? {}) as Record<string, number>;
  const tools = (stats.tool_usage ?? []) as { name: string; count: number; errors: number }[];
  const projects = (stats.per_project ?? []) as {
    work_dir: string;
    sessions: number;
    turns: number;
  }[];
  return (
    <section aria-label="Statistics" class="vis-stats">
      <dl class="summary">
        {Object.entries(totals).map(([k, v]) => (
          <div key={k}>
            <dt>{k.replaceAll("_", " ")}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <h2>Tools</h2>
      <table class="vis-table">
        <thead>
          <tr>
            <th scope="col">Tool</th>
            <th scope="col">Calls</th>
            <th scope="col">Errors</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((t) => (
            <tr key={t.name}>
              <td>{t.name}</td>
              <td>{t.count}</td>
              <td>{t.errors}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Projects</h2>
      <table class="vis-table">
        <thead>
          <tr>
            <th scope="col">Folder</th>
            <th scope="col">Sessions</th>
            <th scope="col">Turns</th>
          </tr>
        </thead>
        <tbody>
          {projects.map((p) => (
            <tr key={p.work_dir}>
              <td>{p.work_dir}</td>
              <td>{p.sessions}</td>
              <td>{p.turns}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
