/**
 * A mock of the Kimi Code platform on 127.0.0.1 (random port): the OAuth host
 * (`/api/oauth/device_authorization`, `/api/oauth/token` for the device-code and refresh
 * grants) and the API (`/coding/v1/models`, streamed `/coding/v1/chat/completions`,
 * `/coding/v1/search`), which accepts only access tokens it issued and has not revoked.
 *
 * @module
 */

/** What the token endpoint answers to one device-code poll. */
export type DevicePollScript =
  | "ok"
  | "authorization_pending"
  | "slow_down"
  | "expired_token"
  | "access_denied";

/** One request the mock received. */
export interface KimiCodeRequest {
  /** URL path. */
  path: string;
  /** Lower-cased headers. */
  headers: Record<string, string>;
  /** Form fields (OAuth) or JSON body (API). */
  body: Record<string, any>;
}

/** Options of {@link startMockKimiCode}. */
export interface MockKimiCodeOptions {
  /** Poll answers per device authorization, in order (default: `[["ok"]]`). */
  devices?: DevicePollScript[][];
  /** `expires_in` of issued access tokens (default 3600). */
  expiresIn?: number;
  /** Models listed (default one `kimi-for-coding` with 262144 tokens). */
  models?: Record<string, unknown>[];
}

/** A running mock. */
export interface MockKimiCode {
  /** OAuth host (`KIMI_CODE_OAUTH_HOST`). */
  oauthHost: string;
  /** API base URL (`KIMI_CODE_BASE_URL`). */
  baseUrl: string;
  /** Every request. */
  requests: KimiCodeRequest[];
  /** Access tokens currently accepted. */
  validAccess: Set<string>;
  /** Refresh tokens currently accepted. */
  validRefresh: Set<string>;
  /** Status `/coding/v1/feedback` answers an authorized request with (default 200). */
  feedbackStatus: number;
  /** Issue a token pair directly (as if a login happened earlier). */
  issue(): { access_token: string; refresh_token: string };
  /** Stop the server. */
  close(): Promise<void>;
}

/** Start the mock. */
export async function startMockKimiCode(opts: MockKimiCodeOptions = {}): Promise<MockKimiCode> {
  const devices = (opts.devices ?? [["ok"]]).map((s) => [...s]);
  const requests: KimiCodeRequest[] = [];
  const validAccess = new Set<string>();
  const validRefresh = new Set<string>();
  const scripts = new Map<string, DevicePollScript[]>();
  let n = 0;
  const issue = () => {
    n++;
    const pair = { access_token: `kc-access-${n}-secret`, refresh_token: `kc-refresh-${n}-secret` };
    validAccess.add(pair.access_token);
    validRefresh.add(pair.refresh_token);
    return pair;
  };
  const tokenBody = (pair: { access_token: string; refresh_token: string }) => ({
    ...pair,
    expires_in: opts.expiresIn ?? 3600,
    scope: "kimi-code",
    token_type: "Bearer",
  });
  const ready = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => ready.resolve(port) },
    async (req) => {
      const url = new URL(req.url);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      const text = req.method === "GET" ? "" : await req.text();
      let body: Record<string, any> = {};
      if ((headers["content-type"] ?? "").includes("x-www-form-urlencoded")) {
        body = Object.fromEntries(new URLSearchParams(text));
      } else if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = {};
        }
      }
      requests.push({ path: url.pathname, headers, body });
      const bearer = (headers.authorization ?? "").replace(/^Bearer /, "");
      const unauthorized = () =>
        Response.json({
          error: { message: "Invalid Authentication", type: "invalid_authentication_error" },
        }, {
          status: 401,
        });

      switch (url.pathname) {
        case "/api/oauth/device_authorization": {
          const script = devices.shift() ?? ["ok"];
          const code = `device-${requests.length}`;
          scripts.set(code, script);
          const user = `USER-${scripts.size}`;
          return Response.json({
            device_code: code,
            user_code: user,
            verification_uri: `http://127.0.0.1:${port}/device`,
            verification_uri_complete: `http://127.0.0.1:${port}/device?user_code=${user}`,
            expires_in: 600,
            interval: 1,
          });
        }
        case "/api/oauth/token": {
          if (body.grant_type === "refresh_token") {
            if (!validRefresh.has(body.refresh_token)) {
              return Response.json({
                error: "invalid_grant",
                error_description: "refresh token revoked",
              }, {
                status: 401,
              });
            }
            validRefresh.delete(body.refresh_token);
            return Response.json(tokenBody(issue()));
          }
          const script = scripts.get(body.device_code);
          if (!script) return Response.json({ error: "invalid_grant" }, { status: 400 });
          const next = script.length > 1 ? script.shift()! : script[0];
          if (next === "ok") {
            scripts.set(body.device_code, ["expired_token"]); // a device code is good once
            return Response.json(tokenBody(issue()));
          }
          return Response.json({ error: next, error_description: `mock ${next}` }, { status: 400 });
        }
        case "/coding/v1/models": {
          if (!validAccess.has(bearer)) return unauthorized();
          return Response.json({
            object: "list",
            data: opts.models ??
              [{
                id: "kimi-for-coding",
                context_length: 262144,
                supports_reasoning: true,
                display_name: "Kimi For Coding",
              }],
          });
        }
        case "/coding/v1/usages": {
          if (!validAccess.has(bearer)) return unauthorized();
          return Response.json({
            usage: { limit: 1000, remaining: 250, resetIn: 3 * 86400 + 2 * 3600 },
            limits: [{
              window: { duration: 300, timeUnit: "TIME_UNIT_MINUTE" },
              detail: { limit: 100, used: 10, reset_in: 5400 },
            }],
          });
        }
        case "/coding/v1/feedback": {
          if (!validAccess.has(bearer)) return unauthorized();
          const status = mock.feedbackStatus;
          return Response.json(status < 300 ? {} : { error: "mock failure" }, { status });
        }
        case "/coding/v1/search": {
          if (!validAccess.has(bearer)) return unauthorized();
          return Response.json({
            search_results: [{
              site_name: "mock",
              title: "Mock result",
              url: "https://example.com/r",
              snippet: "found it",
            }],
          });
        }
        case "/coding/v1/chat/completions": {
          if (!validAccess.has(bearer)) return unauthorized();
          const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
            `data: ${
              JSON.stringify({
                id: "chatcmpl-kc",
                object: "chat.completion.chunk",
                created: 0,
                model: body.model,
                choices: [{ index: 0, delta, finish_reason: finish }],
              })
            }\n\n`;
          const last = body.messages?.at(-1);
          // "search ..." from the user → a SearchWeb call; its result → a summary; else hello
          const toolMsg = body.messages?.find((m: any) => m.role === "tool");
          const delta = !toolMsg && JSON.stringify(last?.content ?? "").includes("search the web")
            ? {
              role: "assistant",
              tool_calls: [{
                index: 0,
                id: "call_search",
                type: "function",
                function: { name: "SearchWeb", arguments: '{"query":"mock"}' },
              }],
            }
            : toolMsg
            ? {
              role: "assistant",
              content: `searched: ${JSON.stringify(toolMsg.content).includes("Mock result")}`,
            }
            : { role: "assistant", content: "hello from kimi code" };
          const sse = chunk(delta) + chunk({}, "stop") + "data: [DONE]\n\n";
          return new Response(sse, { headers: { "content-type": "text/event-stream" } });
        }
      }
      return Response.json({ error: `no route ${url.pathname}` }, { status: 404 });
    },
  );
  const port = await ready.promise;
  const mock: MockKimiCode = {
    oauthHost: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/coding/v1`,
    requests,
    validAccess,
    validRefresh,
    feedbackStatus: 200,
    issue,
    close: () => server.shutdown(),
  };
  return mock;
}
