/**
 * The effective permission scope of this run, summarised once at start-up: per kind of access
 * (read, write, net, run, env) whether Deno granted all of it, part of it or none, with the
 * notable targets (work dir, share dir, model host, `bash`, ...) that are in or out. The tools
 * that cannot work at all in the scope are left out of the model's tool list, and the system
 * prompt states what the run lacks.
 *
 * Individual calls are still checked for their exact target by the {@link PermissionScope}.
 *
 * @module
 */
import { DEFAULT_CAPABILITY_NOTES } from "../agent/system_prompt.ts";
import type { AccessKind, PermissionScope } from "../tooling/scope.ts";

/** How much of one kind of access the run has. */
export type ScopeLevel = "all" | "partial" | "none";

/** The access of one kind. */
export interface KindScope {
  /** `all` (granted without a target), `partial` (some notable target granted) or `none`. */
  level: ScopeLevel;
  /** Notable targets that are granted (empty for `all`). */
  granted: string[];
  /** Notable targets that are not granted (empty for `all`). */
  denied: string[];
}

/** The effective scope of a run, by kind of access. */
export type RunScopeSummary = Record<AccessKind, KindScope>;

/** Asks Deno (or a stand-in) for the state of one permission; `prompt` counts as not granted. */
export type PermissionQuery = (desc: Deno.PermissionDescriptor) => Deno.PermissionState;

/** Options of {@link computeRunScope}. */
export interface RunScopeOptions {
  /** Absolute work dir. */
  workDir: string;
  /** Absolute share dir (`null` when it could not be located). */
  shareDir: string | null;
  /** Additional workspace directories. */
  additionalDirs: readonly string[];
  /** Host (`host[:port]`) of the model API, when known. */
  modelHost?: string | null;
  /** Extra programs worth reporting (e.g. the absolute path of the bundled `rg`). */
  programs?: readonly string[];
  /** Permission query; defaults to `Deno.permissions.querySync`. */
  query?: PermissionQuery;
}

/** The kinds in display order. */
export const ACCESS_KINDS: readonly AccessKind[] = ["read", "write", "net", "run", "env"];

/** Environment variables worth reporting. */
const NOTABLE_ENV = ["HOME", "KIMI_SHARE_DIR", "PATH"];
/** Programs worth reporting. */
const NOTABLE_PROGRAMS = ["bash", "git"];

function descriptor(kind: AccessKind, target?: string): Deno.PermissionDescriptor {
  switch (kind) {
    case "read":
    case "write":
      return { name: kind, path: target };
    case "net":
      return { name: "net", host: target };
    case "run":
      return { name: "run", command: target };
    case "env":
      return { name: "env", variable: target };
  }
}

function defaultQuery(desc: Deno.PermissionDescriptor): Deno.PermissionState {
  return Deno.permissions.querySync(desc).state;
}

function granted(query: PermissionQuery, kind: AccessKind, target?: string): boolean {
  try {
    return query(descriptor(kind, target)) === "granted";
  } catch {
    return false; // e.g. a malformed host
  }
}

function unique(items: readonly (string | null | undefined)[]): string[] {
  return [...new Set(items.filter((s): s is string => typeof s === "string" && s !== ""))];
}

function tempDir(): string | null {
  return Deno.build.os === "windows" ? null : "/tmp";
}

/** The notable targets checked for each kind. */
function notableTargets(opts: RunScopeOptions): Record<AccessKind, string[]> {
  const dirs = unique([opts.workDir, opts.shareDir, ...opts.additionalDirs, tempDir()]);
  return {
    read: dirs,
    write: dirs,
    net: unique([opts.modelHost]),
    run: unique([...NOTABLE_PROGRAMS, ...(opts.programs ?? [])]),
    env: NOTABLE_ENV,
  };
}

/**
 * Summarise the run's permissions. A kind granted without a target is `all`; otherwise it is
 * `partial` when at least one notable target is granted, else `none` (targets that are not
 * notable may still be granted; each call is checked for its exact target anyway).
 */
export function computeRunScope(opts: RunScopeOptions): RunScopeSummary {
  const query = opts.query ?? defaultQuery;
  const targets = notableTargets(opts);
  const summary = {} as RunScopeSummary;
  for (const kind of ACCESS_KINDS) {
    if (granted(query, kind)) {
      summary[kind] = { level: "all", granted: [], denied: [] };
      continue;
    }
    const yes = targets[kind].filter((t) => granted(query, kind, t));
    const no = targets[kind].filter((t) => !yes.includes(t));
    summary[kind] = { level: yes.length > 0 ? "partial" : "none", granted: yes, denied: no };
  }
  return summary;
}

/** A tool left out of this run, and why. */
export interface UnavailableTool {
  /** Tool name as the model would call it. */
  name: string;
  /** Why it cannot work, naming the flag that would enable it. */
  reason: string;
}

/** Options of {@link unavailableTools}. */
export interface UnavailableToolsOptions {
  /** Absolute work dir (checked for the write tools). */
  workDir: string;
  /** Host of the web search service, when configured. */
  searchHost?: string | null;
}

/**
 * The tools that cannot work at all in this run: Shell without permission to run `bash`,
 * FetchURL and SearchWeb without any net access (SearchWeb also when its service host is out),
 * WriteFile and StrReplaceFile without write access to the work dir.
 */
export function unavailableTools(
  summary: RunScopeSummary,
  scope: PermissionScope,
  opts: UnavailableToolsOptions,
): UnavailableTool[] {
  const out: UnavailableTool[] = [];
  if (!scope.check("run", "bash").allowed) {
    out.push({ name: "Shell", reason: "this run may not run `bash` (needs --allow-run)" });
  }
  if (summary.net.level === "none") {
    const reason = "this run has no network access (needs --allow-net)";
    out.push({ name: "FetchURL", reason });
    out.push({ name: "SearchWeb", reason });
  } else if (opts.searchHost && !scope.check("net", opts.searchHost).allowed) {
    out.push({
      name: "SearchWeb",
      reason:
        `this run may not connect to \`${opts.searchHost}\` (needs --allow-net=${opts.searchHost})`,
    });
  }
  if (!scope.check("write", opts.workDir).allowed) {
    const reason =
      `this run may not write the work dir \`${opts.workDir}\` (needs --allow-write=${opts.workDir})`;
    out.push({ name: "WriteFile", reason });
    out.push({ name: "StrReplaceFile", reason });
  }
  return out;
}

function quoteList(items: readonly string[]): string {
  return items.map((i) => `\`${i}\``).join(", ");
}

/** What the run lacks, one phrase per restricted kind (empty when nothing is restricted). */
export function scopeLimitations(summary: RunScopeSummary): string[] {
  const lines: string[] = [];
  const { read, write, net, run, env } = summary;
  if (read.level === "none") lines.push("read files");
  else if (read.level === "partial") {
    lines.push(`read files outside ${quoteList(read.granted)} (and other granted paths)`);
  }
  if (write.level === "none") lines.push("write or edit any file");
  else if (write.level === "partial") {
    lines.push(`write files outside ${quoteList(write.granted)}`);
  }
  if (net.level === "none") lines.push("use the network (no web search or fetching)");
  else if (net.level === "partial") {
    lines.push(`connect to hosts other than ${quoteList(net.granted)}`);
  }
  if (run.level === "none") lines.push("run programs (no shell commands)");
  else if (run.level === "partial") {
    lines.push(`run programs other than ${quoteList(run.granted)}`);
  }
  if (env.level !== "all") lines.push("read most environment variables");
  return lines;
}

/**
 * The `${KIMI_CAPABILITY_NOTES}` text: what this run cannot do and how denials look, or the
 * default "not sandboxed" note when Deno granted everything.
 */
export function capabilityNotes(summary: RunScopeSummary): string {
  const limits = scopeLimitations(summary);
  if (limits.length === 0) return DEFAULT_CAPABILITY_NOTES;
  return "This run is confined by Deno permissions. It may not:\n" +
    limits.map((l) => `- ${l}`).join("\n") +
    "\n\nTools that cannot work at all are not offered. An operation outside these limits " +
    "fails with an error naming the flag that would allow it: do not retry it or look for a " +
    "way around it; tell the user which flag is needed if the task requires it. What is " +
    "allowed takes effect on the user's real system immediately, so be careful.";
}

/** Human-readable lines describing the scope, for `kimi info`. */
export function describeRunScope(summary: RunScopeSummary): string[] {
  return ACCESS_KINDS.map((kind) => {
    const k = summary[kind];
    const parts: string[] = [k.level];
    if (k.granted.length > 0) parts.push(`allowed: ${k.granted.join(", ")}`);
    if (k.level !== "all" && k.denied.length > 0) parts.push(`denied: ${k.denied.join(", ")}`);
    return `${kind}: ${parts.join("; ")}`;
  });
}

/** `host[:port]` of a URL, or `null` when it is not a URL. */
export function urlHost(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}
