/**
 * Providers whose credentials come from an OAuth login (`oauth` references, e.g.
 * `managed:kimi-code`): each request is sent with the current access token, refreshed before
 * expiry by the token source; a 401 forces one refresh and one retry; a login that cannot be
 * refreshed becomes {@link AuthExpiredError}.
 *
 * @module
 */
import { APIStatusError, AuthExpiredError } from "./errors.ts";
import type { ChatProvider, ChatRequest, ChatStream, ThinkingEffort } from "./provider.ts";

/** Where access tokens come from (implemented over the credentials store). */
export interface AccessTokenSource {
  /** The token to send now ("" when there is no usable login). */
  accessToken(): Promise<string>;
  /** A fresh token after a 401; throws when the login cannot be refreshed. */
  refreshAfterUnauthorized(): Promise<string>;
}

/** Options of {@link createOAuthProvider}. */
export interface OAuthProviderOptions {
  /** Builds the real provider for a bearer token. */
  build: (apiKey: string) => ChatProvider;
  /** Token source. */
  tokens: AccessTokenSource;
  /** The provider's configured `api_key`, used when there is no login. */
  fallbackApiKey: string;
}

/** Wrap a provider so every request carries the current OAuth access token. */
export function createOAuthProvider(opts: OAuthProviderOptions): ChatProvider {
  return new OAuthChatProvider(opts, null, new Map());
}

class OAuthChatProvider implements ChatProvider {
  readonly #opts: OAuthProviderOptions;
  readonly #effort: ThinkingEffort | null;
  readonly #cache: Map<string, ChatProvider>;
  readonly #probe: ChatProvider;

  constructor(
    opts: OAuthProviderOptions,
    effort: ThinkingEffort | null,
    cache: Map<string, ChatProvider>,
  ) {
    this.#opts = opts;
    this.#effort = effort;
    this.#cache = cache;
    this.#probe = this.#providerFor(opts.fallbackApiKey);
  }

  get name(): string {
    return this.#probe.name;
  }

  get modelName(): string {
    return this.#probe.modelName;
  }

  get thinkingEffort(): ThinkingEffort | null {
    return this.#effort ?? this.#probe.thinkingEffort;
  }

  #providerFor(apiKey: string): ChatProvider {
    const cacheKey = `${this.#effort ?? ""}\u0000${apiKey}`;
    let p = this.#cache.get(cacheKey);
    if (!p) {
      p = this.#opts.build(apiKey);
      if (this.#effort !== null) p = p.withThinking(this.#effort);
      // one client per live token: drop the ones of older tokens
      for (const k of this.#cache.keys()) {
        if (k.startsWith(`${this.#effort ?? ""}\u0000`)) this.#cache.delete(k);
      }
      this.#cache.set(cacheKey, p);
    }
    return p;
  }

  async generate(request: ChatRequest): Promise<ChatStream> {
    const token = await this.#opts.tokens.accessToken();
    const key = token || this.#opts.fallbackApiKey;
    if (!key) throw new AuthExpiredError();
    try {
      return await this.#providerFor(key).generate(request);
    } catch (err) {
      if (!isUnauthorized(err) || request.signal?.aborted) throw err;
      if (!token) throw new AuthExpiredError({ cause: err });
    }
    let fresh: string;
    try {
      fresh = await this.#opts.tokens.refreshAfterUnauthorized();
    } catch (cause) {
      throw new AuthExpiredError({ cause });
    }
    try {
      return await this.#providerFor(fresh).generate(request);
    } catch (err) {
      if (isUnauthorized(err)) throw new AuthExpiredError({ cause: err });
      throw err;
    }
  }

  withThinking(effort: ThinkingEffort): ChatProvider {
    return new OAuthChatProvider(this.#opts, effort, this.#cache);
  }
}

function isUnauthorized(err: unknown): boolean {
  return err instanceof APIStatusError && err.statusCode === 401 &&
    !(err instanceof AuthExpiredError);
}
