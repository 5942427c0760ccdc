/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The composer: a text box that sends on Enter (Shift+Enter for a new line), a `/` menu of the
 * server's slash commands, `@` mentions of work-dir files, attachments by picker, paste and
 * drag-and-drop (uploaded at once, folded into the next prompt by the server), a queue while the
 * agent is busy, steer, cancel, and the plan-mode toggle.
 *
 * @module
 */
import type { JSX } from "preact";
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, uploadFile } from "./api.ts";
import { withCodeSpans } from "./code_spans.tsx";
import type { SessionStream, StreamSnapshot } from "./session_stream.ts";

/** The marker the server reads as "files only, no message" (reference §A6). */
export const FILES_ONLY = "KIMI_FILE_UPLOAD_WITHOUT_MESSAGE";

/** The model part of `GET /api/config/`. */
interface ModelConfig {
  default_model: string;
  default_thinking: boolean;
  models: { name: string }[];
}

interface Attachment {
  name: string;
  state: "uploading" | "ready" | "failed";
  error?: string;
}

/** The composer of one session. */
export function Composer(
  { sessionId, stream, snap }: { sessionId: string; stream: SessionStream; snap: StreamSnapshot },
): JSX.Element {
  const [text, setText] = useState("");
  const [files, setFiles] = useState<Attachment[]>([]);
  const [menuIndex, setMenuIndex] = useState(0);
  const [mentions, setMentions] = useState<string[]>([]);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  // A session just opened (created, or picked from a link) with the focus nowhere: it goes to
  // the message box, so one can type at once. Not on touch screens (the keyboard would cover
  // the conversation), nor away from where the user put it.
  useEffect(() => {
    const active = document.activeElement;
    if ((!active || active === document.body) && !matchMedia("(pointer: coarse)").matches) {
      input.current?.focus();
    }
  }, [sessionId]);
  // The box grows with what is typed up to its CSS max-height (then it scrolls), and shrinks
  // back once the message is sent.
  useLayoutEffect(() => {
    const el = input.current;
    if (!el) return;
    el.style.height = "auto";
    const s = getComputedStyle(el);
    const borders = parseFloat(s.borderTopWidth) + parseFloat(s.borderBottomWidth);
    el.style.height = `${el.scrollHeight + borders}px`;
  }, [text]);
  const [config, setConfig] = useState<ModelConfig | null>(null);
  const [configNote, setConfigNote] = useState<string | null>(null);

  useEffect(() => {
    api<ModelConfig>("GET", "/api/config/").then(setConfig, () => setConfig(null));
  }, []);

  // A model or thinking change in flight: a prompt sent meanwhile waits for it, so it runs with
  // the settings just picked (the server restarts idle sessions before answering).
  const configChange = useRef<Promise<void> | null>(null);
  const patchConfig = (body: Partial<Omit<ModelConfig, "models">>) => {
    const change = applyConfig(body).finally(() => {
      if (configChange.current === change) configChange.current = null;
    });
    configChange.current = change;
    return change;
  };
  const applyConfig = async (body: Partial<Omit<ModelConfig, "models">>) => {
    try {
      const r = await api<{ config: ModelConfig; skipped_busy_session_ids: string[] | null }>(
        "PATCH",
        "/api/config/",
        body,
      );
      setConfig(r.config);
      setConfigNote(
        r.skipped_busy_session_ids?.includes(sessionId)
          ? "Applies when this session is idle again."
          : null,
      );
    } catch (err) {
      setConfigNote((err as Error).message);
    }
  };

  const slashQuery = /^\/(\S*)$/.exec(text)?.[1];
  const menu = useMemo(() => {
    if (slashQuery === undefined) return [];
    const q = slashQuery.toLowerCase();
    return snap.slashCommands.filter((c) =>
      c.name.toLowerCase().startsWith(q) || c.aliases.some((a) => a.toLowerCase().startsWith(q))
    ).slice(0, 12);
  }, [slashQuery, snap.slashCommands]);
  const mentionQuery = /(?:^|\s)@(\S*)$/.exec(text)?.[1];

  useEffect(() => {
    if (mentionQuery === undefined) {
      setMentions([]);
      return;
    }
    let live = true;
    const dir = mentionQuery.includes("/")
      ? mentionQuery.slice(0, mentionQuery.lastIndexOf("/"))
      : "";
    const prefix = mentionQuery.slice(dir ? dir.length + 1 : 0).toLowerCase();
    api<{ name: string; type: string }[]>("GET", `/api/sessions/${sessionId}/files/${dir || "."}`)
      .then((entries) => {
        if (!live || !Array.isArray(entries)) return;
        setMentions(
          entries.filter((e) => e.name.toLowerCase().startsWith(prefix)).slice(0, 10).map((e) =>
            `${dir ? `${dir}/` : ""}${e.name}${e.type === "directory" ? "/" : ""}`
          ),
        );
      })
      .catch(() => live && setMentions([]));
    return () => {
      live = false;
    };
  }, [mentionQuery, sessionId]);

  useEffect(() => setMenuIndex(0), [slashQuery]);

  const addFiles = (list: FileList | File[]) => {
    for (const file of Array.from(list)) {
      const entry: Attachment = { name: file.name || "pasted image", state: "uploading" };
      setFiles((f) => [...f, entry]);
      uploadFile(sessionId, file).then(
        () => setFiles((f) => f.map((x) => x === entry ? { ...x, state: "ready" } : x)),
        (err: Error) =>
          setFiles((f) =>
            f.map((x) => x === entry ? { ...x, state: "failed", error: err.message } : x)
          ),
      );
    }
  };

  const uploading = files.some((f) => f.state === "uploading");
  const ready = files.filter((f) => f.state === "ready");

  const send = async () => {
    const value = text.trim();
    if (uploading) return;
    if (!value && ready.length === 0) return;
    setText("");
    setFiles([]);
    if (configChange.current) await configChange.current;
    stream.prompt(value || FILES_ONLY);
  };

  const complete = (value: string) => {
    setText(value);
    input.current?.focus();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (menu.length > 0) {
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const step = e.key === "ArrowDown" ? 1 : -1;
        setMenuIndex((menuIndex + step + menu.length) % menu.length);
        return;
      }
      if (e.key === "Tab" || (e.key === "Enter" && menu[menuIndex].name !== slashQuery)) {
        e.preventDefault();
        complete(`/${menu[menuIndex].name} `);
        return;
      }
    }
    if (mentions.length > 0 && e.key === "Tab") {
      e.preventDefault();
      complete(text.replace(/@(\S*)$/, `@${mentions[0]}`));
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    } else if (e.key === "Escape" && snap.busy) {
      e.preventDefault();
      stream.cancel();
    }
  };

  return (
    <div
      class={`composer ${dragging ? "dragging" : ""}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        if (e.dataTransfer?.files.length) addFiles(e.dataTransfer.files);
      }}
    >
      {snap.queue.length > 0 && (
        <ol class="queue" aria-label="Queued prompts">
          {snap.queue.map((q, i) => (
            <li key={i}>
              <span class="queued-text">{q}</span>
              <button type="button" class="link" onClick={() => stream.unqueue(i)}>Remove</button>
            </li>
          ))}
        </ol>
      )}
      {snap.steering.length > 0 && (
        <ol class="queue steering" aria-label="Steers waiting for the current step">
          {snap.steering.map((q, i) => (
            <li key={i}>
              <span class="queued-text">Steer: {q}</span>
              <span class="muted">taken in after the current step</span>
            </li>
          ))}
        </ol>
      )}
      {menu.length > 0 && (
        <ul class="popup" role="listbox" aria-label="Slash commands">
          {menu.map((c, i) => (
            <li
              key={c.name}
              role="option"
              aria-selected={i === menuIndex}
              class={i === menuIndex ? "active" : ""}
              onMouseDown={(e) => {
                e.preventDefault();
                complete(`/${c.name} `);
              }}
            >
              <b>/{c.name}</b> <span>{withCodeSpans(c.description)}</span>
            </li>
          ))}
        </ul>
      )}
      {mentions.length > 0 && (
        <ul class="popup" role="listbox" aria-label="Files">
          {mentions.map((m, i) => (
            <li
              key={m}
              role="option"
              aria-selected={i === 0}
              onMouseDown={(e) => {
                e.preventDefault();
                complete(text.replace(/@(\S*)$/, `@${m}`));
              }}
            >
              @{m}
            </li>
          ))}
        </ul>
      )}
      {files.length > 0 && (
        <ul class="attachments" aria-label="Attachments">
          {files.map((f, i) => (
            <li key={i} class={`chip ${f.state}`} title={f.error}>
              {f.name}
              {f.state === "uploading"
                ? " (uploading…)"
                : f.state === "failed"
                ? ` (failed: ${f.error})`
                : ""}
              {f.state === "failed" && (
                <button
                  type="button"
                  class="link chip-remove"
                  aria-label={`Remove ${f.name}`}
                  onClick={() => setFiles((all) => all.filter((x) => x !== f))}
                >
                  ×
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <div class="composer-row">
        <button
          type="button"
          class="icon"
          aria-label="Attach files"
          title="Attach files"
          onClick={() => picker.current?.click()}
        >
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
            <path
              d="M16.5 6.5 8.6 14.4a2 2 0 0 0 2.8 2.8l7.9-7.9a4 4 0 0 0-5.7-5.7L5.7 11.5a6 6 0 0 0 8.5 8.5l6.3-6.3"
              fill="none"
              stroke="currentColor"
              stroke-width="2"
              stroke-linecap="round"
            />
          </svg>
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          aria-label="Choose files to attach"
          onChange={(e) => {
            const el = e.target as HTMLInputElement;
            if (el.files?.length) addFiles(el.files);
            el.value = "";
          }}
        />
        <label class="grow">
          <span class="sr-only">Message</span>
          <textarea
            ref={input}
            rows={2}
            value={text}
            placeholder={snap.busy
              ? "The agent is working — type to queue, Esc to stop"
              : "Message kimi — / for commands, @ for files"}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            onKeyDown={onKeyDown}
            onPaste={(e) => {
              const pasted = Array.from(e.clipboardData?.files ?? []);
              if (pasted.length) {
                e.preventDefault();
                addFiles(pasted);
              }
            }}
          />
        </label>
        {snap.busy && text.trim() && (
          <button
            type="button"
            onClick={() => {
              stream.steer(text.trim());
              setText("");
            }}
          >
            Steer
          </button>
        )}
        {snap.busy
          ? (
            <button type="button" class="danger" onClick={() => stream.cancel()}>
              Stop
            </button>
          )
          : null}
        <button type="button" class="primary" disabled={uploading} onClick={send}>
          {snap.busy ? "Queue" : "Send"}
        </button>
      </div>
      <div class="composer-tools">
        {config && config.models.length > 0 && (
          <label>
            <span class="sr-only">Model</span>
            <select
              value={config.default_model}
              title="Default model (restarts idle sessions)"
              onChange={(e) =>
                patchConfig({ default_model: (e.target as HTMLSelectElement).value })}
            >
              {config.models.map((m) => <option key={m.name} value={m.name}>{m.name}</option>)}
            </select>
          </label>
        )}
        {config && (
          <label class="switch">
            <input
              type="checkbox"
              checked={config.default_thinking}
              onChange={(e) =>
                patchConfig({ default_thinking: (e.target as HTMLInputElement).checked })}
            />{" "}
            Thinking
          </label>
        )}
        <label class="switch">
          <input
            type="checkbox"
            checked={snap.transcript.usage.planMode}
            onChange={(e) => stream.setPlanMode((e.target as HTMLInputElement).checked)}
          />{" "}
          Plan mode
        </label>
        {configNote && <span role="status">{configNote}</span>}
      </div>
    </div>
  );
}
