/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * The page's access to the server: the token (taken from the `#token=` fragment once, then kept
 * in session and local storage, never in the address bar), JSON requests with the bearer
 * header, uploads, and URLs for the few GET cases where a browser cannot send a header
 * (WebSocket, image and download links) which carry the token as a query parameter.
 *
 * @module
 */

const TOKEN_KEY = "kimi.token";

/** The server refused the token (401), or none is known. */
export class AuthError extends Error {
  /** Create the error. */
  constructor(message: string) {
    super(message);
    this.name = "AuthError";
  }
}

/** A request failed with an HTTP status; `message` is the server's `detail`. */
export class ApiError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** Create the error. */
  constructor(status: number, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

/**
 * Move a `#token=` in the address bar into storage and out of the URL (history entry replaced,
 * so it is not left in the back list either). Returns the token now known, if any.
 */
export function adoptTokenFromLocation(): string | null {
  const hash = location.hash.replace(/^#/, "");
  const params = new URLSearchParams(hash);
  const fromHash = params.get("token");
  if (fromHash) {
    saveToken(fromHash);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(
      history.state,
      "",
      location.pathname + location.search + (rest ? `#${rest}` : ""),
    );
  }
  return currentToken();
}

/** The stored token, if any. */
export function currentToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** Keep a token for this tab and later visits. */
export function saveToken(token: string): void {
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
    localStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage disabled: the token lives only as long as this page.
  }
}

/** Forget the token (it was refused). */
export function clearToken(): void {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(TOKEN_KEY);
  } catch {
    // Nothing stored.
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = currentToken();
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

async function failure(res: Response): Promise<Error> {
  let detail = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (typeof body?.detail === "string") detail = body.detail;
    else if (Array.isArray(body?.detail)) {
      detail = body.detail.map((d: { msg?: string }) => d.msg ?? "").join("; ");
    } else if (typeof body?.error === "string") detail = body.error;
  } catch {
    // Not JSON.
  }
  if (res.status === 401) return new AuthError(detail);
  return new ApiError(res.status, detail);
}

/** The server could not be reached at all (it stopped, or the network is down). */
export class NetworkError extends Error {
  /** Create one. */
  constructor() {
    super(
      "Cannot reach the kimi server: it stopped or the network is down. Start it again; this page reconnects by itself.",
    );
    this.name = "NetworkError";
  }
}

/** `fetch`, with a failure to reach the server as a {@link NetworkError}. */
async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch (err) {
    // fetch rejects with a TypeError ("Failed to fetch") when no answer came at all.
    if (err instanceof TypeError) throw new NetworkError();
    throw err;
  }
}

/**
 * Send a JSON request; resolves to the parsed body. Throws {@link AuthError} on 401 and
 * {@link NetworkError} when the server cannot be reached.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await send(path, {
    method,
    headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res);
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as T;
}

/** GET a binary body (a download); throws {@link AuthError} on 401, else the server's detail. */
export async function apiBlob(path: string): Promise<Blob> {
  const res = await fetch(path, { headers: headers() });
  if (!res.ok) throw await failure(res);
  return await res.blob();
}

/** Upload one file to a session (`POST /api/sessions/{id}/files`, multipart `file`). */
export async function uploadFile(
  sessionId: string,
  file: File,
): Promise<{ path: string; filename: string; size: number }> {
  const form = new FormData();
  form.append("file", file, file.name || "pasted.png");
  const res = await send(`/api/sessions/${sessionId}/files`, {
    method: "POST",
    headers: headers(),
    body: form,
  });
  if (!res.ok) throw await failure(res);
  return await res.json();
}

/** A same-origin URL with the token as a query parameter (links, images, the WebSocket). */
export function tokenUrl(path: string): string {
  const token = currentToken();
  if (!token) return path;
  return `${path}${path.includes("?") ? "&" : "?"}token=${encodeURIComponent(token)}`;
}

/** The WebSocket URL of a session's stream. */
export function streamUrl(sessionId: string): string {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${location.host}${tokenUrl(`/api/sessions/${sessionId}/stream`)}`;
}
