/**
 * The D2 subset accepted by flow skills (reference §10): one statement per line (`\` continues
 * a line, `#` starts a comment, `{...}` blocks are dropped), nodes `id: label` (quoted labels
 * with escapes, `|md ... |` markdown block labels, dedented), edges `a -> b -> c: label` (the
 * label applies to the last hop only). Property paths such as `a.shape` or `x.style.fill` are
 * ignored.
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

const NODE_ID_RE = /^[A-Za-z0-9_][A-Za-z0-9_./-]*$/;
/** D2 keywords that make `a.<keyword>` a property path rather than a node. */
const PROPERTY_SEGMENTS = new Set([
  "shape",
  "style",
  "label",
  "link",
  "icon",
  "near",
  "width",
  "height",
  "direction",
  "grid-rows",
  "grid-columns",
  "grid-gap",
  "font-size",
  "font-family",
  "font-color",
  "stroke",
  "fill",
  "opacity",
  "padding",
  "border-radius",
  "shadow",
  "sketch",
  "animated",
  "multiple",
  "constraint",
  "tooltip",
]);

/**
 * Parse a D2 diagram into a validated flow.
 *
 * @throws {FlowParseError} `Line N: ...` (`Unclosed markdown block`, `Unmatched '}'`,
 * `Unclosed '{' block`, `Unclosed string`, `Label cannot be empty`, `Invalid node id "x"`, ...).
 * @throws {FlowValidationError} when the graph breaks the flow rules (see `validateFlow`).
 */
export function parseD2Flowchart(text: string): Flow {
  const table = new NodeTable();
  const edges: FlowEdge[] = [];
  for (const [lineNo, statement] of topLevelStatements(inlineMarkdownBlocks(text))) {
    if (splitOnToken(statement, "->", lineNo).length > 1) {
      parseEdgeStatement(statement, lineNo, table, edges);
    } else {
      parseNodeStatement(statement, lineNo, table);
    }
  }
  return buildFlow(table.nodes(), edges);
}

/** Scans text, tracking single/double quotes and backslash escapes inside them. */
class QuoteState {
  single = false;
  double = false;
  #escape = false;

  /** Feed one character; true when it is outside any quotes (and not a quote itself). */
  feed(ch: string): boolean {
    if (this.#escape) {
      this.#escape = false;
      return false;
    }
    if (ch === "\\" && this.quoted) {
      this.#escape = true;
      return false;
    }
    if (ch === "'" && !this.double) {
      this.single = !this.single;
      return false;
    }
    if (ch === '"' && !this.single) {
      this.double = !this.double;
      return false;
    }
    return !this.quoted;
  }

  /** Inside a quoted string. */
  get quoted(): boolean {
    return this.single || this.double;
  }
}

/** Split at the first unquoted `token` character: `[before, after]`, or `[text, null]`. */
function splitUnquotedOnce(text: string, token: string): [string, string | null] {
  const q = new QuoteState();
  for (let i = 0; i < text.length; i++) {
    if (q.feed(text[i]) && text[i] === token) {
      return [text.slice(0, i).trim(), text.slice(i + 1).trim()];
    }
  }
  return [text.trim(), null];
}

function stripUnquotedComment(text: string): string {
  const q = new QuoteState();
  for (let i = 0; i < text.length; i++) {
    if (q.feed(text[i]) && text[i] === "#") return text.slice(0, i);
  }
  return text;
}

function dedent(lines: string[]): string[] {
  let indent: number | null = null;
  for (const line of lines) {
    if (!line.trim()) continue;
    const lead = line.length - line.replace(/^[ \t]+/, "").length;
    if (indent === null || lead < indent) indent = lead;
  }
  if (indent === null) return lines.map(() => "");
  const n = indent;
  return lines.map((l) => l.length >= n ? l.slice(n) : "");
}

/**
 * Turn `id: |md ... |` blocks into (multi-line) quoted labels, keeping the line count so
 * later errors still point at the right lines.
 */
function inlineMarkdownBlocks(text: string): string {
  const lines = text.replace(/\r\n|\r/g, "\n").split("\n");
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const [prefix, suffix] = splitUnquotedOnce(line, ":");
    if (suffix === null || stripUnquotedComment(suffix).trim() !== "|md") {
      out.push(line);
      i++;
      continue;
    }
    const start = i + 1;
    const block: string[] = [];
    i++;
    while (i < lines.length && lines[i].trim() !== "|") block.push(lines[i++]);
    if (i >= lines.length) throw new FlowParseError(lineError(start, "Unclosed markdown block"));
    const body = dedent(block).map((l) => l.replaceAll("\\", "\\\\").replaceAll('"', '\\"'));
    if (body.length > 0) {
      out.push(`${prefix}: "${body[0]}`, ...body.slice(1));
      out[out.length - 1] += '"';
      out.push("", "");
    } else {
      out.push(`${prefix}: ""`, "");
    }
    i++;
  }
  return out.join("\n");
}

/** The top-level statements with their first line numbers (`{...}` blocks dropped). */
function topLevelStatements(text: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let depth = 0;
  let single = false;
  let double = false;
  let escape = false;
  let dropLine = false;
  let buf = "";
  let lineNo = 1;
  let stmtLine = 1;
  const flush = () => {
    const s = buf.trim();
    if (s) out.push([stmtLine, s]);
    buf = "";
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\" && text[i + 1] === "\n") {
      i++;
      lineNo++;
      continue;
    }
    if (ch === "\n") {
      if ((single || double) && depth === 0 && !dropLine) {
        buf += "\n";
        lineNo++;
        continue;
      }
      if (depth === 0 && !single && !double && !dropLine) flush();
      buf = "";
      dropLine = false;
      stmtLine = ++lineNo;
      continue;
    }
    if (!single && !double) {
      if (ch === "#") {
        while (i + 1 < text.length && text[i + 1] !== "\n") i++;
        continue;
      }
      if (ch === "{") {
        if (depth === 0) {
          flush();
          dropLine = true;
        }
        depth++;
        continue;
      }
      if (ch === "}") {
        if (depth === 0) throw new FlowParseError(lineError(lineNo, "Unmatched '}'"));
        depth--;
        continue;
      }
    }
    if (ch === "'" && !double && !escape) single = !single;
    else if (ch === '"' && !single && !escape) double = !double;
    if (escape) escape = false;
    else if (ch === "\\" && (single || double)) escape = true;
    if (depth === 0 && !dropLine) buf += ch;
  }
  if (depth !== 0) throw new FlowParseError(lineError(lineNo, "Unclosed '{' block"));
  if (single || double) throw new FlowParseError(lineError(lineNo, "Unclosed string"));
  flush();
  return out;
}

/** Split on every unquoted occurrence of `token` (parts trimmed). */
function splitOnToken(text: string, token: string, lineNo: number): string[] {
  const parts: string[] = [];
  const q = new QuoteState();
  let buf = "";
  for (let i = 0; i < text.length;) {
    if (!q.quoted && text.startsWith(token, i)) {
      parts.push(buf.trim());
      buf = "";
      i += token.length;
      continue;
    }
    q.feed(text[i]);
    buf += text[i++];
  }
  if (q.quoted) throw new FlowParseError(lineError(lineNo, "Unclosed string"));
  parts.push(buf.trim());
  return parts;
}

function isPropertyPath(id: string): boolean {
  if (!id.includes(".")) return false;
  const parts = id.split(".").filter((p) => p);
  if (parts.slice(1).some((p) => PROPERTY_SEGMENTS.has(p) || p.startsWith("style"))) return true;
  return PROPERTY_SEGMENTS.has(parts[parts.length - 1]);
}

function parseNodeId(text: string, lineNo: number, allowInlineLabel: boolean): string {
  let cleaned = text.trim();
  if (allowInlineLabel && cleaned.includes(":")) cleaned = splitUnquotedOnce(cleaned, ":")[0];
  if (!cleaned) throw new FlowParseError(lineError(lineNo, "Expected node id"));
  if (!NODE_ID_RE.test(cleaned)) {
    throw new FlowParseError(lineError(lineNo, `Invalid node id "${cleaned}"`));
  }
  return cleaned;
}

function parseLabel(text: string, lineNo: number): string {
  const label = text.trim();
  if (!label) throw new FlowParseError(lineError(lineNo, "Label cannot be empty"));
  const quote = label[0];
  if (quote !== '"' && quote !== "'") return label;
  let buf = "";
  for (let i = 1; i < label.length; i++) {
    const ch = label[i];
    if (ch === "\\" && i + 1 < label.length) {
      buf += label[++i];
    } else if (ch === quote) {
      if (label.slice(i + 1).trim()) {
        throw new FlowParseError(lineError(lineNo, "Unexpected trailing content"));
      }
      return buf;
    } else {
      buf += ch;
    }
  }
  throw new FlowParseError(lineError(lineNo, "Unclosed quoted label"));
}

function parseEdgeStatement(
  statement: string,
  lineNo: number,
  table: NodeTable,
  edges: FlowEdge[],
): void {
  const parts = splitOnToken(statement, "->", lineNo);
  const [target, edgeLabel] = splitUnquotedOnce(parts[parts.length - 1], ":");
  parts[parts.length - 1] = target;
  const ids = parts.map((p, i) => parseNodeId(p, lineNo, i < parts.length - 1));
  if (ids.some(isPropertyPath)) return;
  const label = edgeLabel !== null ? parseLabel(edgeLabel, lineNo) : null;
  for (let i = 0; i + 1 < ids.length; i++) {
    edges.push({ src: ids[i], dst: ids[i + 1], label: i === ids.length - 2 ? label : null });
  }
  for (const id of ids) table.add(id, null, lineNo);
}

function parseNodeStatement(statement: string, lineNo: number, table: NodeTable): void {
  const [nodeText, labelText] = splitUnquotedOnce(statement, ":");
  if (labelText !== null && isPropertyPath(nodeText)) return;
  const id = parseNodeId(nodeText, lineNo, false);
  if (labelText !== null && !labelText.trim()) return;
  table.add(id, labelText !== null ? parseLabel(labelText, lineNo) : null, lineNo);
}
