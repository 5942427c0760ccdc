/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Tool cards of the chat: Shell (command and output), file edits (line diffs, unified or side
 * by side), the todo list, subagent steps, media, and a generic card for every other tool.
 *
 * @module
 */
import type { ComponentChildren, JSX } from "preact";
import { useMemo, useState } from "preact/hooks";
import { diffLines } from "diff";
import stripAnsi from "strip-ansi";
import { withCodeSpans } from "./code_spans.tsx";
import type { Block, DisplayBlock, ToolBlock } from "./transcript.ts";

/** One line of a rendered diff. */
export interface DiffLine {
  /** `+` added, `-` removed, ` ` context. */
  sign: "+" | "-" | " ";
  /** Old line number (removed/context). */
  oldNo: number | null;
  /** New line number (added/context). */
  newNo: number | null;
  /** Text without the newline. */
  text: string;
}

/** The line diff of two texts, numbered from `oldStart`/`newStart`. */
export function lineDiff(oldText: string, newText: string, oldStart = 1, newStart = 1): DiffLine[] {
  const out: DiffLine[] = [];
  let o = oldStart;
  let n = newStart;
  // Hunks may end without a newline; compare whole lines either way.
  const nl = (t: string) => (t === "" || t.endsWith("\n") ? t : `${t}\n`);
  for (const change of diffLines(nl(oldText), nl(newText))) {
    const lines = change.value.replace(/\n$/, "").split("\n");
    for (const text of lines) {
      if (change.added) out.push({ sign: "+", oldNo: null, newNo: n++, text });
      else if (change.removed) out.push({ sign: "-", oldNo: o++, newNo: null, text });
      else out.push({ sign: " ", oldNo: o++, newNo: n++, text });
    }
  }
  return out;
}

type DiffBlock = Extract<DisplayBlock, { type: "diff"; old_text: string }>;

/** A file diff card: unified by default, side by side on request. */
export function DiffView({ block }: { block: DiffBlock }): JSX.Element {
  const [split, setSplit] = useState(false);
  const lines = useMemo(
    () => lineDiff(block.old_text, block.new_text, block.old_start ?? 1, block.new_start ?? 1),
    [block.old_text, block.new_text, block.old_start, block.new_start],
  );
  const added = lines.filter((l) => l.sign === "+").length;
  const removed = lines.filter((l) => l.sign === "-").length;
  return (
    <figure class="diff" aria-label={`Changes to ${block.path}`}>
      <figcaption>
        <span class="path">{block.path}</span>
        <span class="stat add">+{added}</span>
        <span class="stat del">-{removed}</span>
        <button type="button" class="link" onClick={() => setSplit(!split)}>
          {split ? "Unified" : "Side by side"}
        </button>
      </figcaption>
      {split ? <SplitDiff lines={lines} /> : (
        <table class="diff-table unified" tabIndex={0}>
          <tbody>
            {lines.map((l, i) => (
              <tr key={i} class={l.sign === "+" ? "add" : l.sign === "-" ? "del" : ""}>
                <td class="no">{l.oldNo ?? ""}</td>
                <td class="no">{l.newNo ?? ""}</td>
                <td class="sign">{l.sign}</td>
                <td class="code-line">{l.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </figure>
  );
}

function SplitDiff({ lines }: { lines: DiffLine[] }): JSX.Element {
  const rows: [DiffLine | null, DiffLine | null][] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].sign === " ") {
      rows.push([lines[i], lines[i]]);
      i++;
      continue;
    }
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (i < lines.length && lines[i].sign === "-") dels.push(lines[i++]);
    while (i < lines.length && lines[i].sign === "+") adds.push(lines[i++]);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      rows.push([dels[k] ?? null, adds[k] ?? null]);
    }
  }
  return (
    <table class="diff-table split" tabIndex={0}>
      <tbody>
        {rows.map(([l, r], k) => (
          <tr key={k}>
            <td class="no">{l?.oldNo ?? ""}</td>
            <td class={`code-line ${l?.sign === "-" ? "del" : ""}`}>{l?.text ?? ""}</td>
            <td class="no">{r?.newNo ?? ""}</td>
            <td class={`code-line ${r?.sign === "+" ? "add" : ""}`}>{r?.text ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A todo list. */
export function TodoList({ items }: { items: { title: string; status: string }[] }): JSX.Element {
  return (
    <ul class="todos" aria-label="Todo list">
      {items.map((item, i) => (
        <li key={i} class={`todo ${item.status}`}>
          <span aria-hidden="true">
            {item.status === "done" ? "☑" : item.status === "in_progress" ? "◐" : "☐"}
          </span>{" "}
          <span>{item.title}</span>
          <span class="sr-only">({item.status.replace("_", " ")})</span>
        </li>
      ))}
    </ul>
  );
}

/** The display blocks of a tool result or an approval request. */
export function DisplayBlocks({ blocks }: { blocks: DisplayBlock[] }): JSX.Element {
  return (
    <>
      {blocks.map((b, i) => {
        if (b.type === "diff" && typeof b.old_text === "string") {
          return <DiffView key={i} block={b as DiffBlock} />;
        }
        if (b.type === "todo" && Array.isArray(b.items)) {
          return <TodoList key={i} items={b.items as { title: string; status: string }[]} />;
        }
        if (b.type === "shell" && typeof b.command === "string") {
          return <pre key={i} class="shell-command">$ {b.command}</pre>;
        }
        if (b.type === "brief" && typeof b.text === "string") {
          return <p key={i} class="brief">{b.text}</p>;
        }
        if (b.type === "background_task") {
          return (
            <p key={i} class="brief">
              Background task {String(b.task_id)}: {String(b.description)} ({String(b.status)})
            </p>
          );
        }
        return null;
      })}
    </>
  );
}

function parseArgs(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args);
    return typeof v === "object" && v !== null ? v : {};
  } catch {
    return {};
  }
}

function argSummary(name: string, args: Record<string, unknown>): string {
  if (Array.isArray(args.questions)) {
    return args.questions.map((q) => (q as { question?: string }).question ?? "").join(" · ");
  }
  for (const key of ["command", "path", "file_path", "pattern", "url", "query", "description"]) {
    if (typeof args[key] === "string") return args[key] as string;
  }
  return name === "SetTodoList" ? "" : Object.keys(args).length ? JSON.stringify(args) : "";
}

/** A tool call card; `renderBlocks` renders nested subagent blocks. */
export function ToolCard(
  { tool, renderBlocks }: { tool: ToolBlock; renderBlocks: (b: Block[]) => ComponentChildren },
): JSX.Element {
  const args = useMemo(() => parseArgs(tool.args), [tool.args]);
  const r = tool.result;
  const state = r === null ? "running" : r.isError ? "error" : "done";
  const summary = argSummary(tool.name, args);
  const isShell = tool.name === "Shell";
  const hasDiff = r?.display.some((d) => d.type === "diff") ?? false;
  return (
    <article class={`tool-card ${state} tool-${tool.name}`} aria-label={`Tool ${tool.name}`}>
      <header>
        <span class="tool-name">{tool.name}</span>
        <span class="tool-arg">{isShell && summary ? `$ ${summary}` : summary}</span>
        <span class={`badge ${state}`}>{state === "running" ? "running…" : state}</span>
      </header>
      {r && isShell && r.output
        ? (
          <pre
            class="shell-output"
            aria-label="Command output"
            tabIndex={0}
          >{stripAnsi(r.output)}</pre>
        )
        : null}
      {r && r.display.length ? <DisplayBlocks blocks={r.display} /> : null}
      {r && !isShell && !hasDiff && r.output && (
        <details class="tool-output">
          <summary>Output</summary>
          <pre tabIndex={0}>{stripAnsi(r.output)}</pre>
        </details>
      )}
      {r && r.isError && r.message
        ? <p class="tool-error" role="status">{withCodeSpans(r.message)}</p>
        : null}
      {tool.swarm && (
        <div class="swarm" aria-label="Swarm progress">
          <progress
            max={tool.swarm.total || 1}
            value={tool.swarm.counts.ok + tool.swarm.counts.error + tool.swarm.counts.cancelled}
          />
          <span>
            {tool.swarm.counts.ok + tool.swarm.counts.error + tool.swarm.counts.cancelled}/
            {tool.swarm.total} done · {tool.swarm.counts.running} running
            {tool.swarm.counts.error ? ` · ${tool.swarm.counts.error} failed` : ""}
            {tool.swarm.done ? " · finished" : ""}
          </span>
        </div>
      )}
      {tool.subagent && (
        <section class="subagent" aria-label={`Subagent ${tool.subagent.type}`}>
          <div class="subagent-label">{tool.subagent.type || "subagent"}</div>
          {renderBlocks(tool.subagent.blocks)}
        </section>
      )}
    </article>
  );
}
