/**
 * Location of the share dir (`KIMI_SHARE_DIR`, default `~/.kimi`), where config, metadata,
 * sessions and logs live.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { ConfigError } from "./errors.ts";

/** Reads one environment variable; `undefined` when unset or not readable. */
export type EnvReader = (key: string) => string | undefined;

/**
 * Read a variable from the process environment. A variable the program has no permission to
 * read counts as unset instead of throwing.
 */
export function readProcessEnv(key: string): string | undefined {
  try {
    return Deno.env.get(key);
  } catch {
    return undefined;
  }
}

/**
 * The share dir path: `KIMI_SHARE_DIR` when set (a leading `~` expands to the home dir), else
 * `<HOME>/.kimi`. Always absolute. Does not touch the file system.
 *
 * @throws {ConfigError} when neither `KIMI_SHARE_DIR` nor a home dir is known.
 */
export function shareDir(getEnv: EnvReader = readProcessEnv): string {
  const configured = getEnv("KIMI_SHARE_DIR");
  if (configured) {
    if (configured === "~" || configured.startsWith("~/")) {
      return join(homeDir(getEnv), configured.slice(1));
    }
    return resolve(configured);
  }
  return join(homeDir(getEnv), ".kimi");
}

/**
 * The share dir path, created (with parents) when missing.
 *
 * @throws {ConfigError} when the directory cannot be located or created.
 */
export async function ensureShareDir(getEnv: EnvReader = readProcessEnv): Promise<string> {
  const dir = shareDir(getEnv);
  try {
    await Deno.mkdir(dir, { recursive: true });
  } catch (err) {
    throw new ConfigError(
      `Cannot create the share directory ${dir}: ${describeFsError(err)}. ` +
        "Set KIMI_SHARE_DIR to a writable directory.",
      { cause: err },
    );
  }
  return dir;
}

function homeDir(getEnv: EnvReader): string {
  const home = getEnv("HOME") || getEnv("USERPROFILE");
  if (!home) {
    throw new ConfigError(
      "Cannot locate the home directory: HOME is not set. Set HOME or KIMI_SHARE_DIR.",
    );
  }
  return resolve(home);
}

/** Short, secret-free description of a file-system error. */
export function describeFsError(err: unknown): string {
  if (err instanceof Deno.errors.NotCapable) return "permission to access it was not granted";
  if (err instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (err instanceof Deno.errors.NotFound) return "no such file or directory";
  if (err instanceof Deno.errors.IsADirectory) return "it is a directory";
  if (err instanceof Error) return err.message;
  return String(err);
}
