/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Side panels of a session: the work dir's files (browse, download), the git changes summary,
 * and the settings (default model, thinking, theme, text size, notifications).
 *
 * @module
 */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, tokenUrl } from "./api.ts";
import { FONT_SIZES, type FontSize, storedFontSize } from "./layout_prefs.ts";
import { setFontSize } from "./layout_apply.ts";

interface Entry {
  name: string;
  type: "file" | "directory";
  size?: number;
}

function encodePath(p: string): string {
  return p.split("/").map(encodeURIComponent).join("/");
}

/** Browse and download the files of the session's work dir. */
export function FilesPanel({ sessionId }: { sessionId: string }): JSX.Element {
  const [dir, setDir] = useState("");
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setEntries(null);
    setError(null);
    let live = true; // a late answer for another folder or session is dropped
    api<Entry[]>("GET", `/api/sessions/${sessionId}/files/${encodePath(dir) || "."}`).then(
      (e) => live && setEntries(e ?? []),
      (err: Error) => live && setError(err.message),
    );
    return () => {
      live = false;
    };
  }, [sessionId, dir]);
  const parent = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "";
  return (
    <section class="panel-body" aria-label="Files">
      <p class="crumbs">
        <button type="button" class="link" onClick={() => setDir("")}>work dir</button>
        {dir && ` / ${dir}`}
      </p>
      {error && <p class="error" role="alert">{error}</p>}
      {entries === null && !error && <p class="muted">Loading…</p>}
      <ul class="files">
        {dir && (
          <li>
            <button type="button" class="link" onClick={() => setDir(parent)}>..</button>
          </li>
        )}
        {entries?.map((e) => {
          const path = dir ? `${dir}/${e.name}` : e.name;
          return (
            <li key={e.name}>
              {e.type === "directory"
                ? (
                  <button type="button" class="link" onClick={() => setDir(path)}>
                    {e.name}/
                  </button>
                )
                : (
                  <a
                    href={tokenUrl(`/api/sessions/${sessionId}/files/${encodePath(path)}`)}
                    download={e.name}
                  >
                    {e.name}
                  </a>
                )}
              {e.size !== undefined && <small class="muted">{formatSize(e.size)}</small>}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** git's own letters (`git status --short`), `?` for a file git does not track yet. */
const CHANGE_LETTER: Record<string, string> = {
  untracked: "?",
  added: "A",
  modified: "M",
  deleted: "D",
  renamed: "R",
  typechange: "T",
};

interface GitStats {
  is_git_repo: boolean;
  has_changes: boolean;
  total_additions: number;
  total_deletions: number;
  files: {
    path: string;
    additions: number;
    deletions: number;
    status: string;
    change?: string;
  }[];
  error: string | null;
}

/** The git changes of the work dir. */
export function GitPanel(
  { sessionId, refreshKey }: { sessionId: string; refreshKey: number },
): JSX.Element {
  const [stats, setStats] = useState<GitStats | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true; // a late answer for another session is dropped
    api<GitStats>("GET", `/api/sessions/${sessionId}/git-diff`).then(
      (st) => live && setStats(st),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [sessionId, refreshKey]);
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!stats) return <p class="muted">Loading…</p>;
  if (!stats.is_git_repo) return <p class="muted">The work dir is not a git repository.</p>;
  if (stats.error) return <p class="error">{stats.error}</p>;
  if (!stats.has_changes) return <p class="muted">No changes.</p>;
  return (
    <section class="panel-body" aria-label="Git changes">
      <p>
        <span class="stat add">+{stats.total_additions}</span>{" "}
        <span class="stat del">-{stats.total_deletions}</span> in {stats.files.length} file(s)
      </p>
      <ul class="files">
        {stats.files.map((f) => (
          <li key={f.path}>
            <abbr class={`git-${f.change ?? f.status}`} title={f.change ?? f.status}>
              {CHANGE_LETTER[f.change ?? f.status] ?? "M"}
            </abbr>{" "}
            {f.path}{" "}
            <small>
              <span class="stat add">+{f.additions}</span>{" "}
              <span class="stat del">-{f.deletions}</span>
            </small>
          </li>
        ))}
      </ul>
    </section>
  );
}

interface ConfigView {
  default_model: string;
  default_thinking: boolean;
  models: { name: string; provider: string; model: string; max_context_size: number }[];
}

/** The text size setting (kept in this browser). */
export function FontSizeField(): JSX.Element {
  const [size, setSize] = useState<FontSize>(storedFontSize);
  const labels: Record<FontSize, string> = { small: "Small", normal: "Normal", large: "Large" };
  return (
    <label class="field">
      <span>Text size</span>
      <select
        name="font_size"
        value={size}
        onChange={(e) => {
          const next = (e.target as HTMLSelectElement).value as FontSize;
          setSize(next);
          setFontSize(next);
        }}
      >
        {(Object.keys(FONT_SIZES) as FontSize[]).map((k) => (
          <option key={k} value={k}>{labels[k]}</option>
        ))}
      </select>
    </label>
  );
}

/** Settings: default model, thinking, theme, text size and notifications. */
export function SettingsPanel(
  { theme, setTheme, notify, setNotify }: {
    theme: string;
    setTheme: (t: string) => void;
    notify: boolean;
    setNotify: (on: boolean) => void;
  },
): JSX.Element {
  const [config, setConfig] = useState<ConfigView | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  useEffect(() => {
    api<ConfigView>("GET", "/api/config/").then(setConfig, (e: Error) => setMessage(e.message));
  }, []);
  const patch = async (body: Record<string, unknown>) => {
    try {
      const r = await api<{ config: ConfigView; restarted_session_ids: string[] | null }>(
        "PATCH",
        "/api/config/",
        body,
      );
      setConfig(r.config);
      const n = r.restarted_session_ids?.length ?? 0;
      setMessage(`Saved${n ? `; ${n} idle session(s) restarted` : ""}.`);
    } catch (e) {
      setMessage((e as Error).message);
    }
  };
  return (
    <section class="panel-body" aria-label="Settings">
      <label class="field">
        <span>Theme</span>
        <select value={theme} onChange={(e) => setTheme((e.target as HTMLSelectElement).value)}>
          <option value="auto">System</option>
          <option value="dark">Dark</option>
          <option value="light">Light</option>
        </select>
      </label>
      <FontSizeField />
      <label class="field row">
        <input
          type="checkbox"
          checked={notify}
          onChange={(e) => setNotify((e.target as HTMLInputElement).checked)}
        />
        <span>Notify (and play a sound) when an approval waits and this tab is hidden</span>
      </label>
      {config && (
        <>
          <label class="field">
            <span>Default model</span>
            <select
              value={config.default_model}
              onChange={(e) => patch({ default_model: (e.target as HTMLSelectElement).value })}
            >
              {config.models.map((m) => (
                <option key={m.name} value={m.name}>
                  {m.name} ({m.provider} · {m.model})
                </option>
              ))}
            </select>
          </label>
          <label class="field row">
            <input
              type="checkbox"
              checked={config.default_thinking}
              onChange={(e) => patch({ default_thinking: (e.target as HTMLInputElement).checked })}
            />
            <span>Thinking</span>
          </label>
        </>
      )}
      {message && <p role="status">{message}</p>}
      <ConfigFileEditor />
    </section>
  );
}

/** The config file's text (providers, models, …), secrets masked by the server. */
function ConfigFileEditor(): JSX.Element {
  const [file, setFile] = useState<{ content: string; path: string } | null>(null);
  const [text, setText] = useState("");
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    api<{ content: string; path: string }>("GET", "/api/config/toml").then((f) => {
      setFile(f);
      setText(f.content);
    }, (e: Error) => setNote(e.message));
  }, []);
  const save = async () => {
    try {
      const r = await api<{ success: boolean; error?: string }>("PUT", "/api/config/toml", {
        content: text,
      });
      setNote(
        r.success
          ? "Saved. New sessions use it; running ones after a restart."
          : r.error ?? "Not saved.",
      );
    } catch (e) {
      setNote((e as Error).message);
    }
  };
  return (
    <details class="config-file">
      <summary>Providers and models (config file)</summary>
      {file && (
        <>
          <label class="field">
            <span>{file.path || "config file"}</span>
            <textarea
              rows={14}
              spellcheck={false}
              value={text}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            />
          </label>
          <p class="muted small">
            Secret values show as markers; leave a marker as it is to keep the stored secret.
          </p>
          <button type="button" class="primary" onClick={save}>Save</button>
        </>
      )}
      {note && <p role="status">{note}</p>}
    </details>
  );
}
