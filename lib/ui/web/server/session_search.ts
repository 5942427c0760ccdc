/**
 * Cross-session search of `kimi web` (Kimi-TS §B5): `GET /api/search?q=` finds the sessions
 * whose title or user messages contain `q` (case-insensitive), newest first, a page at a time,
 * each with the first matching messages (turn index and a snippet). Only the sessions of the
 * share dir are read, each `wire.jsonl` through a checked, pinned open (a link planted in a
 * session directory is not followed), and the bytes read are bounded per session and per
 * request: a search that hits a bound says so (`truncated`) instead of reading on.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { join, sep } from "node:path";
import * as z from "zod";
import { ChunkLineDecoder, fileChunks, parseJsonLine } from "../../../session/jsonl.ts";
import { validate } from "./http_errors.ts";
import type { RouteDoc } from "./openapi.ts";
import type { SessionInfo } from "./schemas.ts";
import type { WebContext } from "./web_context.ts";

/** Bytes of one session's `wire.jsonl` read by a search. */
export const MAX_SCAN_BYTES_PER_SESSION = 16 * 1024 * 1024;
/** Bytes read by one search request over all sessions. */
export const MAX_SCAN_BYTES_PER_REQUEST = 128 * 1024 * 1024;
/** Matching messages reported per session. */
export const MAX_MATCHES_PER_SESSION = 3;
/** Characters of context each side of a match in a snippet. */
export const SNIPPET_CONTEXT = 60;

/** Query of a search. */
export const SearchQuerySchema = z.object({
  q: z.string().trim().min(1).max(200).meta({ description: "Text to find (case-insensitive)" }),
  limit: z.coerce.number().int().min(1).max(50).optional(),
  offset: z.coerce.number().int().min(0).max(100_000).optional(),
});

/** One matching user message. */
export const SearchMatchSchema = z.object({
  turn_index: z.number().int(),
  snippet: z.string(),
});
/** One matching user message. */
export type SearchMatch = z.infer<typeof SearchMatchSchema>;

/** One session found. */
export const SearchHitSchema = z.object({
  session_id: z.string(),
  title: z.string(),
  work_dir: z.string(),
  archived: z.boolean(),
  last_updated: z.string(),
  title_match: z.boolean(),
  matches: z.array(SearchMatchSchema),
});
/** One session found. */
export type SearchHit = z.infer<typeof SearchHitSchema>;

/** A page of results. */
export const SearchResultSchema = z.object({
  items: z.array(SearchHitSchema),
  has_more: z.boolean(),
  truncated: z.boolean().meta({
    description: "A size bound stopped the reading: some messages were not searched",
  }),
});
/** A page of results. */
export type SearchResult = z.infer<typeof SearchResultSchema>;

/** The text a user typed in a `TurnBegin`'s `user_input` (markup of attachments left out). */
export function userInputText(input: unknown): string {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return "";
  const out: string[] = [];
  for (const part of input) {
    if (!part || typeof part !== "object") continue;
    const p = part as { type?: unknown; text?: unknown };
    if (p.type !== "text" || typeof p.text !== "string") continue;
    const t = p.text.trim();
    if (/^<uploaded_files>[\s\S]*<\/uploaded_files>$/.test(t)) continue;
    if (/^<\/?(image|video|audio)\b[^>]*>$/.test(t)) continue;
    if (/^<document\b[^>]*>[\s\S]*<\/document>$/.test(t)) continue;
    out.push(p.text);
  }
  return out.join("\n");
}

/** A one-line snippet of `text` around the first match of `needle` (lower case). */
export function snippetAround(text: string, needle: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const at = flat.toLowerCase().indexOf(needle);
  if (at < 0) return flat.slice(0, 2 * SNIPPET_CONTEXT);
  const from = Math.max(0, at - SNIPPET_CONTEXT);
  const to = Math.min(flat.length, at + needle.length + SNIPPET_CONTEXT);
  return `${from > 0 ? "…" : ""}${flat.slice(from, to)}${to < flat.length ? "…" : ""}`;
}

/**
 * The user messages of a wire log that contain `needle` (lower case), by turn index, reading
 * `chunks` up to `maxBytes`; `bytes` is how much was read, `truncated` whether the bound hit.
 */
export async function scanWireLog(
  chunks: AsyncIterable<Uint8Array>,
  needle: string,
  maxBytes: number,
): Promise<{ matches: SearchMatch[]; bytes: number; truncated: boolean }> {
  const lines = new ChunkLineDecoder();
  const matches: SearchMatch[] = [];
  let bytes = 0;
  let turn = -1;
  const take = (line: string): boolean => {
    // cheap filter first: most lines are model output and tool results
    if (!line.includes('"TurnBegin"')) return false;
    const rec = parseJsonLine(line) as { message?: { type?: unknown; payload?: unknown } };
    if (rec?.message?.type !== "TurnBegin") return false;
    turn++;
    const payload = rec.message.payload as { user_input?: unknown } | undefined;
    const text = userInputText(payload?.user_input);
    if (!text.toLowerCase().includes(needle)) return false;
    matches.push({ turn_index: turn, snippet: snippetAround(text, needle) });
    return matches.length >= MAX_MATCHES_PER_SESSION;
  };
  for await (const chunk of chunks) {
    const room = maxBytes - bytes;
    const piece = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
    bytes += piece.byteLength;
    for (const line of lines.push(piece)) {
      if (take(line)) return { matches, bytes, truncated: false };
    }
    if (chunk.byteLength > room) return { matches, bytes, truncated: true };
  }
  for (const line of lines.end()) if (take(line)) break;
  return { matches, bytes, truncated: false };
}

/** Whether `dir` (resolved) lies inside `root` (resolved). */
async function inside(root: string, dir: string): Promise<boolean> {
  try {
    const [r, d] = await Promise.all([Deno.realPath(root), Deno.realPath(dir)]);
    return d.startsWith(r.endsWith(sep) ? r : r + sep);
  } catch {
    return false;
  }
}

/**
 * Open a session's `wire.jsonl` for reading if it is a regular file (not a link) inside the
 * share dir, and is still that file once open; null otherwise.
 */
async function openWireLog(shareDir: string, sessionDir: string): Promise<Deno.FsFile | null> {
  if (!(await inside(shareDir, sessionDir))) return null;
  const path = join(sessionDir, "wire.jsonl");
  let before: Deno.FileInfo;
  try {
    before = await Deno.lstat(path);
  } catch {
    return null;
  }
  if (!before.isFile) return null;
  const file = await Deno.open(path, { read: true }).catch(() => null);
  if (!file) return null;
  const after = await file.stat().catch(() => null);
  if (!after || after.dev !== before.dev || after.ino !== before.ino) {
    file.close();
    return null;
  }
  return file;
}

/** Search the sessions `sessions` (newest first) of the share dir for `q`. */
export async function searchSessions(
  shareDir: string,
  sessions: readonly SessionInfo[],
  query: { q: string; limit: number; offset: number },
): Promise<SearchResult> {
  const needle = query.q.toLowerCase();
  const items: SearchHit[] = [];
  let skipped = 0;
  let budget = MAX_SCAN_BYTES_PER_REQUEST;
  let truncated = false;
  for (const s of sessions) {
    const titleMatch = s.title.toLowerCase().includes(needle);
    let matches: SearchMatch[] = [];
    if (budget > 0) {
      const file = await openWireLog(shareDir, s.session_dir);
      if (file) {
        try {
          const max = Math.min(MAX_SCAN_BYTES_PER_SESSION, budget);
          const r = await scanWireLog(fileChunks(file), needle, max);
          matches = r.matches;
          budget -= r.bytes;
          if (r.truncated) truncated = true;
        } finally {
          file.close();
        }
      }
    } else {
      truncated = true;
    }
    if (!titleMatch && matches.length === 0) continue;
    if (skipped < query.offset) {
      skipped++;
      continue;
    }
    if (items.length === query.limit) return { items, has_more: true, truncated };
    items.push({
      session_id: s.session_id,
      title: s.title,
      work_dir: s.work_dir,
      archived: s.archived,
      last_updated: s.last_updated,
      title_match: titleMatch,
      matches,
    });
  }
  return { items, has_more: false, truncated };
}

/** What the route needs from the application that mounts it. */
export interface SearchRouteOptions {
  /** The server's shared state. */
  ctx: WebContext;
  /** Register a route in the API document. */
  doc(d: RouteDoc): void;
}

/** Mount `GET /api/search` on `app`. */
// deno-lint-ignore no-explicit-any
export function mountSearchRoute(app: Hono<any>, opts: SearchRouteOptions): void {
  const { ctx } = opts;
  opts.doc({
    method: "get",
    path: "/api/search",
    summary: "Find sessions by title or user message, newest first (archived ones included)",
    query: SearchQuerySchema,
    response: SearchResultSchema,
    errors: [422],
  });
  app.get("/api/search", async (c: Context) => {
    const q = validate(SearchQuerySchema, c.req.query(), "query");
    const all = (await Promise.all([false, true].map((archived) =>
      ctx.registry.list({ limit: Number.MAX_SAFE_INTEGER, offset: 0, archived })
    ))).flat().sort((a, b) =>
      Date.parse(b.last_updated) - Date.parse(a.last_updated) ||
      (a.session_id < b.session_id ? -1 : 1)
    );
    return c.json(
      await searchSessions(ctx.shareDir, all, {
        q: q.q,
        limit: q.limit ?? 20,
        offset: q.offset ?? 0,
      }),
    );
  });
}
