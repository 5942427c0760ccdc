/**
 * Locates the first syntax error of a JSON text and describes it without quoting the text
 * (the JS engine's own messages may echo part of the input, which could hold a secret).
 *
 * Messages follow Python's `json` module: `Expecting value: line 1 column 13 (char 12)`.
 *
 * @module
 */

/** A JSON syntax problem: what is wrong and at which character offset. */
interface JsonSyntaxProblem {
  message: string;
  pos: number;
}

const WS = new Set([" ", "\t", "\n", "\r"]);
const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

/**
 * Describe why `text` is not valid JSON, as `<problem>: line L column C (char P)`.
 * Returns `Invalid JSON` when no position can be determined.
 */
export function describeJsonSyntaxError(text: string): string {
  let problem: JsonSyntaxProblem | null;
  try {
    problem = findProblem(text);
  } catch {
    problem = null; // e.g. nesting too deep for the recursive scan
  }
  if (problem === null) return "Invalid JSON";
  const { line, column } = lineAndColumn(text, problem.pos);
  return `${problem.message}: line ${line} column ${column} (char ${problem.pos})`;
}

function lineAndColumn(text: string, pos: number): { line: number; column: number } {
  let line = 1;
  let lastNewline = -1;
  for (let i = 0; i < pos && i < text.length; i++) {
    if (text[i] === "\n") {
      line++;
      lastNewline = i;
    }
  }
  return { line, column: pos - lastNewline };
}

class Fail extends Error {
  constructor(readonly problem: JsonSyntaxProblem) {
    super(problem.message);
  }
}

function findProblem(text: string): JsonSyntaxProblem | null {
  try {
    let pos = skipWs(text, 0);
    pos = scanValue(text, pos);
    pos = skipWs(text, pos);
    if (pos < text.length) return { message: "Extra data", pos };
    return null;
  } catch (err) {
    if (err instanceof Fail) return err.problem;
    throw err;
  }
}

function skipWs(text: string, pos: number): number {
  while (pos < text.length && WS.has(text[pos])) pos++;
  return pos;
}

function fail(message: string, pos: number): never {
  throw new Fail({ message, pos });
}

function scanValue(text: string, pos: number): number {
  const ch = text[pos];
  if (ch === "{") return scanObject(text, pos + 1);
  if (ch === "[") return scanArray(text, pos + 1);
  if (ch === '"') return scanString(text, pos);
  for (const literal of ["true", "false", "null"]) {
    if (text.startsWith(literal, pos)) return pos + literal.length;
  }
  NUMBER_RE.lastIndex = pos;
  const m = NUMBER_RE.exec(text);
  if (m && m[0].length > 0) return pos + m[0].length;
  return fail("Expecting value", pos);
}

function scanObject(text: string, pos: number): number {
  pos = skipWs(text, pos);
  if (text[pos] === "}") return pos + 1;
  for (;;) {
    if (text[pos] !== '"') fail("Expecting property name enclosed in double quotes", pos);
    pos = skipWs(text, scanString(text, pos));
    if (text[pos] !== ":") fail("Expecting ':' delimiter", pos);
    pos = skipWs(text, pos + 1);
    pos = skipWs(text, scanValue(text, pos));
    if (text[pos] === "}") return pos + 1;
    if (text[pos] !== ",") fail("Expecting ',' delimiter", pos);
    pos = skipWs(text, pos + 1);
  }
}

function scanArray(text: string, pos: number): number {
  pos = skipWs(text, pos);
  if (text[pos] === "]") return pos + 1;
  for (;;) {
    pos = skipWs(text, scanValue(text, pos));
    if (text[pos] === "]") return pos + 1;
    if (text[pos] !== ",") fail("Expecting ',' delimiter", pos);
    pos = skipWs(text, pos + 1);
  }
}

function scanString(text: string, start: number): number {
  let pos = start + 1;
  while (pos < text.length) {
    const ch = text[pos];
    if (ch === '"') return pos + 1;
    if (ch === "\\") {
      const esc = text[pos + 1];
      if (esc === undefined) break;
      if (esc === "u") {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) {
          fail("Invalid \\uXXXX escape", pos + 1);
        }
        pos += 6;
        continue;
      }
      if (!'"\\/bfnrt'.includes(esc)) fail("Invalid \\escape", pos);
      pos += 2;
      continue;
    }
    if (ch.charCodeAt(0) < 0x20) fail("Invalid control character at", pos);
    pos++;
  }
  return fail("Unterminated string starting at", start);
}
