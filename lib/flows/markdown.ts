/**
 * Finding the flow diagram of a flow skill: the first fenced code block (``` or ~~~, three or
 * more) whose language is `mermaid` or `d2`.
 *
 * @module
 */
import { parseD2Flowchart } from "./d2.ts";
import { type Flow, FlowError } from "./flow.ts";
import { parseMermaidFlowchart } from "./mermaid.ts";

/** A fenced code block: its language (lower-case first info word, "" if none) and body. */
export interface FencedBlock {
  /** Language. */
  lang: string;
  /** Body without the fences. */
  code: string;
}

function fenceRun(line: string): { char: string; len: number } | null {
  const char = line[0];
  if (char !== "`" && char !== "~") return null;
  let len = 0;
  while (line[len] === char) len++;
  return len >= 3 ? { char, len } : null;
}

/** The fenced code blocks of a Markdown text, in order. */
export function fencedCodeBlocks(markdown: string): FencedBlock[] {
  const out: FencedBlock[] = [];
  let open: { char: string; len: number; lang: string } | null = null;
  let buf: string[] = [];
  for (const line of markdown.split(/\r\n|\r|\n/)) {
    const stripped = line.trimStart();
    const run = fenceRun(stripped);
    if (!open) {
      if (!run) continue;
      let lang = stripped.slice(run.len).trim().split(/\s+/)[0].toLowerCase();
      if (lang.startsWith("{") && lang.endsWith("}")) lang = lang.slice(1, -1).trim();
      open = { ...run, lang };
      buf = [];
      continue;
    }
    if (run && run.char === open.char && run.len >= open.len && !stripped.slice(run.len).trim()) {
      out.push({ lang: open.lang, code: buf.join("\n").replace(/^\n+|\n+$/g, "") });
      open = null;
      continue;
    }
    buf.push(line);
  }
  return out;
}

/**
 * Parse the flow of a flow skill's Markdown.
 *
 * @throws {Error} `Flow skills require a mermaid or d2 code block in SKILL.md.` or
 * `Invalid flow diagram: <reason>`.
 */
export function parseFlowFromMarkdown(markdown: string): Flow {
  for (const block of fencedCodeBlocks(markdown)) {
    const parse = block.lang === "mermaid"
      ? parseMermaidFlowchart
      : block.lang === "d2"
      ? parseD2Flowchart
      : null;
    if (!parse) continue;
    try {
      return parse(block.code);
    } catch (err) {
      if (err instanceof FlowError) throw new Error(`Invalid flow diagram: ${err.message}`);
      throw err;
    }
  }
  throw new Error("Flow skills require a mermaid or d2 code block in SKILL.md.");
}
