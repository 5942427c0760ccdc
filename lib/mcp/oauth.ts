/**
 * OAuth for remote MCP servers with `auth: "oauth"`: an `OAuthClientProvider` for the SDK that
 * keeps the client registration and tokens in `<share>/mcp-oauth/<server>.json` (mode 600,
 * never logged), and the interactive authorization flow with a loopback redirect on 127.0.0.1
 * (`kimi mcp auth`).
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/auth"
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/shared/auth"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { atomicWriteText } from "../fs/atomic_write.ts";

/** What is stored per server. */
interface StoredOAuth {
  tokens?: OAuthTokens;
  clientInformation?: OAuthClientInformationMixed;
  codeVerifier?: string;
}

/** `<share>/mcp-oauth/<server>.json`. */
export function oauthFile(shareDir: string, server: string): string {
  return `${shareDir}/mcp-oauth/${encodeURIComponent(server)}.json`;
}

async function readStore(path: string): Promise<StoredOAuth> {
  try {
    const data = JSON.parse(await Deno.readTextFile(path));
    return data && typeof data === "object" ? data as StoredOAuth : {};
  } catch {
    return {};
  }
}

/** Whether tokens are stored for a server. */
export async function hasOAuthTokens(shareDir: string, server: string): Promise<boolean> {
  const s = await readStore(oauthFile(shareDir, server));
  return typeof s.tokens?.access_token === "string";
}

/** Forget a server's tokens and client registration. */
export async function clearOAuthTokens(shareDir: string, server: string): Promise<void> {
  try {
    await Deno.remove(oauthFile(shareDir, server));
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
}

/** Options of {@link McpOAuthProvider}. */
export interface McpOAuthProviderOptions {
  /** Share dir. */
  shareDir: string;
  /** Server name (the store's key). */
  server: string;
  /** Loopback redirect URL (interactive flow only). */
  redirectUrl?: string;
  /** Called with the authorization URL (interactive flow); absent: authorization fails. */
  onAuthorizationUrl?: (url: URL) => void | Promise<void>;
  /** Expected `state` (interactive flow). */
  state?: string;
}

/** The SDK's OAuth client provider backed by the per-server token file. */
export class McpOAuthProvider implements OAuthClientProvider {
  readonly #opts: McpOAuthProviderOptions;
  readonly #file: string;

  /** Create the provider. */
  constructor(opts: McpOAuthProviderOptions) {
    this.#opts = opts;
    this.#file = oauthFile(opts.shareDir, opts.server);
  }

  /** Loopback redirect URL (undefined outside the interactive flow). */
  get redirectUrl(): string | undefined {
    return this.#opts.redirectUrl;
  }

  /** Metadata for dynamic client registration. */
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Kimi Code CLI",
      redirect_uris: this.#opts.redirectUrl ? [this.#opts.redirectUrl] : [],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  /** The state parameter of the authorization request. */
  state(): string {
    return this.#opts.state ?? crypto.randomUUID();
  }

  async #update(change: (s: StoredOAuth) => void): Promise<void> {
    const s = await readStore(this.#file);
    change(s);
    await Deno.mkdir(`${this.#opts.shareDir}/mcp-oauth`, { recursive: true, mode: 0o700 });
    await atomicWriteText(this.#file, JSON.stringify(s, null, 2), { mode: 0o600 });
  }

  /** The stored client registration. */
  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const info = (await readStore(this.#file)).clientInformation;
    // A registration for another loopback port cannot be used for a new redirect.
    const uris = (info as { redirect_uris?: string[] } | undefined)?.redirect_uris;
    if (info && this.#opts.redirectUrl && uris && !uris.includes(this.#opts.redirectUrl)) {
      return undefined;
    }
    return info;
  }

  /** Store the client registration. */
  saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    return this.#update((s) => {
      s.clientInformation = info;
    });
  }

  /** The stored tokens. */
  async tokens(): Promise<OAuthTokens | undefined> {
    return (await readStore(this.#file)).tokens;
  }

  /** Store tokens. */
  saveTokens(tokens: OAuthTokens): Promise<void> {
    return this.#update((s) => {
      s.tokens = tokens;
    });
  }

  /** Send the user to the authorization page (or fail when not interactive). */
  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.#opts.onAuthorizationUrl) {
      throw new Error(
        `MCP server '${this.#opts.server}' requires authorization - run: kimi mcp auth ${this.#opts.server}`,
      );
    }
    await this.#opts.onAuthorizationUrl(url);
  }

  /** Store the PKCE verifier. */
  saveCodeVerifier(verifier: string): Promise<void> {
    return this.#update((s) => {
      s.codeVerifier = verifier;
    });
  }

  /** The stored PKCE verifier. */
  async codeVerifier(): Promise<string> {
    const v = (await readStore(this.#file)).codeVerifier;
    if (!v) throw new Error("No OAuth code verifier stored; run the authorization again.");
    return v;
  }

  /** Drop stored credentials the server rejected. */
  invalidateCredentials(
    scope: "all" | "client" | "tokens" | "verifier" | "discovery",
  ): Promise<void> {
    return this.#update((s) => {
      if (scope === "all" || scope === "tokens") delete s.tokens;
      if (scope === "all" || scope === "client") delete s.clientInformation;
      if (scope === "all" || scope === "verifier") delete s.codeVerifier;
    });
  }
}

/** Options of {@link authorizeServer}. */
export interface AuthorizeOptions {
  /** Share dir. */
  shareDir: string;
  /** Server name. */
  server: string;
  /** Server URL. */
  url: string;
  /** Shows the authorization URL to the user (and may open a browser). */
  onAuthorizationUrl: (url: URL) => void | Promise<void>;
  /** How long to wait for the redirect (default 5 minutes). */
  timeoutMs?: number;
}

/**
 * Run the OAuth authorization-code flow (PKCE, dynamic registration as the SDK does it) with a
 * loopback redirect server on 127.0.0.1; tokens end up in the store. Resolves when authorized.
 */
export async function authorizeServer(opts: AuthorizeOptions): Promise<void> {
  const state = crypto.randomUUID();
  let onCode!: (code: string) => void;
  let onError!: (err: Error) => void;
  const codeP = new Promise<string>((res, rej) => {
    onCode = res;
    onError = rej;
  });
  const ac = new AbortController();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    signal: ac.signal,
    onListen: () => {},
  }, (req) => {
    const u = new URL(req.url);
    if (u.pathname !== "/callback") return new Response("Not found", { status: 404 });
    const err = u.searchParams.get("error");
    if (err) {
      onError(new Error(`Authorization failed: ${err}`));
      return html("Authorization failed. You can close this window.");
    }
    if (u.searchParams.get("state") !== state) {
      return html("Authorization failed: state mismatch.", 400);
    }
    const code = u.searchParams.get("code");
    if (!code) return html("Authorization failed: no code.", 400);
    onCode(code);
    return html("Authorization complete. You can close this window and return to the terminal.");
  });
  const redirectUrl = `http://127.0.0.1:${server.addr.port}/callback`;
  const provider = new McpOAuthProvider({
    shareDir: opts.shareDir,
    server: opts.server,
    redirectUrl,
    state,
    onAuthorizationUrl: opts.onAuthorizationUrl,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const first = await auth(provider, { serverUrl: opts.url });
    if (first === "AUTHORIZED") return;
    const timeout = new Promise<never>((_, rej) => {
      timer = setTimeout(
        () => rej(new Error("Timed out waiting for the authorization redirect.")),
        opts.timeoutMs ?? 300_000,
      );
    });
    const code = await Promise.race([codeP, timeout]);
    const second = await auth(provider, { serverUrl: opts.url, authorizationCode: code });
    if (second !== "AUTHORIZED") throw new Error("Authorization did not complete.");
  } finally {
    clearTimeout(timer);
    ac.abort();
    await server.finished.catch(() => {});
  }
}

function html(text: string, status = 200): Response {
  return new Response(`<!doctype html><html><body><p>${text}</p></body></html>`, {
    status,
    headers: { "content-type": "text/html; charset=utf-8" },
  });
}
