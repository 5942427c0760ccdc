/**
 * The Mermaid flowchart subset accepted by flow skills (reference §10):
 *
 * - a `flowchart`/`graph` header (ignored), `%%` comment lines, and lines starting with
 *   `classDef `, `class `, `style `, `linkStyle `, `click `, `subgraph `, `direction ` or
 *   consisting of `end` (ignored); `;` separates statements;
 * - nodes `id`, `id[label]`, `id(label)`, `id{label}`, `id([label])`, quoted labels
 *   `id["a | b"]` with backslash escapes; `:::class` suffixes are dropped;
 * - edges `A --> B`, `A --- B`, `A -.-> B`, `A ==> B` (any `[-.=]+>`), chains `A --> B --> C`,
 *   labels `A -->|yes| B` or `A -- yes --> B`.
 *
 * A node's kind comes from its label (`BEGIN`/`END`, case-insensitive), a task node with more
 * than one outgoing edge is a decision.
 *
 * @module
 */
import {
  buildFlow,
  type Flow,
  type FlowEdge,
  FlowParseError,
  lineError,
  NodeTable,
} from "./flow.ts";

const HEADER_RE = /^(?:flowchart|graph)\b/i;
const IGNORED_PREFIXES = [
  "classDef ",
  "class ",
  "style ",
  "linkStyle ",
  "click ",
  "subgraph ",
  "direction ",
];
/** Node id; a `-` that starts an arrow is not part of it. */
const NODE_ID_RE = /[A-Za-z0-9_](?:[A-Za-z0-9_]|-(?![-.=>]))*/y;
const CLASS_SUFFIX_RE = /:::[A-Za-z0-9_-]+/y;
const ARROW_RE = /[-.=]+>|-{3,}|={3,}/y;
const ARROW_SEARCH_RE = /[-.=]+>|-{3,}|={3,}/g;
const LABELED_OPEN_RE = /--|==|-\./y;
const SHAPES: Record<string, string> = { "[": "]", "(": ")", "{": "}" };

interface NodeToken {
  id: string;
  label: string | null;
}

/**
 * Parse a Mermaid flowchart into a validated flow.
 *
 * @throws {FlowParseError} `Line N: ...` for syntax errors and conflicting node definitions.
 * @throws {FlowValidationError} when the graph breaks the flow rules (see `validateFlow`).
 */
export function parseMermaidFlowchart(text: string): Flow {
  const table = new NodeTable();
  const edges: FlowEdge[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = lines[i].trim();
    if (!line || line.startsWith("%%") || HEADER_RE.test(line) || isIgnoredLine(line)) continue;
    for (const statement of splitStatements(line)) {
      parseStatement(statement, lineNo, table, edges);
    }
  }
  return buildFlow(table.nodes(), edges);
}

function isIgnoredLine(line: string): boolean {
  return line === "end" || IGNORED_PREFIXES.some((p) => line.startsWith(p));
}

/** Split a line on `;` outside quotes and brackets. */
function splitStatements(line: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === "\\") i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === "[" || ch === "(" || ch === "{") depth++;
    else if ((ch === "]" || ch === ")" || ch === "}") && depth > 0) depth--;
    else if (ch === ";" && depth === 0) {
      out.push(line.slice(start, i));
      start = i + 1;
    }
  }
  out.push(line.slice(start));
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}

function skipWs(s: string, i: number): number {
  while (i < s.length && /\s/.test(s[i])) i++;
  return i;
}

function parseStatement(s: string, lineNo: number, table: NodeTable, edges: FlowEdge[]): void {
  let [tok, i] = parseNode(s, 0, lineNo);
  let src = table.add(tok.id, tok.label, lineNo).id;
  for (;;) {
    i = skipWs(s, i);
    if (i >= s.length) return;
    let label: string | null = null;
    ARROW_RE.lastIndex = i;
    LABELED_OPEN_RE.lastIndex = i;
    const arrow = ARROW_RE.exec(s);
    if (arrow) {
      i = skipWs(s, i + arrow[0].length);
      if (s[i] === "|") {
        const close = s.indexOf("|", i + 1);
        if (close === -1) throw new FlowParseError(lineError(lineNo, "Unclosed edge label"));
        label = s.slice(i + 1, close).trim();
        if (!label) throw new FlowParseError(lineError(lineNo, "Edge label cannot be empty"));
        i = close + 1;
      }
    } else if (LABELED_OPEN_RE.exec(s)) {
      const from = i + 2;
      ARROW_SEARCH_RE.lastIndex = from;
      const end = ARROW_SEARCH_RE.exec(s);
      if (!end) throw new FlowParseError(lineError(lineNo, "Expected '-->' to end edge label"));
      label = s.slice(from, end.index).trim();
      if (!label) throw new FlowParseError(lineError(lineNo, "Edge label cannot be empty"));
      i = end.index + end[0].length;
    } else {
      const what = /[-.=<]/.test(s[i]) ? "Expected edge arrow" : "Unexpected trailing content";
      throw new FlowParseError(lineError(lineNo, what));
    }
    [tok, i] = parseNode(s, skipWs(s, i), lineNo);
    const dst = table.add(tok.id, tok.label, lineNo).id;
    edges.push({ src, dst, label });
    src = dst;
  }
}

function parseNode(s: string, i: number, lineNo: number): [NodeToken, number] {
  NODE_ID_RE.lastIndex = i;
  const m = NODE_ID_RE.exec(s);
  if (!m) throw new FlowParseError(lineError(lineNo, "Expected node id"));
  const id = m[0];
  i += id.length;
  let label: string | null = null;
  if (s[i] === "(" && s[i + 1] === "[") {
    [label, i] = parseLabel(s, i + 2, "]", lineNo);
    i = skipWs(s, i);
    if (s[i] !== ")") throw new FlowParseError(lineError(lineNo, "Unclosed node label"));
    i++;
  } else if (s[i] in SHAPES) {
    [label, i] = parseLabel(s, i + 1, SHAPES[s[i]], lineNo);
  }
  CLASS_SUFFIX_RE.lastIndex = i;
  const cls = CLASS_SUFFIX_RE.exec(s);
  if (cls) i += cls[0].length;
  return [{ id, label }, i];
}

function parseLabel(s: string, i: number, close: string, lineNo: number): [string, number] {
  i = skipWs(s, i);
  if (i >= s.length) throw new FlowParseError(lineError(lineNo, "Unclosed node label"));
  if (s[i] === '"') {
    let buf = "";
    for (i++; i < s.length; i++) {
      const ch = s[i];
      if (ch === "\\" && i + 1 < s.length) {
        buf += s[++i];
      } else if (ch === '"') {
        i = skipWs(s, i + 1);
        if (s[i] !== close) throw new FlowParseError(lineError(lineNo, "Unclosed node label"));
        if (!buf.trim()) throw new FlowParseError(lineError(lineNo, "Node label cannot be empty"));
        return [buf, i + 1];
      } else {
        buf += ch;
      }
    }
    throw new FlowParseError(lineError(lineNo, "Unclosed quoted label"));
  }
  const end = s.indexOf(close, i);
  if (end === -1) throw new FlowParseError(lineError(lineNo, "Unclosed node label"));
  const label = s.slice(i, end).trim();
  if (!label) throw new FlowParseError(lineError(lineNo, "Node label cannot be empty"));
  return [label, end + 1];
}
