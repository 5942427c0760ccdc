/**
 * The paths the file routes of `kimi web` read (work-dir browsing, downloads, uploads): the
 * same floor as the file tools — real path resolved (symlinks, `..`, `/proc` aliases), kept
 * inside its root, kimi's control paths and secret files refused, the Deno permission scope
 * checked — plus the stricter rules of public mode (no symlinks, no dot files or key files,
 * a depth limit, sensitive home directories refused).
 *
 * @module
 */
import { join } from "node:path";
import { resolveRealPath } from "../../../fs/real_path.ts";
import { type ControlPath, matchControlPath } from "../../../tooling/control_paths.ts";
import type { PermissionScope } from "../../../tooling/scope.ts";
import { readRefusal } from "../../../tooling/sensitive.ts";
import { isWithin } from "../../../tooling/workspace.ts";

/** A path a route may use, or the HTTP error to answer. */
export type RoutePath =
  | { ok: true; path: string; rel: string }
  | { ok: false; status: 400 | 403 | 404; detail: string };

/** Options of {@link resolveRoutePath}. */
export interface RoutePathOptions {
  /** kimi's control paths for the server's sessions (refused; the secret ones hidden). */
  controls: readonly ControlPath[];
  /** The process's permission scope. */
  scope: PermissionScope;
  /** Public mode's extra rules (`--restrict-sensitive-apis`). */
  restricted: boolean;
  /** Deepest path public mode serves. */
  maxDepth: number;
  /** The user's home (public mode refuses `~/.ssh` and the like). */
  home: string | null;
}

/** The refusal of a path with `..` or an absolute path. */
export const TRAVERSAL_DETAIL = "Invalid path: path traversal not allowed";
const SENSITIVE_NAMES = new Set([
  "id_rsa",
  "id_ed25519",
  "known_hosts",
  "credentials",
  ".aws",
  ".ssh",
  ".gnupg",
  ".kube",
  ".npmrc",
  ".pypirc",
  ".netrc",
]);
const SENSITIVE_SUFFIXES = [".pem", ".key", ".p12", ".pfx", ".kdbx", ".der"];
const SENSITIVE_HOME_DIRS = [".ssh", ".gnupg", ".aws", ".kube"];

/** Whether public mode hides a name (dot files, key files, credential stores). */
export function publicModeHides(name: string): boolean {
  return name.startsWith(".") || SENSITIVE_NAMES.has(name) ||
    SENSITIVE_SUFFIXES.some((s) => name.toLowerCase().endsWith(s));
}

/**
 * Resolve `raw` (relative to `root`; empty or `.` = the root) to the real path a route may
 * read, or the error to answer.
 */
export function resolveRoutePath(root: string, raw: string, opts: RoutePathOptions): RoutePath {
  const rel = raw.replace(/^\.\/?$/, "");
  if (rel.includes("\0")) return { ok: false, status: 400, detail: "Invalid path: NUL byte" };
  const parts = rel.split(/[\\/]/).filter((p) => p !== "" && p !== ".");
  if (rel.startsWith("/") || rel.startsWith("\\") || parts.includes("..")) {
    return { ok: false, status: 400, detail: TRAVERSAL_DETAIL };
  }
  const realRoot = resolveRealPath(root);
  if (!realRoot.ok) return { ok: false, status: 403, detail: `Cannot resolve ${root}` };
  if (opts.restricted) {
    if (parts.length > opts.maxDepth) {
      return {
        ok: false,
        status: 403,
        detail:
          `Path too deep for public access (max depth: ${opts.maxDepth}, current: ${parts.length}).`,
      };
    }
    if (parts.some(publicModeHides)) {
      return { ok: false, status: 403, detail: "Access to sensitive files is disabled." };
    }
    let cur = realRoot.path;
    for (const p of parts) {
      cur = join(cur, p);
      try {
        if (Deno.lstatSync(cur).isSymlink) {
          return {
            ok: false,
            status: 403,
            detail: "Symbolic links are not allowed in public mode.",
          };
        }
      } catch {
        break; // missing: reported below
      }
    }
  }
  const real = resolveRealPath(join(realRoot.path, ...parts));
  if (!real.ok) {
    return real.reason === "symlink"
      ? { ok: false, status: 403, detail: `Path goes through a dangling symlink: ${rel}` }
      : { ok: false, status: 403, detail: `Permission denied: ${rel}` };
  }
  const path = real.path;
  if (!isWithin(path, realRoot.path)) {
    return {
      ok: false,
      status: 403,
      detail: `Path leads outside ${root} (through a symlink): ${rel}`,
    };
  }
  const refusal = readRefusal(path, rel || ".", { controls: opts.controls });
  if (refusal !== null) return { ok: false, status: 403, detail: refusal };
  const cp = matchControlPath(path, opts.controls);
  if (cp && !isWithin(realRoot.path, cp.path)) {
    return { ok: false, status: 403, detail: `\`${rel}\` is ${cp.what}; it is not served.` };
  }
  if (opts.restricted && opts.home) {
    for (const d of SENSITIVE_HOME_DIRS) {
      if (isWithin(path, join(opts.home, d))) {
        return {
          ok: false,
          status: 403,
          detail: "Access to sensitive system directories is not allowed.",
        };
      }
    }
  }
  const decision = opts.scope.check("read", path);
  if (!decision.allowed) return { ok: false, status: 403, detail: decision.message };
  return { ok: true, path, rel };
}

/** Whether a listing shows the entry `name` of the real directory `dir`. */
export function listingShows(dir: string, name: string, opts: RoutePathOptions): boolean {
  if (opts.restricted && publicModeHides(name)) return false;
  const full = join(dir, name);
  const real = resolveRealPath(full);
  const path = real.ok ? real.path : full;
  if (readRefusal(path, name, { controls: opts.controls }) !== null) return false;
  const cp = matchControlPath(path, opts.controls);
  return cp === null || isWithin(dir, cp.path);
}
