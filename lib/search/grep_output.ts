/**
 * Grep's post-processing, shared by both engines so they give the same final result: output in
 * a deterministic per-file order, files mode sorted by modification time, paths made relative,
 * sensitive files dropped, the count summary, pagination, and the reference's messages.
 *
 * @module
 */
import { pathStatusSync } from "../fs/exists.ts";
import { dirname, resolve } from "node:path";
import { comparePathParts } from "./path_glob.ts";
import {
  contextOf,
  GREP_TIMEOUT_MS,
  type GrepBlock,
  type GrepQuery,
  type GrepRun,
} from "./grep_query.ts";
import { toolError, ToolResultBuilder } from "../tooling/result.ts";
import type { ToolReturnValue } from "../tooling/tool.ts";
import { isSensitiveFile, sensitiveFileWarning } from "../tooling/sensitive.ts";
import { controlMatcher, type ControlPath } from "../tooling/control_paths.ts";
import type { ResultVerdict } from "../tooling/result_filter.ts";

/** Pagination and environment of {@link finishGrep}. */
export interface GrepFinishOptions {
  /** Keep at most this many lines (null or 0: all). */
  headLimit: number | null;
  /** Skip this many lines first. */
  offset: number;
  /** The session's control paths; the secret ones count as sensitive. */
  controls?: readonly ControlPath[];
  /**
   * Judges each result file by its absolute path (as searched): `ok`, `secret` (dropped with
   * the sensitive-file note) or `denied` (dropped with a note: it leads outside the scope).
   * Without it only the sensitive-name filter applies.
   */
  checkPath?: (absPath: string) => ResultVerdict;
  /** Timeout the engine ran with (for the message). */
  timeoutMs?: number;
}

function mtimeOf(path: string): number {
  try {
    return Deno.statSync(path).mtime?.getTime() ?? 0;
  } catch {
    return 0;
  }
}

/**
 * Split ripgrep's content output into per-file blocks. A line continues the current block when
 * it starts with the block's path and a separator; otherwise the new path is the shortest
 * prefix ending before `:` or `-` that names an existing file.
 */
export function parseContentBlocks(stdout: string, q: GrepQuery): GrepBlock[] {
  const lines = stdout.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const numbers = q.outputMode === "content" && q.lineNumber;
  const known = new Map<string, boolean>();
  const exists = (p: string) => {
    let hit = known.get(p);
    if (hit === undefined) {
      hit = pathStatusSync(resolve(q.cwd, p)) === "file";
      known.set(p, hit);
    }
    return hit;
  };
  const continues = (line: string, path: string) => {
    if (!line.startsWith(path)) return false;
    const sep = line[path.length];
    if (sep !== ":" && sep !== "-") return false;
    if (!numbers) return true;
    const m = /^\d+([:-])/.exec(line.slice(path.length + 1));
    return m !== null && m[1] === sep;
  };
  const pathOf = (line: string): string => {
    for (let i = 1; i < line.length; i++) {
      const c = line[i];
      if (c !== ":" && c !== "-") continue;
      const candidate = line.slice(0, i);
      if (continues(line, candidate) && exists(candidate)) return candidate;
    }
    const m = /^([^:]+):\d+:/.exec(line) ?? /^(.+)-\d+-/.exec(line) ?? /^([^:]+):/.exec(line);
    return m ? m[1] : line;
  };
  const blocks: GrepBlock[] = [];
  let current: GrepBlock | null = null;
  let pendingSep = false;
  for (const line of lines) {
    if (line === "--") {
      pendingSep = true;
      continue;
    }
    if (current && continues(line, current.path)) {
      if (pendingSep) current.lines.push("--");
      current.lines.push(line);
    } else {
      current = { path: pathOf(line), lines: [line] };
      blocks.push(current);
    }
    pendingSep = false;
  }
  return blocks;
}

/** Split ripgrep's raw output into per-file blocks. */
export function parseBlocks(stdout: string, q: GrepQuery, singleFile: boolean): GrepBlock[] {
  const lines = stdout.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  if (lines.length === 0) return [];
  if (singleFile && q.outputMode !== "files_with_matches") return [{ path: "", lines }];
  if (q.outputMode === "files_with_matches") return lines.map((l) => ({ path: l, lines: [l] }));
  if (q.outputMode === "count_matches") {
    return lines.map((l) => {
      const idx = l.lastIndexOf(":");
      return { path: idx > 0 ? l.slice(0, idx) : l, lines: [l] };
    });
  }
  return parseContentBlocks(stdout, q);
}

function stripPrefix(line: string, prefix: string): string {
  return line.startsWith(prefix) ? line.slice(prefix.length) : line;
}

function joinMessage(message: string, extra: string): string {
  return message ? `${message} ${extra}` : extra;
}

/** Turn an engine run into the Grep tool's result. */
export function finishGrep(run: GrepRun, q: GrepQuery, opts: GrepFinishOptions): ToolReturnValue {
  const timeoutS = Math.round((opts.timeoutMs ?? GREP_TIMEOUT_MS) / 1000);
  let message = "";
  let stdout = run.stdout;
  if (run.bufferTruncated) {
    const lastNl = stdout.lastIndexOf("\n");
    stdout = lastNl >= 0 ? stdout.slice(0, lastNl) : "";
    message = "Output exceeded buffer limit. Some results omitted.";
  }
  if (run.timedOut) {
    if (!stdout.trim()) {
      return toolError({
        message: `Grep timed out after ${timeoutS}s. Try a more specific path or pattern.`,
        brief: "Grep timed out",
      });
    }
    message = joinMessage(message, `Grep timed out after ${timeoutS}s. Partial results returned.`);
  }
  if (!run.timedOut && run.exitCode !== 0 && run.exitCode !== 1) {
    return toolError({ message: `Failed to grep. Error: ${run.stderr}`, brief: "Failed to grep" });
  }

  const searchAbs = resolve(q.cwd, q.path);
  const singleFile = pathStatusSync(searchAbs) === "file";
  let blocks = run.blocks
    ? run.blocks.map((b) => ({ path: b.path, lines: [...b.lines] }))
    : parseBlocks(stdout, q, singleFile);

  // A deterministic order: ripgrep prints files in whatever order its threads finish.
  blocks.sort((a, b) => comparePathParts(a.path, b.path));
  if (!run.timedOut && q.outputMode === "files_with_matches") {
    const mtimes = new Map(blocks.map((b) => [b.path, mtimeOf(resolve(q.cwd, b.path))]));
    blocks.sort((a, b) => mtimes.get(b.path)! - mtimes.get(a.path)!);
  }

  // Every result is judged by where it really leads, resolved against the directory searched.
  // The secret control paths are resolved once per search, not once per result.
  const secretControl = opts.controls === undefined
    ? null
    : controlMatcher(opts.controls.filter((c) => c.secret));
  const verdicts = new Map<string, ResultVerdict>();
  const verdictOf = (b: GrepBlock): ResultVerdict => {
    const abs = b.path === "" ? searchAbs : resolve(q.cwd, b.path);
    let v = verdicts.get(abs);
    if (v === undefined) {
      v = opts.checkPath?.(abs) ?? "ok";
      if (v === "ok" && (isSensitiveFile(abs) || secretControl?.(abs))) v = "secret";
      verdicts.set(abs, v);
    }
    return v;
  };
  const judged = blocks.map((b) => ({ block: b, verdict: verdictOf(b) }));

  const base = singleFile ? dirname(searchAbs) : searchAbs;
  const prefix = base.replace(/\/+$/, "") + "/";
  const strip = (b: GrepBlock): GrepBlock => ({
    path: stripPrefix(b.path, prefix),
    lines: b.lines.map((l) => stripPrefix(l, prefix)),
  });

  const skipped: string[] = [];
  let denied = 0;
  blocks = [];
  for (const { block, verdict } of judged) {
    const b = strip(block);
    const path = b.path === "" ? q.path : b.path;
    if (verdict === "denied") {
      denied++;
      continue;
    }
    if (verdict === "secret" || isSensitiveFile(path)) {
      if (!skipped.includes(path)) skipped.push(path);
      continue;
    }
    blocks.push(b);
  }
  if (skipped.length > 0) message = joinMessage(message, sensitiveFileWarning(skipped));
  if (denied > 0) {
    message = joinMessage(
      message,
      `Left out ${denied} result(s) that lead outside this run's read scope.`,
    );
  }

  const [before, after] = contextOf(q);
  const separated = q.outputMode === "content" && (before > 0 || after > 0);
  let lines: string[] = [];
  blocks.forEach((b, i) => {
    if (separated && i > 0) lines.push("--");
    lines.push(...b.lines);
  });

  if (q.outputMode === "count_matches") {
    let total = 0;
    let files = 0;
    for (const line of lines) {
      // `path:N` per file; a single-file search prints just `N`.
      const idx = line.lastIndexOf(":");
      const n = (singleFile ? line.slice(idx + 1) : idx > 0 ? line.slice(idx + 1) : "").trim();
      if (!/^[+-]?\d+$/.test(n)) continue;
      total += Number(n);
      files++;
    }
    message = joinMessage(message, `Found ${total} total occurrences across ${files} files.`);
  }

  if (opts.offset > 0) lines = lines.slice(opts.offset);
  const limit = opts.headLimit;
  if (limit && lines.length > limit) {
    const total = lines.length + opts.offset;
    lines = lines.slice(0, limit);
    message = joinMessage(
      message,
      `Results truncated to ${limit} lines (total: ${total}). ` +
        `Use offset=${opts.offset + limit} to see more.`,
    );
  }
  const output = lines.join("\n");

  const builder = new ToolResultBuilder();
  if (!output && !run.bufferTruncated) {
    return builder.ok(message ? `No matches found. ${message}` : "No matches found");
  }
  builder.write(output);
  return builder.ok(message);
}
