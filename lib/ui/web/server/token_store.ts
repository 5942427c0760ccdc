/**
 * The access token of `kimi web`: persisted in `<share>/web/token` (mode 0600, a control path
 * no tool can read), created on first start, reused across restarts, replaced by
 * `kimi web rotate-token`. A running server notices a replaced file at its next request (the
 * file's identity is checked on every use), so a rotation takes effect at once.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { join } from "node:path";
import { atomicWriteText } from "../../../fs/atomic_write.ts";
import { log } from "../../../log.ts";

/** The share-dir entry holding `kimi web`'s state (its token). */
export const WEB_DIR_NAME = "web";

/** Path of the token file in a share dir. */
export function tokenPath(shareDir: string): string {
  return join(shareDir, WEB_DIR_NAME, "token");
}

/** A fresh token: 32 random bytes, base64url (43 characters). */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** Write `token` to the token file (directory 0700, file 0600, replaced atomically). */
export async function writeToken(shareDir: string, token: string): Promise<void> {
  const path = tokenPath(shareDir);
  await Deno.mkdir(join(shareDir, WEB_DIR_NAME), { recursive: true, mode: 0o700 });
  await Deno.chmod(join(shareDir, WEB_DIR_NAME), 0o700).catch(() => {});
  await atomicWriteText(path, token + "\n", { mode: 0o600 });
}

/** Replace the persisted token with a new one (`kimi web rotate-token`); resolves with it. */
export async function rotateToken(shareDir: string): Promise<string> {
  const token = newToken();
  await writeToken(shareDir, token);
  return token;
}

/** Whether two strings are equal, in time independent of where they differ. */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** The file's identity: a change means the token may have been replaced. */
function identity(info: Deno.FileInfo): string {
  return `${info.ino}:${info.mtime?.getTime()}:${info.size}`;
}

/** The token a running server accepts, kept in step with its file. */
export class TokenStore {
  readonly #path: string;
  #token: string;
  #identity: string;

  private constructor(path: string, token: string, id: string) {
    this.#path = path;
    this.#token = token;
    this.#identity = id;
  }

  /**
   * Open the token of `shareDir`: `fixed` (`--auth-token`) is written to the file and used;
   * otherwise the persisted token, or a new one written now.
   */
  static async open(shareDir: string, fixed?: string): Promise<TokenStore> {
    const path = tokenPath(shareDir);
    let token = fixed?.trim() ?? "";
    if (!token) token = (await readTokenFile(path)) ?? "";
    if (fixed !== undefined || !token) {
      if (!token) token = newToken();
      await writeToken(shareDir, token);
    } else {
      // tighten a file left readable by others (e.g. restored from a backup)
      await Deno.chmod(path, 0o600).catch(() => {});
    }
    return new TokenStore(path, token, identity(await Deno.stat(path)));
  }

  /** The token now accepted (re-read when the file was replaced). */
  current(): string {
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(this.#path);
    } catch {
      return this.#token; // removed: keep serving with the token in use
    }
    const id = identity(info);
    if (id === this.#identity) return this.#token;
    this.#identity = id;
    if (info.mode !== null && (info.mode & 0o077) !== 0) {
      log("WARNING", "web", `${this.#path} is readable by other users: its new token is ignored`);
      return this.#token;
    }
    try {
      const text = Deno.readTextFileSync(this.#path).trim();
      if (text) this.#token = text;
    } catch (err) {
      log("WARNING", "web", `could not re-read ${this.#path}: ${(err as Error).message}`);
    }
    return this.#token;
  }

  /** Whether `given` is the current token (constant-time compare). */
  accepts(given: string): boolean {
    return tokensEqual(given, this.current());
  }
}

async function readTokenFile(path: string): Promise<string | null> {
  try {
    const text = (await Deno.readTextFile(path)).trim();
    return text || null;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}
