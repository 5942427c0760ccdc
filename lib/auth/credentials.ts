/**
 * OAuth tokens on disk, in the reference's layout: `<share>/credentials/<name>.json` where
 * `<name>` is the last segment of the key (`oauth/kimi-code` → `kimi-code.json`), written
 * atomically with mode 600, plus `<name>.lock` coordinating refreshes across processes.
 *
 * @module
 */
import { join } from "node:path";
import * as z from "zod";
import { atomicWriteText } from "../fs/atomic_write.ts";

/** A stored token set (field order as the reference writes it). */
export const StoredTokenSchema = z.object({
  access_token: z.string().catch(""),
  refresh_token: z.string().catch(""),
  expires_at: z.number().catch(0),
  scope: z.string().catch(""),
  token_type: z.string().catch(""),
  expires_in: z.number().catch(0),
});
/** A stored token set; `expires_at` is in seconds since the epoch. */
export type StoredToken = z.infer<typeof StoredTokenSchema>;

/** A token response of the OAuth host (`/api/oauth/token`). */
export interface TokenResponse {
  /** Bearer token. */
  access_token: string;
  /** Token to get the next access token. */
  refresh_token: string;
  /** Lifetime of the access token in seconds. */
  expires_in: number;
  /** Granted scope. */
  scope?: string;
  /** Usually `Bearer`. */
  token_type?: string;
}

/** The stored form of a token response received at `now` (ms). */
export function tokenFromResponse(res: TokenResponse, now = Date.now()): StoredToken {
  const expiresIn = Number(res.expires_in) || 0;
  return {
    access_token: String(res.access_token),
    refresh_token: String(res.refresh_token ?? ""),
    expires_at: now / 1000 + expiresIn,
    scope: String(res.scope ?? ""),
    token_type: String(res.token_type ?? "Bearer"),
    expires_in: expiresIn,
  };
}

function fileName(key: string): string {
  const parts = key.replace(/^oauth\//, "").split("/");
  const name = parts[parts.length - 1] || key;
  // a key is config data: never let it name a path outside the credentials dir
  return name.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
}

/** `<share>/credentials`. */
export function credentialsDir(shareDir: string): string {
  return join(shareDir, "credentials");
}

/** The token file of a key. */
export function credentialsPath(shareDir: string, key: string): string {
  return join(credentialsDir(shareDir), `${fileName(key)}.json`);
}

/** The lock file of a key. */
export function credentialsLockPath(shareDir: string, key: string): string {
  return join(credentialsDir(shareDir), `${fileName(key)}.lock`);
}

/** The stored token of a key, or null when there is none (or it is unreadable). */
export async function loadToken(shareDir: string, key: string): Promise<StoredToken | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(credentialsPath(shareDir, key));
  } catch {
    return null;
  }
  try {
    const data = JSON.parse(text);
    if (!data || typeof data !== "object" || Array.isArray(data)) return null;
    return StoredTokenSchema.parse(data);
  } catch {
    return null;
  }
}

/** Store a token atomically with owner-only permissions. */
export async function saveToken(shareDir: string, key: string, token: StoredToken): Promise<void> {
  const dir = credentialsDir(shareDir);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = credentialsPath(shareDir, key);
  await atomicWriteText(path, JSON.stringify(token), { mode: 0o600 });
  try {
    await Deno.chmod(path, 0o600); // the umask may have narrowed, never widened, the mode
  } catch {
    // not supported on this platform
  }
}

/** Delete a stored token (no error when there is none). */
export async function deleteToken(shareDir: string, key: string): Promise<void> {
  try {
    await Deno.remove(credentialsPath(shareDir, key));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/**
 * Run `fn` holding the key's cross-process lock. When the lock cannot be opened (read-only
 * share dir) or is not obtained within `timeoutMs`, `fn` runs anyway: a refresh without the
 * lock is better than none.
 */
export async function withCredentialsLock<T>(
  shareDir: string,
  key: string,
  fn: () => Promise<T>,
  timeoutMs = 10_000,
): Promise<T> {
  let file: Deno.FsFile | null = null;
  try {
    await Deno.mkdir(credentialsDir(shareDir), { recursive: true, mode: 0o700 });
    file = await Deno.open(credentialsLockPath(shareDir, key), {
      read: true,
      write: true,
      create: true,
      mode: 0o600,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const locked = await Promise.race([
      file.lock(true).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!locked) {
      file.close();
      file = null;
    }
  } catch {
    file?.close();
    file = null;
  }
  try {
    return await fn();
  } finally {
    if (file) {
      try {
        await file.unlock();
      } catch {
        // closing releases it too
      }
      file.close();
    }
  }
}
