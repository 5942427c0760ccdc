/**
 * The OAuth token store and manager: file layout and permissions, key sanitizing, refresh
 * thresholds, one refresh for concurrent callers, and a rejected refresh token not retried.
 */
import { assert, assertEquals, assertRejects } from "../../helpers/assert.ts";
import { startMockKimiCode } from "../../helpers/mock_kimi_code.ts";
import {
  credentialsPath,
  loadToken,
  saveToken,
  type StoredToken,
} from "../../../lib/auth/credentials.ts";
import {
  needsRefresh,
  OAuthTokenManager,
  refreshThreshold,
} from "../../../lib/auth/token_manager.ts";
import { OAuthUnauthorized } from "../../../lib/auth/oauth_http.ts";

const KEY = "oauth/kimi-code";

function token(pair: { access_token: string; refresh_token: string }, inS: number): StoredToken {
  return {
    ...pair,
    expires_at: Date.now() / 1000 + inS,
    scope: "kimi-code",
    token_type: "Bearer",
    expires_in: 3600,
  };
}

Deno.test("credentials: reference layout, mode 600, keys cannot leave the directory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assertEquals(credentialsPath(dir, "oauth/kimi-code"), `${dir}/credentials/kimi-code.json`);
    assertEquals(credentialsPath(dir, "oauth/../../etc/passwd"), `${dir}/credentials/passwd.json`);
    assertEquals(credentialsPath(dir, "oauth/.."), `${dir}/credentials/_.json`);
    await saveToken(dir, KEY, token({ access_token: "a", refresh_token: "r" }, 100));
    assertEquals((await Deno.stat(`${dir}/credentials/kimi-code.json`)).mode! & 0o777, 0o600);
    assertEquals((await loadToken(dir, KEY))?.access_token, "a");
    await Deno.writeTextFile(`${dir}/credentials/kimi-code.json`, "not json");
    assertEquals(await loadToken(dir, KEY), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("refresh threshold: max(300 s, half the lifetime)", () => {
  assertEquals(refreshThreshold(3600), 1800);
  assertEquals(refreshThreshold(400), 300);
  assertEquals(refreshThreshold(0), 300);
  const now = 1_000_000;
  const t = { ...token({ access_token: "a", refresh_token: "r" }, 0), expires_in: 3600 };
  assertEquals(needsRefresh({ ...t, expires_at: now + 1801 }, now), false);
  assertEquals(needsRefresh({ ...t, expires_at: now + 1799 }, now), true);
  assertEquals(needsRefresh({ ...t, expires_at: 0 }, now), false);
});

Deno.test("manager: concurrent 401 refreshes make one request; a rejected token is not retried", async () => {
  const dir = await Deno.makeTempDir();
  const kc = await startMockKimiCode();
  try {
    const getEnv = (k: string) => (k === "KIMI_CODE_OAUTH_HOST" ? kc.oauthHost : undefined);
    const m = new OAuthTokenManager({ shareDir: dir, getEnv });
    await saveToken(dir, KEY, token(kc.issue(), 3600));
    assertEquals(await m.accessToken(KEY), "kc-access-1-secret");
    const [a, b] = await Promise.all([
      m.refreshAfterUnauthorized(KEY),
      m.refreshAfterUnauthorized(KEY),
    ]);
    assertEquals([a, b], ["kc-access-2-secret", "kc-access-2-secret"]);
    const refreshes = () => kc.requests.filter((r) => r.body.grant_type === "refresh_token").length;
    assertEquals(refreshes(), 1);
    assertEquals((await loadToken(dir, KEY))?.refresh_token, "kc-refresh-2-secret");

    kc.validRefresh.clear();
    await assertRejects(() => m.refreshAfterUnauthorized(KEY), OAuthUnauthorized);
    assertEquals(refreshes(), 2);
    // the rejected login is no longer offered, and not sent to the host again
    assertEquals(await m.accessToken(KEY), "");
    await assertRejects(() => m.refreshAfterUnauthorized(KEY), OAuthUnauthorized);
    assertEquals(refreshes(), 2);
    // a new login (another refresh token on disk) is used at once
    await saveToken(dir, KEY, token(kc.issue(), 3600));
    assertEquals(await m.accessToken(KEY), "kc-access-3-secret");
    assert(!(await Deno.readTextFile(`${dir}/credentials/kimi-code.json`)).includes("kc-access-2"));
  } finally {
    await kc.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("oauthHostFromConfig: the OAuth host only for a model behind a login", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { oauthHostFromConfig } = await import("../../../lib/sandbox/model_host.ts");
    await Deno.writeTextFile(
      `${dir}/config.toml`,
      [
        'default_model = "kimi-code/k"',
        '[models."kimi-code/k"]',
        'provider = "managed:kimi-code"',
        'model = "k"',
        "max_context_size = 1000",
        "[models.plain]",
        'provider = "plain"',
        'model = "p"',
        "max_context_size = 1000",
        '[providers."managed:kimi-code"]',
        'type = "kimi"',
        'base_url = "https://api.kimi.com/coding/v1"',
        'api_key = ""',
        'oauth = { storage = "file", key = "oauth/kimi-code" }',
        "[providers.plain]",
        'type = "kimi"',
        'base_url = "https://api.moonshot.ai/v1"',
        'api_key = "k"',
        "",
      ].join("\n"),
    );
    const getEnv = (_: string) => undefined;
    assertEquals(await oauthHostFromConfig({ shareDir: dir, getEnv }), "auth.kimi.com");
    assertEquals(await oauthHostFromConfig({ shareDir: dir, getEnv, modelAlias: "plain" }), null);
    assertEquals(
      await oauthHostFromConfig({
        shareDir: dir,
        getEnv: (k) => (k === "KIMI_OAUTH_HOST" ? "http://127.0.0.1:8080" : undefined),
      }),
      "127.0.0.1:8080",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
