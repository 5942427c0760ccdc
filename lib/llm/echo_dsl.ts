/**
 * The echo DSL: a tiny line-based script language that the `_echo` and `_scripted_echo` test
 * providers turn into a streamed assistant message (reference §2.4).
 *
 * Each non-skipped line reads `kind: payload`. Kinds: `id`, `usage`, `text`, `think`,
 * `image_url`, `audio_url`, `video_url`, `tool_call`, `tool_call_part` and `error`. Error
 * messages quote the offending line the way the reference does (Python `repr`), because tests
 * and clients compare them verbatim.
 *
 * @module
 */
import {
  APIConnectionError,
  APIStatusError,
  APITimeoutError,
  ChatProviderError,
} from "./errors.ts";
import type { TokenUsage, ToolCall, ToolCallPart } from "./message.ts";
import type { ChatStream, StreamPart } from "./provider.ts";

/** The result of parsing one echo script. */
export interface EchoScript {
  /** Parts to stream, in order. */
  parts: StreamPart[];
  /** Message id from an `id:` line (last one wins), else null. */
  id: string | null;
  /** Usage from a `usage:` line (last one wins), else null. */
  usage: TokenUsage | null;
  /**
   * The simulated provider error of the first `error:` line, else null. Parsing stops at that
   * line; providers raise it from `generate` before anything is streamed.
   */
  error: ChatProviderError | null;
}

/** A JSON-like value as produced by `JSON.parse` or the `k=v` payload form. */
type DslValue = null | boolean | number | string | DslValue[] | { [key: string]: DslValue };
type DslObject = { [key: string]: DslValue };

/**
 * Parse an echo DSL script.
 *
 * @throws {ChatProviderError} when a line is not valid DSL (the message names the line).
 */
export function parseEchoDsl(text: string): EchoScript {
  const script: EchoScript = { parts: [], id: null, usage: null, error: null };
  for (const part of scriptParts(text, script)) script.parts.push(part);
  return script;
}

/**
 * A {@link ChatStream} of a script parsed as it streams: the script is checked whole first
 * (an invalid line throws and an `error:` line is returned as `error`, before anything is
 * streamed, as with {@link parseEchoDsl}), then each part is parsed when it is yielded, so a
 * reply of 100,000 parts never exists as 100,000 parsed parts at once (a streaming provider
 * does not hold its whole reply either).
 *
 * @throws {ChatProviderError} when a line is not valid DSL.
 */
export function lazyEchoScriptStream(
  text: string,
): { stream: ChatStream; parts: number; error: ChatProviderError | null } {
  const head: Omit<EchoScript, "parts"> = { id: null, usage: null, error: null };
  let parts = 0;
  for (const _ of scriptParts(text, head)) parts++;
  return {
    parts,
    error: head.error,
    stream: {
      id: head.id,
      usage: head.usage,
      async *[Symbol.asyncIterator]() {
        yield* scriptParts(text, { id: null, usage: null, error: null });
      },
    },
  };
}

/** The parts of a script in order; `id`, `usage` and a simulated `error` go to `head`. */
function* scriptParts(text: string, head: Omit<EchoScript, "parts">): Generator<StreamPart> {
  let lineno = 0;
  for (const rawLine of lineIterator(text)) {
    lineno++;
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#") || line.startsWith("```")) continue;
    if (line.toLowerCase() === "echo") continue;
    const colon = line.indexOf(":");
    if (colon < 0) {
      throw new ChatProviderError(`Invalid echo DSL at line ${lineno}: ${pyRepr(rawLine)}`);
    }
    const kind = line.slice(0, colon).trim().toLowerCase();
    let payload = line.slice(colon + 1);
    if (payload.startsWith(" ")) payload = payload.slice(1);

    if (kind === "error") {
      head.error = simulatedError(payload.trim(), lineno, rawLine);
      return;
    }
    if (kind === "id") {
      head.id = stripQuotes(payload.trim());
      continue;
    }
    if (kind === "usage") {
      head.usage = parseUsage(payload);
      continue;
    }
    yield parsePart(kind, payload, lineno, rawLine);
  }
}

/**
 * A {@link ChatStream} that replays the parts of a parsed script (each part is yielded as a
 * fresh copy, so consumers may mutate what they get). Text and think parts are copied shallowly:
 * their strings are immutable and shared with the script, so a streamed reply of many megabytes
 * does not copy its text once more per part (`structuredClone` would).
 */
export function echoScriptStream(script: EchoScript): ChatStream {
  const parts = script.parts;
  return {
    id: script.id,
    usage: script.usage,
    async *[Symbol.asyncIterator]() {
      for (const part of parts) {
        yield "type" in part && (part.type === "text" || part.type === "think")
          ? { ...part }
          : structuredClone(part);
      }
    },
  };
}

function parsePart(kind: string, payload: string, lineno: number, rawLine: string): StreamPart {
  switch (kind) {
    case "text":
      return { type: "text", text: stripQuotes(payload) };
    case "think":
      return { type: "think", think: stripQuotes(payload), encrypted: null };
    case "image_url": {
      const [url, id] = parseUrlPayload(payload, kind);
      return { type: "image_url", image_url: { url, id } };
    }
    case "audio_url": {
      const [url, id] = parseUrlPayload(payload, kind);
      return { type: "audio_url", audio_url: { url, id } };
    }
    case "video_url": {
      const [url, id] = parseUrlPayload(payload, kind);
      return { type: "video_url", video_url: { url, id } };
    }
    case "tool_call":
      return parseToolCall(payload, lineno, rawLine);
    case "tool_call_part":
      return parseToolCallPart(payload);
    default:
      throw new ChatProviderError(
        `Unknown echo DSL kind '${kind}' at line ${lineno}: ${pyRepr(rawLine)}`,
      );
  }
}

const USAGE_KEYS = ["input_other", "output", "input_cache_read", "input_cache_creation"] as const;

function parseUsage(payload: string): TokenUsage {
  const mapping = parseMapping(payload, "usage");
  const usage: TokenUsage = {
    input_other: 0,
    output: 0,
    input_cache_read: 0,
    input_cache_creation: 0,
  };
  for (const key of USAGE_KEYS) {
    const value = key in mapping ? mapping[key] : 0;
    const n = pyInt(value);
    if (n === null) {
      throw new ChatProviderError(
        `Usage field '${key}' must be an integer, got ${pyRepr(value)}`,
      );
    }
    usage[key] = n;
  }
  return usage;
}

function parseUrlPayload(payload: string, kind: string): [string, string | null] {
  const value = parseValue(payload);
  if (isObject(value)) {
    const url = value.url;
    if (typeof url !== "string") {
      throw new ChatProviderError(`${kind} requires a url field, got ${pyRepr(value)}`);
    }
    const id = value.id ?? null;
    if (id !== null && typeof id !== "string") {
      throw new ChatProviderError(`${kind} id must be a string when provided.`);
    }
    return [url, id];
  }
  if (typeof value !== "string") {
    throw new ChatProviderError(`${kind} expects url string or object, got ${pyRepr(value)}`);
  }
  return [value, null];
}

function parseToolCall(payload: string, lineno: number, rawLine: string): ToolCall {
  const mapping = parseMapping(payload, "tool_call");
  const fn = isObject(mapping.function) ? mapping.function : null;
  const fnTruthy = fn !== null && Object.keys(fn).length > 0;

  const id = mapping.id;
  const name = pyTruthy(mapping.name) ? mapping.name : (fnTruthy ? fn.name : null);
  let args: DslValue | undefined = mapping.arguments;
  let extras: DslValue | undefined = mapping.extras;
  if (fnTruthy) {
    if (args === undefined || args === null) args = fn.arguments;
    if (extras === undefined || extras === null) extras = fn.extras;
  }
  if (typeof id !== "string" || typeof name !== "string") {
    throw new ChatProviderError(
      `tool_call requires string id and name at line ${lineno}: ${pyRepr(rawLine)}`,
    );
  }
  if (args !== undefined && args !== null && typeof args !== "string") {
    throw new ChatProviderError(
      `tool_call.arguments must be a string at line ${lineno}, got ${pyTypeName(args)}`,
    );
  }
  return {
    type: "function",
    id,
    function: { name, arguments: args ?? null },
    extras: isObject(extras) ? extras : null,
  };
}

function parseToolCallPart(payload: string): ToolCallPart {
  const value = parseValue(payload);
  const part = isObject(value) ? (value.arguments_part ?? null) : value;
  if (part === null || part === "") return { arguments_part: null };
  // Objects and lists are re-serialized compactly; other scalars are kept as their JSON text.
  return { arguments_part: typeof part === "string" ? part : pyJsonDumpsCompact(part) };
}

function parseMapping(raw: string, context: string): DslObject {
  const trimmed = raw.trim();
  let loaded: DslValue = null;
  try {
    loaded = JSON.parse(trimmed) as DslValue;
  } catch {
    loaded = null;
  }
  if (isObject(loaded)) return loaded;
  if (loaded !== null) {
    throw new ChatProviderError(`${context} payload must be an object, got ${pyRepr(loaded)}`);
  }
  const mapping: DslObject = {};
  for (const token of trimmed.replaceAll(",", " ").split(/\s+/)) {
    if (token === "") continue;
    const eq = token.indexOf("=");
    if (eq < 0) throw new ChatProviderError(`Invalid token '${token}' in ${context} payload.`);
    mapping[token.slice(0, eq).trim()] = parseValue(token.slice(eq + 1).trim());
  }
  if (Object.keys(mapping).length === 0) {
    throw new ChatProviderError(`${context} payload cannot be empty.`);
  }
  return mapping;
}

function parseValue(raw: string): DslValue {
  const trimmed = raw.trim();
  if (trimmed === "") return null;
  const lowered = trimmed.toLowerCase();
  if (lowered === "null" || lowered === "none") return null;
  try {
    return JSON.parse(trimmed) as DslValue;
  } catch {
    return stripQuotes(trimmed);
  }
}

function stripQuotes(value: string): string {
  if (
    value.length >= 2 && value[0] === value[value.length - 1] &&
    (value[0] === "'" || value[0] === '"')
  ) {
    return value.slice(1, -1);
  }
  return value;
}

function simulatedError(payload: string, lineno: number, rawLine: string): ChatProviderError {
  if (payload === "") {
    throw new ChatProviderError(`Empty error payload at line ${lineno}: ${pyRepr(rawLine)}`);
  }
  const space = payload.indexOf(" ");
  const first = space < 0 ? payload : payload.slice(0, space);
  const message = space < 0 ? "" : payload.slice(space + 1).trim();
  const lower = first.toLowerCase();
  if (lower === "connection") {
    return new APIConnectionError(message || "Simulated connection error");
  }
  if (lower === "timeout") return new APITimeoutError(message || "Simulated timeout error");
  const status = pyInt(first);
  if (status === null) {
    throw new ChatProviderError(
      `Invalid error spec at line ${lineno}: expected status code or ` +
        `'connection'/'timeout', got ${pyRepr(first)}`,
    );
  }
  return new APIStatusError(status, message || `Simulated ${status} error`);
}

// ---- Python compatibility helpers (private) ----

// Python's line boundaries include the file/group/record separators; they are intentional here.
// deno-lint-ignore no-control-regex
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/**
 * `str.splitlines()` one line at a time: split on every Python line boundary, no trailing empty
 * line.
 */
function* lineIterator(text: string): Generator<string> {
  const breaks = new RegExp(LINE_BREAK.source, "g");
  let pos = 0;
  for (let m = breaks.exec(text); m !== null; m = breaks.exec(text)) {
    yield text.slice(pos, m.index);
    pos = m.index + m[0].length;
  }
  if (pos < text.length) yield text.slice(pos);
}

function isObject(v: DslValue | undefined): v is DslObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function pyTruthy(v: DslValue | undefined): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

/** Python `int(value)` for JSON-like values, or null where Python raises. */
function pyInt(v: DslValue | undefined): number | null {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : null;
  if (typeof v === "string") {
    const m = /^\s*([+-]?\d+(?:_\d+)*)\s*$/.exec(v);
    return m ? Number.parseInt(m[1].replaceAll("_", ""), 10) : null;
  }
  return null;
}

function pyTypeName(v: DslValue): string {
  if (v === null) return "NoneType";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "string") return "str";
  return Array.isArray(v) ? "list" : "dict";
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python `repr()` of a string. */
function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += "\\" + quote;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch !== " " && NON_PRINTABLE.test(ch)) {
      const code = ch.codePointAt(0)!;
      if (code <= 0xff) out += "\\x" + code.toString(16).padStart(2, "0");
      else if (code <= 0xffff) out += "\\u" + code.toString(16).padStart(4, "0");
      else out += "\\U" + code.toString(16).padStart(8, "0");
    } else out += ch;
  }
  return out + quote;
}

/** Python `repr()` of a JSON-like value. */
function pyRepr(v: DslValue | undefined): string {
  if (v === undefined || v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return pyReprString(v);
  if (Array.isArray(v)) return "[" + v.map(pyRepr).join(", ") + "]";
  return "{" + Object.entries(v).map(([k, x]) => `${pyReprString(k)}: ${pyRepr(x)}`).join(", ") +
    "}";
}

/** Python `json.dumps(v, separators=(",", ":"))` (ASCII-only output). */
function pyJsonDumpsCompact(v: DslValue): string {
  return JSON.stringify(v).replace(
    /[\u0080-\uffff]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}
