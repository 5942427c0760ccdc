/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The chat: turns with streamed markdown, thinking, tool cards, approval and question cards.
 *
 * @module
 */
import type { JSX } from "preact";
import { memo } from "preact/compat";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { renderMarkdown } from "./markdown.ts";
import { DisplayBlocks, ToolCard } from "./tool_cards.tsx";
import { withCodeSpans } from "./code_spans.tsx";
import type { Block, PendingApproval, PendingQuestion, Turn } from "./transcript.ts";

/** Markdown rendered once per text change. */
export function Markdown({ text }: { text: string }): JSX.Element {
  const html = useMemo(() => renderMarkdown(text), [text]);
  // deno-lint-ignore react-no-danger
  return <div class="md" dangerouslySetInnerHTML={{ __html: html }} />;
}

function copy(text: string): void {
  navigator.clipboard?.writeText(text).catch(() => {});
}

/** Render a list of blocks (a turn's or a subagent's). */
export function Blocks({ blocks }: { blocks: Block[] }): JSX.Element {
  return (
    <>
      {blocks.map((b, i) => {
        switch (b.kind) {
          case "text":
            return <Markdown key={i} text={b.text} />;
          case "think":
            return (
              <details key={i} class="think">
                <summary>Thinking</summary>
                <div class="think-text">{b.text}</div>
              </details>
            );
          case "media":
            return b.media === "image"
              ? <img key={i} class="media" src={b.url} alt="Image from the assistant" />
              : <a key={i} href={b.url}>{b.media}</a>;
          case "notice":
            return <p key={i} class={`notice ${b.tone}`}>{b.text}</p>;
          case "compaction":
            return (
              <p key={i} class="notice compaction" role="separator">
                {b.done ? "Context compacted" : "Compacting context…"}
              </p>
            );
          case "approval":
            return (
              <p key={i} class="notice approval-note">
                {b.response === "reject"
                  ? "Declined"
                  : b.response === "approve_for_session"
                  ? "Approved for this session"
                  : "Approved"}
                {b.sender ? ` · ${b.sender}` : ""}
              </p>
            );
          case "tool":
            return (
              <ToolCard key={b.id || i} tool={b} renderBlocks={(x) => <Blocks blocks={x} />} />
            );
        }
      })}
    </>
  );
}

/** The text the assistant said in a turn (its text blocks, joined). */
export function assistantText(turn: Turn): string {
  return turn.blocks.filter((b) => b.kind === "text").map((b) => (b as { text: string }).text)
    .join("\n\n");
}

/** One turn: the user message then what the agent did. */
export const TurnView = memo(function TurnView(
  { turn, onFork, onUndo, undone, version: _version }: {
    turn: Turn;
    onFork?: (index: number) => void;
    /** Undo this turn (given for the latest turn still in the conversation, when idle). */
    onUndo?: () => void;
    /** Whether an `/undo` took this turn back. */
    undone?: boolean;
    version: number;
  },
): JSX.Element {
  return (
    <section
      class={`turn${undone ? " undone" : ""}`}
      data-turn={turn.index}
      aria-label={`Turn ${turn.index + 1}${undone ? " (undone)" : ""}`}
    >
      {undone && <p class="undone-mark">Undone: its file changes were put back</p>}
      {(turn.userText || turn.userImages.length > 0 || turn.userFiles.length > 0) && (
        <div class="msg user" aria-label="You">
          <div class="who" aria-hidden="true">You</div>
          <div class="user-text">{turn.userText}</div>
          {turn.userImages.map((src, i) => (
            <img key={i} class="media thumb" src={src} alt="Image you sent" />
          ))}
          {turn.userFiles.length > 0 && (
            <ul class="attachments" aria-label="Attached files">
              {turn.userFiles.map((f, i) => <li key={i} class="chip">{f}</li>)}
            </ul>
          )}
        </div>
      )}
      {turn.blocks.length > 0 && (
        <div class="msg assistant" aria-label="Assistant">
          <Blocks blocks={turn.blocks} />
          {turn.ended && (
            <div class="msg-actions">
              <button type="button" class="link" onClick={() => copy(assistantText(turn))}>
                Copy
              </button>
              {onFork && (
                <button type="button" class="link" onClick={() => onFork(turn.index)}>
                  Fork from here
                </button>
              )}
              {onUndo && (
                <button type="button" class="link" onClick={onUndo}>
                  Undo
                </button>
              )}
            </div>
          )}
        </div>
      )}
    </section>
  );
}, (a, b) =>
  a.turn === b.turn && a.version === b.version && a.undone === b.undone &&
  a.onUndo === b.onUndo);

/**
 * When a card goes away (answered here, by key or button, or in another tab) while the focus
 * was on it, the focus goes to the composer rather than being lost on the page's body.
 */
function useFocusComposerOnClose(ref: { current: HTMLElement | null }): void {
  useEffect(() => {
    const card = ref.current;
    return () => {
      const active = document.activeElement;
      if (!active || active === document.body || (card && card.contains(active))) {
        // after the card has left the DOM (the cleanup runs first)
        queueMicrotask(() => {
          const now = document.activeElement;
          if (!now || now === document.body) {
            document.querySelector<HTMLTextAreaElement>(".composer textarea")?.focus();
          }
        });
      }
    };
  }, []);
}

/** Approval card with the reference's keys: 1 approve, 2 for session, 3 decline, 4 feedback. */
export function ApprovalCard(
  { approval, onAnswer }: {
    approval: PendingApproval;
    onAnswer: (response: "approve" | "approve_for_session" | "reject", feedback?: string) => void;
  },
): JSX.Element {
  const ref = useRef<HTMLDivElement>(null);
  const [feedback, setFeedback] = useState<string | null>(null);
  useFocusComposerOnClose(ref);
  useEffect(() => {
    const active = document.activeElement as HTMLElement | null;
    const typing = active && (active.tagName === "TEXTAREA" || active.tagName === "INPUT") &&
      (active as HTMLTextAreaElement).value !== "";
    if (!typing) ref.current?.focus();
  }, [approval.id]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (feedback !== null || e.ctrlKey || e.metaKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === "TEXTAREA" || t.tagName === "INPUT") && t !== ref.current) return;
      if (e.key === "1") onAnswer("approve");
      else if (e.key === "2") onAnswer("approve_for_session");
      else if (e.key === "3") onAnswer("reject");
      else if (e.key === "4") setFeedback("");
      else return;
      e.preventDefault();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [approval.id, feedback, onAnswer]);
  return (
    <div
      ref={ref}
      class="card approval"
      role="alertdialog"
      aria-labelledby={`ap-${approval.id}`}
      tabIndex={-1}
    >
      <h2 id={`ap-${approval.id}`}>
        {approval.subagentType ? `${approval.subagentType} · ` : ""}
        {approval.sender} wants to {approval.action || "run"}
      </h2>
      <p>{withCodeSpans(approval.description)}</p>
      <DisplayBlocks blocks={approval.display} />
      {feedback === null
        ? (
          <div class="actions">
            <button type="button" class="primary" onClick={() => onAnswer("approve")}>
              <kbd>1</kbd> Approve
            </button>
            <button
              type="button"
              onClick={() => onAnswer("approve_for_session")}
              title={`Saves the rule: allow ${approval.sender} “${approval.action}” for this session`}
            >
              <kbd>2</kbd> Approve for session
            </button>
            <button type="button" onClick={() => onAnswer("reject")}>
              <kbd>3</kbd> Decline
            </button>
            <button type="button" onClick={() => setFeedback("")}>
              <kbd>4</kbd> Decline with feedback
            </button>
          </div>
        )
        : (
          <form
            class="actions"
            onSubmit={(e) => {
              e.preventDefault();
              onAnswer("reject", feedback);
            }}
          >
            <label class="grow">
              <span class="sr-only">Feedback for the agent</span>
              <input
                autoFocus
                value={feedback}
                placeholder="Tell the agent what to do instead"
                onInput={(e) => setFeedback((e.target as HTMLInputElement).value)}
              />
            </label>
            <button type="submit" class="primary">Decline</button>
          </form>
        )}
      <p class="rule-hint">
        “Approve for session” saves: <code>{approval.sender}</code> · {approval.action}
      </p>
    </div>
  );
}

/** Question card of AskUserQuestion: single or multi select plus free text. */
export function QuestionCard(
  { question, onAnswer }: {
    question: PendingQuestion;
    onAnswer: (answers: Record<string, string>) => void;
  },
): JSX.Element {
  const ref = useRef<HTMLDivElement>(null);
  const [chosen, setChosen] = useState<Record<string, string[]>>({});
  const [other, setOther] = useState<Record<string, string>>({});
  useFocusComposerOnClose(ref);
  const toggle = (q: string, label: string, multi: boolean) => {
    const cur = chosen[q] ?? [];
    const next = multi
      ? (cur.includes(label) ? cur.filter((l) => l !== label) : [...cur, label])
      : [label];
    setChosen({ ...chosen, [q]: next });
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const answers: Record<string, string> = {};
    for (const q of question.questions) {
      const parts = [...(chosen[q.question] ?? [])];
      if (other[q.question]) parts.push(other[q.question]);
      answers[q.question] = parts.join(", ");
    }
    onAnswer(answers);
  };
  return (
    <div ref={ref} class="card question" role="dialog" aria-label="Question from the agent">
      <form onSubmit={submit}>
        {question.questions.map((q, qi) => (
          <fieldset key={qi}>
            <legend>{q.header ? `${q.header}: ` : ""}{q.question}</legend>
            {q.options.map((o, oi) => (
              <label key={oi} class="option">
                <input
                  type={q.multiSelect ? "checkbox" : "radio"}
                  name={`q${qi}`}
                  checked={(chosen[q.question] ?? []).includes(o.label)}
                  onChange={() => toggle(q.question, o.label, q.multiSelect)}
                />
                <span>{o.label}</span>
                {o.description && <small>{o.description}</small>}
              </label>
            ))}
            <label class="option">
              <span class="sr-only">Other answer</span>
              <input
                type="text"
                placeholder="Other…"
                value={other[q.question] ?? ""}
                onInput={(e) =>
                  setOther({ ...other, [q.question]: (e.target as HTMLInputElement).value })}
              />
            </label>
          </fieldset>
        ))}
        <div class="actions">
          <button type="submit" class="primary">Answer</button>
          <button type="button" onClick={() => onAnswer({})}>Dismiss</button>
        </div>
      </form>
    </div>
  );
}
