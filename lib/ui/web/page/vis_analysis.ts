/**
 * Analyses of a session's wire records for `kimi vis`: the decision path (thinking → tool call →
 * result per turn), the integrity check, per-tool statistics and the usage series of the
 * StatusUpdate records. Pure data over the `/wire` events (tested without a browser). Wire
 * timestamps are unix seconds, so every duration here is in seconds.
 *
 * @module
 */
import type { VisEvent } from "./timeline.ts";

/** Longest summary of a tool call's arguments, thinking or result output (characters). */
export const SUMMARY_CHARS = 160;

function clip(text: string, max = SUMMARY_CHARS): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function toolName(e: VisEvent): string {
  const fn = e.payload?.function as { name?: unknown } | undefined;
  return typeof fn?.name === "string" && fn.name ? fn.name : "?";
}

function toolCallId(e: VisEvent): string {
  return typeof e.payload?.id === "string" ? e.payload.id : "";
}

function resultCallId(e: VisEvent): string {
  return typeof e.payload?.tool_call_id === "string" ? e.payload.tool_call_id : "";
}

function isErrorResult(e: VisEvent): boolean {
  const rv = e.payload?.return_value as { is_error?: unknown } | undefined;
  return rv?.is_error === true;
}

/** Thinking text of a record, or null when it is not thinking. */
function thinkingText(e: VisEvent): string | null {
  if (e.type === "ContentPart" && e.payload?.type === "think") {
    return typeof e.payload.think === "string" ? e.payload.think : "";
  }
  if (e.type === "ThinkPart") {
    const t = e.payload?.think ?? e.payload?.text;
    return typeof t === "string" ? t : "";
  }
  return null;
}

/**
 * A tool call's arguments in one line: `key=value` pairs of its JSON object (strings unquoted),
 * or the raw text when it is not a JSON object; clipped to {@link SUMMARY_CHARS}.
 */
export function summarizeArgs(args: unknown): string {
  if (typeof args !== "string") {
    return args === undefined || args === null ? "" : clip(String(args));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return clip(args);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return clip(args);
  return clip(
    Object.entries(parsed as Record<string, unknown>)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(", "),
  );
}

/** A result's output in one line: its message and output, clipped. */
function summarizeResult(e: VisEvent): string {
  const rv = e.payload?.return_value as Record<string, unknown> | string | undefined;
  if (typeof rv === "string") return clip(rv);
  if (!rv || typeof rv !== "object") return "";
  const parts = [rv.message, rv.output]
    .filter((p): p is string => typeof p === "string" && p.trim() !== "");
  return clip(parts.join(" — "));
}

/** One link of a decision path: the thinking before a tool call, the call, its result. */
export interface DecisionLink {
  /** Thinking records since the previous call of the turn (indices) and their text, clipped. */
  thinking: { indices: number[]; text: string } | null;
  /** The ToolCall record. */
  call: { index: number; id: string; name: string; args: string };
  /** The matching ToolResult, or null when none was recorded. */
  result: { index: number; error: boolean; output: string; durationSec: number } | null;
}

/** The decision path of one turn. */
export interface DecisionTurn {
  /** Turn number (as in the timeline). */
  n: number;
  /** Index of the TurnBegin record (-1 for records before any TurnBegin). */
  index: number;
  /** User input, clipped. */
  input: string;
  /** Tool calls of the turn in order. */
  links: DecisionLink[];
}

function userInput(input: unknown): string {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return "";
  return input.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : ""))
    .filter(Boolean).join(" ");
}

/**
 * The decision path of every turn that made a tool call: for each call, the thinking recorded
 * since the previous call, the call (name, arguments summary) and its result (error or success,
 * duration between the two records). Turns are numbered as the timeline numbers them.
 */
export function decisionPath(events: VisEvent[]): DecisionTurn[] {
  const turns: DecisionTurn[] = [];
  let turn: DecisionTurn | null = null;
  let thinking: { index: number; text: string }[] = [];
  const open = new Map<string, DecisionLink & { at: number }>();
  for (const e of events) {
    if (e.type === "metadata") continue;
    if (e.type === "TurnBegin") {
      turn = {
        n: turns.length + 1,
        index: e.index,
        input: clip(userInput(e.payload?.user_input)),
        links: [],
      };
      turns.push(turn);
      thinking = [];
      continue;
    }
    if (!turn) {
      turn = { n: turns.length + 1, index: -1, input: "", links: [] };
      turns.push(turn);
    }
    const think = thinkingText(e);
    if (think !== null) {
      if (think.trim()) thinking.push({ index: e.index, text: think });
    } else if (e.type === "ToolCall") {
      const link: DecisionLink & { at: number } = {
        thinking: thinking.length
          ? {
            indices: thinking.map((t) => t.index),
            text: clip(thinking.map((t) => t.text).join(" ")),
          }
          : null,
        call: {
          index: e.index,
          id: toolCallId(e),
          name: toolName(e),
          args: summarizeArgs(
            (e.payload?.function as { arguments?: unknown } | undefined)?.arguments,
          ),
        },
        result: null,
        at: e.timestamp,
      };
      thinking = [];
      turn.links.push(link);
      if (link.call.id) open.set(link.call.id, link);
    } else if (e.type === "ToolResult") {
      const link = open.get(resultCallId(e));
      if (link) {
        open.delete(resultCallId(e));
        link.result = {
          index: e.index,
          error: isErrorResult(e),
          output: summarizeResult(e),
          durationSec: Math.max(0, e.timestamp - link.at),
        };
      }
    }
  }
  return turns.filter((t) => t.links.length > 0).map((t) => ({
    ...t,
    links: t.links.map(({ thinking, call, result }) => ({ thinking, call, result })),
  }));
}

/** How serious a finding is: `error` breaks the record's structure, `warning` may be benign. */
export type IntegritySeverity = "error" | "warning";

/** One finding of the integrity check. */
export interface IntegrityFinding {
  /** Kind (stable identifier). */
  kind:
    | "tool_call_without_result"
    | "tool_result_without_call"
    | "duplicate_tool_call_id"
    | "turn_without_end"
    | "turn_still_open"
    | "step_outside_turn"
    | "approval_without_response"
    | "time_backwards"
    | "skipped_lines";
  /** Severity. */
  severity: IntegritySeverity;
  /** Index of the record it concerns (-1 when it concerns no single record). */
  index: number;
  /** What is wrong, naming the record. */
  message: string;
}

/** Options of {@link checkIntegrity}. */
export interface IntegrityOptions {
  /** Lines of `wire.jsonl` the server could not parse (malformed or torn), if known. */
  skippedLines?: number;
}

/**
 * Check a session's wire records for structural problems: tool calls without a result (or
 * results without a call, or one call id used twice), turns without an end (the last turn, when
 * still open, is reported as still running or interrupted), steps outside a turn, approval
 * requests without a response, timestamps going backwards and unreadable lines. An empty list
 * means no problem was found. Findings are ordered by the record they concern.
 */
export function checkIntegrity(
  events: VisEvent[],
  opts: IntegrityOptions = {},
): IntegrityFinding[] {
  const findings: IntegrityFinding[] = [];
  const calls = new Map<string, VisEvent>();
  const seenIds = new Map<string, number>();
  const approvals = new Map<string, VisEvent>();
  let openTurn: VisEvent | null = null;
  let lastTime: { t: number; index: number } | null = null;
  for (const e of events) {
    if (e.type === "metadata") continue;
    if (lastTime && e.timestamp < lastTime.t) {
      findings.push({
        kind: "time_backwards",
        severity: "warning",
        index: e.index,
        message: `${e.type} #${e.index} is timestamped ${
          (lastTime.t - e.timestamp).toFixed(3)
        } s before record #${lastTime.index}`,
      });
    }
    if (!lastTime || e.timestamp >= lastTime.t) lastTime = { t: e.timestamp, index: e.index };
    switch (e.type) {
      case "TurnBegin":
        if (openTurn) {
          findings.push({
            kind: "turn_without_end",
            severity: "error",
            index: openTurn.index,
            message:
              `TurnBegin #${openTurn.index} has no TurnEnd before the next turn (#${e.index})`,
          });
        }
        openTurn = e;
        break;
      case "TurnEnd":
        openTurn = null;
        break;
      case "StepBegin":
        if (!openTurn) {
          findings.push({
            kind: "step_outside_turn",
            severity: "error",
            index: e.index,
            message: `StepBegin #${e.index} is outside any turn`,
          });
        }
        break;
      case "ToolCall": {
        const id = toolCallId(e);
        const first = seenIds.get(id);
        if (id && first !== undefined) {
          findings.push({
            kind: "duplicate_tool_call_id",
            severity: "error",
            index: e.index,
            message: `ToolCall ${
              toolName(e)
            } #${e.index} reuses the id ${id} of ToolCall #${first}`,
          });
        }
        if (!id) {
          findings.push({
            kind: "tool_call_without_result",
            severity: "error",
            index: e.index,
            message: `ToolCall ${
              toolName(e)
            } #${e.index} has no id, so no ToolResult can answer it`,
          });
        } else {
          if (first === undefined) seenIds.set(id, e.index);
          const previous = calls.get(id);
          if (previous) reportUnanswered(findings, previous, false);
          calls.set(id, e);
        }
        break;
      }
      case "ToolResult": {
        const id = resultCallId(e);
        if (calls.has(id)) {
          calls.delete(id);
        } else {
          findings.push({
            kind: "tool_result_without_call",
            severity: "error",
            index: e.index,
            message: `ToolResult #${e.index} answers ${
              id ? `id ${id}` : "no id"
            }, which no open ToolCall has`,
          });
        }
        break;
      }
      case "ApprovalRequest":
        if (typeof e.payload?.id === "string") approvals.set(e.payload.id, e);
        break;
      case "ApprovalResponse":
      case "ApprovalRequestResolved":
        approvals.delete(String(e.payload?.request_id ?? ""));
        break;
    }
  }
  const lastTurnIndex = openTurn?.index ?? Infinity;
  for (const call of calls.values()) reportUnanswered(findings, call, call.index > lastTurnIndex);
  for (const req of approvals.values()) {
    const running = req.index > lastTurnIndex;
    findings.push({
      kind: "approval_without_response",
      severity: running ? "warning" : "error",
      index: req.index,
      message: `ApprovalRequest #${req.index} (${String(req.payload?.sender ?? "?")}: ${
        String(req.payload?.action ?? "?")
      }) has no response${running ? " (the turn is still running or was interrupted)" : ""}`,
    });
  }
  if (openTurn) {
    findings.push({
      kind: "turn_still_open",
      severity: "warning",
      index: openTurn.index,
      message:
        `The last turn (TurnBegin #${openTurn.index}) has no TurnEnd: still running or interrupted`,
    });
  }
  if (opts.skippedLines) {
    findings.push({
      kind: "skipped_lines",
      severity: "warning",
      index: -1,
      message: `${opts.skippedLines} line(s) of wire.jsonl could not be read (malformed or torn)`,
    });
  }
  return findings.sort((a, b) =>
    (a.index === -1 ? Infinity : a.index) - (b.index === -1 ? Infinity : b.index)
  );
}

function reportUnanswered(findings: IntegrityFinding[], call: VisEvent, running: boolean): void {
  findings.push({
    kind: "tool_call_without_result",
    severity: running ? "warning" : "error",
    index: call.index,
    message: `ToolCall ${toolName(call)} (id ${toolCallId(call)}) #${call.index} has no ToolResult${
      running ? " (the turn is still running or was interrupted)" : ""
    }`,
  });
}

/** Statistics of one tool over a session. */
export interface ToolStat {
  /** Tool name. */
  name: string;
  /** Calls recorded. */
  calls: number;
  /** Results that were errors. */
  errors: number;
  /** Calls without a recorded result. */
  pending: number;
  /** Sum of the call → result durations (seconds). */
  totalSec: number;
  /** Mean duration over the calls with a result (seconds; 0 when none). */
  meanSec: number;
  /** Longest duration (seconds). */
  maxSec: number;
}

/** Per-tool statistics of a session: calls, errors, total/mean/max duration; most called first. */
export function toolStats(events: VisEvent[]): ToolStat[] {
  const stats = new Map<string, ToolStat & { done: number }>();
  const open = new Map<string, { stat: ToolStat & { done: number }; at: number }>();
  for (const e of events) {
    if (e.type === "ToolCall") {
      const name = toolName(e);
      let s = stats.get(name);
      if (!s) {
        s = { name, calls: 0, errors: 0, pending: 0, totalSec: 0, meanSec: 0, maxSec: 0, done: 0 };
        stats.set(name, s);
      }
      s.calls++;
      if (toolCallId(e)) open.set(toolCallId(e), { stat: s, at: e.timestamp });
    } else if (e.type === "ToolResult") {
      const o = open.get(resultCallId(e));
      if (!o) continue;
      open.delete(resultCallId(e));
      const d = Math.max(0, e.timestamp - o.at);
      o.stat.done++;
      o.stat.totalSec += d;
      o.stat.maxSec = Math.max(o.stat.maxSec, d);
      if (isErrorResult(e)) o.stat.errors++;
    }
  }
  return [...stats.values()]
    .map(({ done, ...s }) => ({
      ...s,
      pending: s.calls - done,
      meanSec: done ? s.totalSec / done : 0,
    }))
    .sort((a, b) => b.calls - a.calls || a.name.localeCompare(b.name));
}

/** One point of the usage series. */
export interface UsagePoint {
  /** Index of the StatusUpdate record. */
  index: number;
  /** Seconds since the session's first record. */
  timeSec: number;
  /** Context usage, 0–1 (null when the update did not report it). */
  context: number | null;
  /** Input tokens of the step (all kinds), or null. */
  input: number | null;
  /** Output tokens of the step, or null. */
  output: number | null;
}

/** The usage over time: one point per StatusUpdate reporting context or token usage. */
export function usageSeries(events: VisEvent[]): UsagePoint[] {
  const t0 = events.find((e) => e.type !== "metadata")?.timestamp ?? 0;
  const out: UsagePoint[] = [];
  for (const e of events) {
    if (e.type !== "StatusUpdate") continue;
    const cu = e.payload?.context_usage;
    const tu = e.payload?.token_usage as Record<string, unknown> | null | undefined;
    const context = typeof cu === "number" && Number.isFinite(cu)
      ? Math.min(1, Math.max(0, cu))
      : null;
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
    const input = tu && typeof tu === "object"
      ? num(tu.input_other) + num(tu.input_cache_read) + num(tu.input_cache_creation)
      : null;
    const output = tu && typeof tu === "object" ? num(tu.output) : null;
    if (context === null && input === null) continue;
    out.push({ index: e.index, timeSec: Math.max(0, e.timestamp - t0), context, input, output });
  }
  return out;
}

/**
 * Round axis ticks from 0 to at least `max`: `count` intervals of a 1/2/5 × 10ⁿ step
 * (`[0]` when `max` is not positive).
 */
export function axisTicks(max: number, count = 4): number[] {
  if (!(max > 0)) return [0];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const n = Math.max(1, Math.ceil(max / step - 1e-9));
  return Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** Ticks of a time axis in seconds, in a unit that keeps them round, and their labels. */
export interface TimeAxis {
  /** Tick positions, in seconds. */
  ticks: number[];
  /** Tick labels (`30 s`, `2 min`, `1.5 h`), in the order of `ticks`. */
  labels: string[];
}

/** A time axis from 0 to at least `maxSec`: seconds below 2 minutes, minutes below 2 hours. */
export function timeAxis(maxSec: number): TimeAxis {
  const [unit, name] = maxSec >= 7200 ? [3600, "h"] : maxSec >= 120 ? [60, "min"] : [1, "s"];
  const ticks = axisTicks(maxSec / unit);
  return {
    ticks: ticks.map((t) => t * unit),
    labels: ticks.map((t) => `${t} ${name}`),
  };
}

/** A duration for people: `850 ms`, `2.35 s`, `1.5 min`. */
export function formatDuration(sec: number): string {
  if (sec < 1) return `${Math.round(sec * 1000)} ms`;
  if (sec < 60) return `${sec.toFixed(2)} s`;
  return `${(sec / 60).toFixed(1)} min`;
}
