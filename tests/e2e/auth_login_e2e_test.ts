/**
 * `kimi login` / `kimi logout` end to end against a mock Kimi Code platform, then model and
 * service calls carrying the login's access token, refresh before expiry and after a 401, and
 * an unrecoverable login surfacing in print mode and as wire error -32004.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import {
  type DevicePollScript,
  type MockKimiCode,
  startMockKimiCode,
} from "../helpers/mock_kimi_code.ts";
import { spawnWire } from "../helpers/wire_process.ts";
import { parse as parseToml } from "smol-toml";

const AUTH_EXPIRED =
  'Authentication failed. Your login session may have expired. Please run "/login" to sign in again.';

const jsonLines = (s: string) => s.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

async function setup(devices?: DevicePollScript[][]): Promise<{
  sb: KimiSandbox;
  kc: MockKimiCode;
  env: Record<string, string>;
}> {
  const sb = await kimiSandbox();
  const kc = await startMockKimiCode({ devices });
  return { sb, kc, env: { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl } };
}

async function readConfig(sb: KimiSandbox): Promise<any> {
  return JSON.parse(
    JSON.stringify(parseToml(await Deno.readTextFile(`${sb.shareDir}/config.toml`))),
  );
}

async function credentials(sb: KimiSandbox): Promise<{ mode: number; data: any }> {
  const path = `${sb.shareDir}/credentials/kimi-code.json`;
  const info = await Deno.stat(path);
  return { mode: info.mode! & 0o777, data: JSON.parse(await Deno.readTextFile(path)) };
}

/** Store a login as `kimi login` would, with the given expiry (seconds from now). */
async function storeLogin(
  sb: KimiSandbox,
  kc: MockKimiCode,
  env: Record<string, string>,
  expiresInS: number,
): Promise<{ access_token: string; refresh_token: string }> {
  const r = await sb.run(["login", "--json"], { env });
  assertEquals(r.code, 0, r.stdout + r.stderr);
  const cred = await credentials(sb);
  cred.data.expires_at = Date.now() / 1000 + expiresInS;
  await Deno.writeTextFile(`${sb.shareDir}/credentials/kimi-code.json`, JSON.stringify(cred.data));
  kc.requests.length = 0;
  return cred.data;
}

const chatRequests = (kc: MockKimiCode) =>
  kc.requests.filter((r) => r.path === "/coding/v1/chat/completions");
const refreshRequests = (kc: MockKimiCode) =>
  kc.requests.filter((r) => r.path === "/api/oauth/token" && r.body.grant_type === "refresh_token");

Deno.test("login --json: device flow with pending and slow_down, config, 0600 credentials, no token printed", async () => {
  const { sb, kc, env } = await setup([["authorization_pending", "slow_down", "ok"]]);
  try {
    const r = await sb.run(["login", "--json"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    const events = jsonLines(r.stdout);
    assertEquals(events.map((e) => e.type), [
      "info",
      "verification_url",
      "waiting",
      "success",
    ]);
    assertEquals(events[0].message, "Please visit the following URL to finish authorization.");
    const url = `${kc.oauthHost}/device?user_code=USER-1`;
    assertEquals(events[1], {
      type: "verification_url",
      message: `Verification URL: ${url}`,
      data: { verification_url: url, user_code: "USER-1" },
    });
    assertEquals(events[2], {
      type: "waiting",
      message: "Waiting for user authorization...: mock authorization_pending",
      data: { error: "authorization_pending", error_description: "mock authorization_pending" },
    });
    assertEquals(events[3], { type: "success", message: "Logged in successfully." });

    // RFC 8628 requests with the reference's client id and the device headers
    const auth = kc.requests[0];
    assertEquals(auth.path, "/api/oauth/device_authorization");
    assertEquals(auth.body, { client_id: "17e5f671-d194-4dfb-9706-5516cb48c098" });
    assertEquals(auth.headers["x-msh-platform"], "kimi_cli");
    assert(/^[0-9a-f]{32}$/.test(auth.headers["x-msh-device-id"]));
    const polls = kc.requests.filter((q) => q.path === "/api/oauth/token");
    assertEquals(polls.length, 3);
    assertEquals(polls[0].body.grant_type, "urn:ietf:params:oauth:grant-type:device_code");
    assertEquals(polls[0].body.device_code, "device-1");

    const cred = await credentials(sb);
    assertEquals(cred.mode, 0o600);
    assertEquals(cred.data.access_token, "kc-access-1-secret");
    assertEquals(cred.data.refresh_token, "kc-refresh-1-secret");
    assertEquals(cred.data.expires_in, 3600);
    assert(Math.abs(cred.data.expires_at - (Date.now() / 1000 + 3600)) < 120);
    assertEquals((await Deno.stat(`${sb.shareDir}/device_id`)).mode! & 0o777, 0o600);

    const config = await readConfig(sb);
    assertEquals(config.default_model, "kimi-code/kimi-for-coding");
    assertEquals(config.default_thinking, true);
    assertEquals(config.providers["managed:kimi-code"], {
      type: "kimi",
      base_url: kc.baseUrl,
      api_key: "",
      oauth: { storage: "file", key: "oauth/kimi-code" },
    });
    assertEquals(config.models["kimi-code/kimi-for-coding"], {
      provider: "managed:kimi-code",
      model: "kimi-for-coding",
      max_context_size: 262144,
      capabilities: ["thinking"],
      display_name: "Kimi For Coding",
    });
    assertEquals(config.services.moonshot_search, {
      base_url: `${kc.baseUrl}/search`,
      api_key: "",
      oauth: { storage: "file", key: "oauth/kimi-code" },
    });
    assertEquals(config.services.moonshot_fetch.base_url, `${kc.baseUrl}/fetch`);
    for (const secret of ["kc-access-1-secret", "kc-refresh-1-secret", "device-1"]) {
      assert(!r.stdout.includes(secret) && !r.stderr.includes(secret), `${secret} printed`);
      assert(!(await Deno.readTextFile(`${sb.shareDir}/config.toml`)).includes(secret));
    }
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("login: an expired device code restarts the flow; text output shows URL and code", async () => {
  const { sb, kc, env } = await setup([["expired_token"], ["ok"]]);
  try {
    const r = await sb.run(["login"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(r.stdout.split("\n").filter(Boolean), [
      "Please visit the following URL to finish authorization.",
      `Verification URL: ${kc.oauthHost}/device?user_code=USER-1`,
      "User code: USER-1",
      "Device code expired, restarting login...",
      "Please visit the following URL to finish authorization.",
      `Verification URL: ${kc.oauthHost}/device?user_code=USER-2`,
      "User code: USER-2",
      "Logged in successfully.",
    ]);
    assertEquals((await credentials(sb)).data.access_token, "kc-access-1-secret");
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("login: access_denied fails with exit 1 and stores nothing", async () => {
  const { sb, kc, env } = await setup([["authorization_pending", "access_denied"]]);
  try {
    const r = await sb.run(["login", "--json"], { env });
    assertEquals(r.code, 1);
    const events = jsonLines(r.stdout);
    assertEquals(events.at(-1), {
      type: "error",
      message: "Login failed: the authorization request was denied (access_denied).",
    });
    let exists = true;
    await Deno.stat(`${sb.shareDir}/credentials/kimi-code.json`).catch(() => (exists = false));
    assertEquals(exists, false);
    const config = await readConfig(sb);
    assertEquals(config.providers?.["managed:kimi-code"], undefined);
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("login: an unreachable OAuth host is a clear error", async () => {
  const sb = await kimiSandbox();
  try {
    const r = await sb.run(["login", "--json"], {
      env: { KIMI_OAUTH_HOST: "http://127.0.0.1:9" },
    });
    assertEquals(r.code, 1);
    const [e] = jsonLines(r.stdout);
    assertEquals(e.type, "error");
    assertStringIncludes(
      e.message,
      "Login failed: cannot reach http://127.0.0.1:9/api/oauth/device_authorization",
    );
  } finally {
    await sb.cleanup();
  }
});

Deno.test("after login: print turn sends the access token and device headers; SearchWeb too", async () => {
  const { sb, kc, env } = await setup();
  try {
    const login = await sb.run(["login", "--json"], { env });
    assertEquals(login.code, 0, login.stdout);
    kc.requests.length = 0;
    const r = await sb.run(["--quiet", "-p", "hi"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(r.stdout.trim(), "hello from kimi code");
    const [chat] = chatRequests(kc);
    assertEquals(chat.headers.authorization, "Bearer kc-access-1-secret");
    assert(/^[0-9a-f]{32}$/.test(chat.headers["x-msh-device-id"]));
    assertEquals(chat.body.model, "kimi-for-coding");
    assertEquals(refreshRequests(kc).length, 0);
    // the search service is offered (it has a login) and authenticates with the same token
    assert(chat.body.tools.some((t: any) => t.function?.name === "SearchWeb"));
    const s = await sb.run(["--quiet", "-p", "search the web"], { env });
    assertEquals(s.code, 0, s.stdout + s.stderr);
    assertEquals(s.stdout.trim(), "searched: true");
    const search = kc.requests.filter((q) => q.path === "/coding/v1/search");
    assertEquals(search.length, 1);
    assertEquals(search[0].headers.authorization, "Bearer kc-access-1-secret");
    assertEquals(search[0].body.text_query, "mock");
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("a token close to expiry is refreshed before the request; the new one is stored 0600", async () => {
  const { sb, kc, env } = await setup();
  try {
    await storeLogin(sb, kc, env, 60); // inside the refresh threshold
    const r = await sb.run(["--quiet", "-p", "hi"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(refreshRequests(kc).length, 1);
    assertEquals(refreshRequests(kc)[0].body.refresh_token, "kc-refresh-1-secret");
    assertEquals(chatRequests(kc).map((q) => q.headers.authorization), [
      "Bearer kc-access-2-secret",
    ]);
    const cred = await credentials(sb);
    assertEquals(cred.mode, 0o600);
    assertEquals(cred.data.access_token, "kc-access-2-secret");
    assertEquals(cred.data.refresh_token, "kc-refresh-2-secret");
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("a 401 forces one refresh and one retry with the new token", async () => {
  const { sb, kc, env } = await setup();
  try {
    const old = await storeLogin(sb, kc, env, 3600);
    kc.validAccess.delete(old.access_token); // revoked server-side, not expired locally
    const r = await sb.run(["--quiet", "-p", "hi"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(r.stdout.trim(), "hello from kimi code");
    assertEquals(chatRequests(kc).map((q) => q.headers.authorization), [
      "Bearer kc-access-1-secret",
      "Bearer kc-access-2-secret",
    ]);
    assertEquals(refreshRequests(kc).length, 1);
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("an unrecoverable login: print mode says to /login (exit 1), wire answers -32004", async () => {
  const { sb, kc, env } = await setup();
  try {
    const old = await storeLogin(sb, kc, env, 3600);
    kc.validAccess.delete(old.access_token);
    kc.validRefresh.delete(old.refresh_token);
    const r = await sb.run(["--print", "-p", "hi"], { env });
    assertEquals(r.code, 1);
    assertEquals(r.stdout.trim().split("\n").at(-1), AUTH_EXPIRED);
    for (const s of [old.access_token, old.refresh_token]) {
      assert(!r.stdout.includes(s) && !r.stderr.includes(s));
    }
    assertEquals(refreshRequests(kc).length, 1);

    const wire = spawnWire(sb, [], env);
    try {
      await wire.call("i", "initialize", { protocol_version: "1.10" });
      const { response } = await wire.call("p", "prompt", { user_input: "hi" });
      assertEquals(response.error, { code: -32004, message: AUTH_EXPIRED, data: null });
    } finally {
      await wire.finish();
    }
    const logs = await Deno.readTextFile(`${sb.shareDir}/logs/kimi.log`).catch(() => "");
    for (const s of [old.access_token, old.refresh_token]) assert(!logs.includes(s));
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("logout --json removes the tokens and the managed provider, models and services", async () => {
  const { sb, kc, env } = await setup();
  try {
    assertEquals((await sb.run(["login", "--json"], { env })).code, 0);
    const r = await sb.run(["logout", "--json"], { env });
    assertEquals(r.code, 0, r.stdout + r.stderr);
    assertEquals(jsonLines(r.stdout), [{ type: "success", message: "Logged out successfully." }]);
    let exists = true;
    await Deno.stat(`${sb.shareDir}/credentials/kimi-code.json`).catch(() => (exists = false));
    assertEquals(exists, false);
    const config = await readConfig(sb);
    assertEquals(config.providers?.["managed:kimi-code"], undefined);
    assertEquals(Object.keys(config.models ?? {}), []);
    assertEquals(config.default_model, "");
    assertEquals(config.services?.moonshot_search, undefined);
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});

Deno.test("a Python CLI share dir (keyring-style ref, or none) sends the stored login's token", async () => {
  const { sb, kc, env } = await setup();
  try {
    const pair = kc.issue();
    await Deno.mkdir(`${sb.shareDir}/credentials`, { recursive: true });
    await Deno.writeTextFile(
      `${sb.shareDir}/credentials/kimi-code.json`,
      JSON.stringify({
        ...pair,
        expires_at: Date.now() / 1000 + 3600,
        scope: "",
        token_type: "Bearer",
        expires_in: 3600,
      }),
    );
    for (const ref of ['oauth = { storage = "keyring", key = "oauth/kimi-code" }', ""]) {
      await Deno.writeTextFile(
        `${sb.shareDir}/config.toml`,
        [
          'default_model = "kimi-code/kimi-for-coding"',
          '[models."kimi-code/kimi-for-coding"]',
          'provider = "managed:kimi-code"',
          'model = "kimi-for-coding"',
          "max_context_size = 262144",
          '[providers."managed:kimi-code"]',
          'type = "kimi"',
          `base_url = "${kc.baseUrl}"`,
          'api_key = ""',
          ref,
          "",
        ].join("\n"),
      );
      kc.requests.length = 0;
      const r = await sb.run(["--quiet", "-p", "hi"], { env });
      assertEquals(r.code, 0, r.stdout + r.stderr);
      assertEquals(chatRequests(kc)[0].headers.authorization, `Bearer ${pair.access_token}`);
    }
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});
