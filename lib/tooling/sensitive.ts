/**
 * Sensitive-file detection: files that likely hold secrets (`.env`, SSH private keys, cloud
 * credentials, and this program's own `config.toml` and `credentials/` in the share dir) are
 * never read by the file tools and are dropped from Grep results.
 *
 * @module
 */
import { basename, join } from "node:path";
import { isWithin } from "./workspace.ts";

/** `.env.*` files that are templates, not secrets. */
const EXEMPT_NAMES = new Set([".env.example", ".env.sample", ".env.template"]);
/** File names that are sensitive wherever they are. */
const SENSITIVE_NAMES = new Set([".env", "id_rsa", "id_ed25519", "id_ecdsa", "credentials"]);
/** Path suffixes that are sensitive. */
const SENSITIVE_SUFFIXES = [".aws/credentials", ".gcp/credentials"];

/** Options of {@link isSensitiveFile}. */
export interface SensitiveOptions {
  /**
   * The share dir (canonical). Its `config.toml` and everything under its `credentials/` are
   * sensitive too; only absolute paths can match it.
   */
  shareDir?: string;
}

/** Whether a path (absolute or relative) names a file that likely holds secrets. */
export function isSensitiveFile(path: string, opts: SensitiveOptions = {}): boolean {
  const name = basename(path);
  if (!EXEMPT_NAMES.has(name)) {
    if (SENSITIVE_NAMES.has(name) || name.startsWith(".env.")) return true;
    for (const suffix of SENSITIVE_SUFFIXES) {
      if (path.endsWith(suffix) || path.includes("/" + suffix)) return true;
    }
  }
  if (opts.shareDir && path.startsWith("/")) {
    if (path === join(opts.shareDir, "config.toml")) return true;
    if (isWithin(path, join(opts.shareDir, "credentials"))) return true;
  }
  return false;
}

/** The ReadFile error message for a sensitive file, quoting the path as the model gave it. */
export function sensitiveFileMessage(shownPath: string): string {
  return `\`${shownPath}\` appears to contain secrets (matched sensitive file pattern). ` +
    "Reading this file is blocked to protect credentials.";
}

/** The note Grep adds when it dropped sensitive files from its results. */
export function sensitiveFileWarning(paths: readonly string[]): string {
  const names = [...new Set(paths.map((p) => basename(p)))].sort();
  let list = names.slice(0, 5).join(", ");
  if (names.length > 5) list += `, ... (${names.length} files total)`;
  return `Skipped ${paths.length} sensitive file(s) (${list}) to protect secrets. ` +
    "These files may contain credentials or private keys.";
}
