/**
 * The Kimi Code quota (`GET <base>/usages`) as `/usage` shows it: the weekly summary and each
 * rate-limit window, with how much is left and when it resets (the reference's payload shapes:
 * `used` or `remaining` with `limit`, a `window` with `duration`/`timeUnit`, reset times as
 * ISO timestamps or seconds).
 *
 * @module
 */

/** One quota line. */
export interface QuotaRow {
  /** What the quota is (`Weekly limit`, `5h limit`, ...). */
  label: string;
  /** Units used. */
  used: number;
  /** Units allowed (0 when unknown). */
  limit: number;
  /** `resets in 3h 5m`, `reset`, `resets at <text>`, or null. */
  resetHint: string | null;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

function toInt(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.trunc(n) : null;
}

/** `3725` → `1h 2m 5s` (largest units first, zero units left out). */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (sec || parts.length === 0) parts.push(`${sec}s`);
  return parts.join(" ");
}

function resetHint(data: Obj, nowMs: number): string | null {
  for (const key of ["reset_at", "resetAt", "reset_time", "resetTime"]) {
    const v = data[key];
    if (!v) continue;
    const at = Date.parse(String(v));
    if (Number.isNaN(at)) return `resets at ${v}`;
    const left = (at - nowMs) / 1000;
    return left <= 0 ? "reset" : `resets in ${formatDuration(left)}`;
  }
  for (const key of ["reset_in", "resetIn", "ttl", "window"]) {
    const secs = toInt(data[key]);
    if (secs) return `resets in ${formatDuration(secs)}`;
  }
  return null;
}

function row(data: Obj, label: string, nowMs: number): QuotaRow | null {
  const limit = toInt(data.limit);
  let used = toInt(data.used);
  if (used === null) {
    const remaining = toInt(data.remaining);
    if (remaining !== null && limit !== null) used = limit - remaining;
  }
  if (used === null && limit === null) return null;
  return {
    label: String(data.name || data.title || label),
    used: used ?? 0,
    limit: limit ?? 0,
    resetHint: resetHint(data, nowMs),
  };
}

function windowLabel(item: Obj, detail: Obj, window: Obj, index: number): string {
  for (const key of ["name", "title", "scope"]) {
    const v = item[key] || detail[key];
    if (v) return String(v);
  }
  const duration = toInt(window.duration ?? item.duration ?? detail.duration);
  const unit = String(window.timeUnit ?? item.timeUnit ?? detail.timeUnit ?? "");
  if (duration) {
    if (unit.includes("MINUTE")) {
      return duration >= 60 && duration % 60 === 0
        ? `${duration / 60}h limit`
        : `${duration}m limit`;
    }
    if (unit.includes("HOUR")) return `${duration}h limit`;
    if (unit.includes("DAY")) return `${duration}d limit`;
    return `${duration}s limit`;
  }
  return `Limit #${index + 1}`;
}

/** The quota rows of a `/usages` payload: the summary first, then each limit. */
export function parseQuota(payload: unknown, nowMs: number = Date.now()): QuotaRow[] {
  if (!isObj(payload)) return [];
  const out: QuotaRow[] = [];
  if (isObj(payload.usage)) {
    const summary = row(payload.usage, "Weekly limit", nowMs);
    if (summary) out.push(summary);
  }
  if (Array.isArray(payload.limits)) {
    payload.limits.forEach((item, i) => {
      if (!isObj(item)) return;
      const detail = isObj(item.detail) ? item.detail : item;
      const window = isObj(item.window) ? item.window : {};
      const r = row(detail, windowLabel(item, detail, window, i), nowMs);
      if (r) out.push(r);
    });
  }
  return out;
}

/** The rows as aligned text lines: label, a 20-cell bar of what is used, what is left. */
export function formatQuota(rows: readonly QuotaRow[]): string[] {
  const width = Math.max(6, ...rows.map((r) => r.label.length));
  return rows.map((r) => {
    const left = r.limit > 0 ? (r.limit - r.used) / r.limit : 0;
    const filled = r.limit > 0 ? Math.min(20, Math.round((r.used / r.limit) * 20)) : 0;
    const bar = "█".repeat(filled) + "░".repeat(20 - filled);
    const pct = `${Math.round(left * 100)}% left`;
    return `${r.label.padEnd(width)}  ${bar}  ${pct}` + (r.resetHint ? ` (${r.resetHint})` : "");
  });
}

/** Why the quota could not be shown, in the reference's words where it has them. */
export function quotaFetchError(status: number | null, detail = ""): string {
  if (status === 401) return "Authorization failed. Please check your API key or run /login.";
  if (status === 404) return "Usage endpoint not available. Try Kimi For Coding.";
  return detail ? `Failed to fetch usage: ${detail}` : "Failed to fetch usage.";
}
