/**
 * Kimi Code sign-in over ACP: the `login` auth method (terminal-auth metadata running `kimi
 * login`), `authenticate` before and after the login, a session on the managed provider with the
 * login's token, and an expired login answered with `auth_required`.
 */
import * as acp from "@agentclientprotocol/sdk";
import { assert, assertEquals } from "../helpers/assert.ts";
import { spawnAcp } from "../helpers/acp_client.ts";
import { kimiSandbox, MAIN_TS } from "../helpers/kimi_process.ts";
import { startMockKimiCode } from "../helpers/mock_kimi_code.ts";

const AUTH_EXPIRED =
  'Authentication failed. Your login session may have expired. Please run "/login" to sign in again.';

async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    const e = err as acp.RequestError;
    return { code: e.code, message: e.message };
  }
  throw new Error("expected an error");
}

Deno.test("acp: login method, authenticate before and after `kimi login`, session with the token", async () => {
  const sb = await kimiSandbox();
  const kc = await startMockKimiCode();
  const env = { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl };
  const client = spawnAcp(sb, { env });
  try {
    const init = await client.initialize();
    assertEquals(init.authMethods?.length, 1);
    const method = init.authMethods![0] as acp.AuthMethodAgent;
    assertEquals(method.id, "login");
    assertEquals(method.name, "Login with Kimi account");
    const meta = method._meta!["terminal-auth"] as Record<string, unknown>;
    assertEquals(meta.label, "Kimi Code Login");
    assertEquals(meta.type, "terminal");
    assertEquals(meta.command, Deno.execPath());
    assertEquals((meta.args as string[]).slice(-2), [MAIN_TS, "login"]);

    // no login yet: sessions and authenticate say what to do
    assertEquals((await rpcError(client.newSession(sb.workDir))).code, -32000);
    const before = await rpcError(
      client.conn.agent.request(acp.methods.agent.authenticate, { methodId: "login" }),
    );
    assertEquals(before.code, -32000);
    assert(before.message.includes("run `kimi login` in a terminal"), before.message);

    // the editor runs the terminal method: `kimi login`
    const login = await sb.run(["login", "--json"], { env });
    assertEquals(login.code, 0, login.stdout + login.stderr);
    assertEquals(
      await client.conn.agent.request(acp.methods.agent.authenticate, { methodId: "login" }),
      {},
    );
    const { sessionId } = await client.newSession(sb.workDir);
    assertEquals(await client.prompt(sessionId, "hi"), { stopReason: "end_turn" });
    const chunks = client.of(sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => (u as { content: { text?: string } }).content.text);
    assertEquals(chunks.join(""), "hello from kimi code");
    const chat = kc.requests.filter((r) => r.path === "/coding/v1/chat/completions");
    assertEquals(chat.at(-1)?.headers.authorization, "Bearer kc-access-1-secret");

    // the login is revoked and cannot be refreshed: auth_required with the reason
    kc.validAccess.clear();
    kc.validRefresh.clear();
    const expired = await rpcError(client.prompt(sessionId, "again"));
    assertEquals(expired, { code: -32000, message: `Authentication required: ${AUTH_EXPIRED}` });
    assertEquals((await client.finish()).code, 0);
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});
