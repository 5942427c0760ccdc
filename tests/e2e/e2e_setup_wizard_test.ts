/**
 * The `/login` (`/setup`) wizard in a real PTY: the Moonshot China endpoint, a second
 * OpenAI-compatible endpoint that gets its own provider (the first stays untouched), a bad URL
 * asked again, context sizes looked up or asked for, and Kimi Code with an API key configuring
 * the search/fetch services.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { type KimiSandbox, kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { startMockKimiCode } from "../helpers/mock_kimi_code.ts";
import { TmuxKimi } from "../helpers/tmux.ts";
import { parse as parseToml } from "smol-toml";

const opts = { sanitizeResources: false, sanitizeOps: false };

function promptReady(screen: string): boolean {
  const lines = screen.split("\n");
  return lines.length >= 2 && /^✨\s*$/.test(lines.at(-2)!) &&
    lines.at(-1)!.includes("ctrl-x: shell mode");
}

async function readConfig(sb: KimiSandbox): Promise<any> {
  return JSON.parse(
    JSON.stringify(parseToml(await Deno.readTextFile(`${sb.shareDir}/config.toml`))),
  );
}

Deno.test(
  "wizard: Moonshot China endpoint (model list unreachable → typed id and context size)",
  opts,
  async () => {
    const sb = await kimiSandbox();
    try {
      // the child may not reach the real endpoint: listing fails and the wizard falls back
      const t = await TmuxKimi.start(sb, [], { denoFlags: ["--deny-net=api.moonshot.cn"] });
      try {
        await t.waitFor("Select a platform");
        assertStringIncludes(
          await t.screen(),
          "Moonshot AI Open Platform, China (api.moonshot.cn)",
        );
        await t.keys("4");
        await t.waitFor("API key for Moonshot AI Open Platform, China");
        await t.type("sk-cn-key");
        await t.keys("Enter");
        await t.waitFor("Model id");
        assertStringIncludes(
          await t.screen(),
          "Could not list models: could not reach https://api.moonshot.cn/v1/models",
        );
        await t.type("kimi-k2-turbo-preview");
        await t.keys("Enter");
        await t.waitFor("Context window of kimi-k2-turbo-preview");
        await t.type("12");
        await t.keys("Enter");
        await t.waitFor('"12" is not a token count of at least 1000.');
        await t.keys("C-u");
        await t.type("256k");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Saved") && promptReady(s));
        await t.keys("C-d");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
      const config = await readConfig(sb);
      assertEquals(config.default_model, "kimi-k2-turbo-preview");
      assertEquals(config.providers["moonshot-cn"], {
        type: "kimi",
        base_url: "https://api.moonshot.cn/v1",
        api_key: "sk-cn-key",
      });
      assertEquals(config.models["kimi-k2-turbo-preview"], {
        provider: "moonshot-cn",
        model: "kimi-k2-turbo-preview",
        max_context_size: 262144,
      });
      assertEquals(config.services?.moonshot_search, undefined);
    } finally {
      await sb.cleanup();
    }
  },
);

Deno.test(
  "wizard: a second OpenAI-compatible endpoint gets its own provider; bad URL asked again",
  opts,
  async () => {
    const sb = await kimiSandbox();
    const first = await startMockOpenAI({ models: ["first-model"] });
    const second = await startMockOpenAI({ models: ["second-model"] });
    try {
      await Deno.mkdir(sb.shareDir, { recursive: true });
      await Deno.writeTextFile(
        `${sb.shareDir}/config.toml`,
        [
          'default_model = "first-model"',
          "[models.first-model]",
          'provider = "openai-compatible"',
          'model = "first-model"',
          "max_context_size = 64000",
          "[providers.openai-compatible]",
          'type = "openai_legacy"',
          `base_url = "${first.url}"`,
          'api_key = "sk-first"',
          "",
        ].join("\n"),
      );
      const t = await TmuxKimi.start(sb, []);
      try {
        await t.waitFor(promptReady);
        await t.type("/login");
        await t.keys("Enter");
        await t.waitFor("Select a platform");
        await t.keys("8");
        await t.waitFor("Base URL");
        await t.type("not a url");
        await t.keys("Enter");
        await t.waitFor('"not a url" is not an http(s) URL.');
        await t.keys("C-u");
        await t.type(second.url);
        await t.keys("Enter");
        await t.waitFor("API key");
        await t.type("sk-second");
        await t.keys("Enter");
        await t.waitFor("Select a model");
        await t.keys("Enter");
        await t.waitFor("Context window of second-model");
        await t.type("32768");
        await t.keys("Enter");
        const screen = await t.waitFor((s) => s.includes("Saved") && promptReady(s));
        assertStringIncludes(screen, 'adding this one as "openai-compatible-2"');

        second.enqueue({ text: "hello from the second endpoint" });
        await t.type("hi");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("hello from the second endpoint") && promptReady(s));
        await t.keys("C-d");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
      const config = await readConfig(sb);
      assertEquals(config.providers["openai-compatible"], {
        type: "openai_legacy",
        base_url: first.url,
        api_key: "sk-first",
      });
      assertEquals(config.providers["openai-compatible-2"], {
        type: "openai_legacy",
        base_url: second.url,
        api_key: "sk-second",
      });
      assertEquals(config.models["first-model"].provider, "openai-compatible");
      assertEquals(config.models["second-model"], {
        provider: "openai-compatible-2",
        model: "second-model",
        max_context_size: 32768,
      });
      assertEquals(config.default_model, "second-model");
      assertEquals(first.requests.filter((r) => r.path === "/v1/chat/completions").length, 0);
      const chat = second.requests.filter((r) => r.path === "/v1/chat/completions");
      assertEquals(chat.length, 1);
      assertEquals(chat[0].headers.authorization, "Bearer sk-second");
    } finally {
      await first.close();
      await second.close();
      await sb.cleanup();
    }
  },
);

Deno.test(
  "wizard: Kimi Code with an API key configures the model and the search/fetch services",
  opts,
  async () => {
    const sb = await kimiSandbox();
    const mock = await startMockOpenAI({ models: ["kimi-for-coding"] });
    try {
      const t = await TmuxKimi.start(sb, [], { env: { KIMI_CODE_BASE_URL: mock.url } });
      try {
        await t.waitFor("Select a platform");
        await t.keys("2");
        await t.waitFor("API key for Kimi Code");
        await t.type("sk-kimi");
        await t.keys("Enter");
        await t.waitFor("Select a model");
        await t.keys("Enter");
        await t.waitFor("Context window of kimi-for-coding");
        await t.type("262144");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Saved") && promptReady(s));
        await t.keys("C-d");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
      const config = await readConfig(sb);
      assertEquals(config.providers["kimi-code"].base_url, mock.url);
      assertEquals(config.services.moonshot_search, {
        base_url: `${mock.url}/search`,
        api_key: "sk-kimi",
      });
      assertEquals(config.services.moonshot_fetch, {
        base_url: `${mock.url}/fetch`,
        api_key: "sk-kimi",
      });
      assert(config.models["kimi-for-coding"]);
    } finally {
      await mock.close();
      await sb.cleanup();
    }
  },
);

Deno.test(
  "shell /login with a Kimi account: device login, then a turn with the token; /logout",
  opts,
  async () => {
    const sb = await kimiSandbox();
    const kc = await startMockKimiCode({ devices: [["authorization_pending", "ok"]] });
    try {
      const env = { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl };
      const t = await TmuxKimi.start(sb, [], { env });
      try {
        await t.waitFor("Select a platform");
        await t.keys("1");
        let screen = await t.waitFor((s) => s.includes("Logged in successfully") && promptReady(s));
        assertStringIncludes(screen, `Verification URL: ${kc.oauthHost}/device?user_code=USER-1`);
        assertStringIncludes(screen, "User code: USER-1");
        await t.type("hi");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("hello from kimi code") && promptReady(s));
        const chat = kc.requests.filter((r) => r.path === "/coding/v1/chat/completions");
        assertEquals(chat.at(-1)?.headers.authorization, "Bearer kc-access-1-secret");

        // /usage adds the account's quota (GET <base>/usages with the login's token)
        await t.type("/usage");
        await t.keys("Enter");
        screen = await t.waitFor((s) => s.includes("5h limit") && promptReady(s));
        assertStringIncludes(screen, "Quota:");
        assert(/Weekly limit +█{15}░{5} +25% left \(resets in 3d 2h\)/.test(screen), screen);
        assert(/5h limit +█{2}░{18} +90% left \(resets in 1h 30m\)/.test(screen), screen);
        const usages = kc.requests.filter((r) => r.path === "/coding/v1/usages");
        assertEquals(usages.at(-1)?.headers.authorization, "Bearer kc-access-1-secret");

        // the login is revoked server-side and cannot be refreshed: the shell offers /login
        kc.validAccess.clear();
        kc.validRefresh.clear();
        await t.type("again");
        await t.keys("Enter");
        screen = await t.waitFor((s) =>
          s.includes("Authentication failed.") && /✨ \/login/.test(s)
        );
        assertStringIncludes(screen, 'Please run "/login" to sign in again.');
        await t.keys("C-u");
        await t.type("/logout");
        await t.keys("Enter");
        await t.waitFor((s) => s.includes("Logged out successfully") && promptReady(s));
        await t.keys("C-d");
        await t.waitFor("[exit 0]");
      } finally {
        await t.close();
      }
      const config = await readConfig(sb);
      assertEquals(config.providers?.["managed:kimi-code"], undefined);
    } finally {
      await kc.close();
      await sb.cleanup();
    }
  },
);

Deno.test("shell /login with a Kimi account: Esc stops waiting for the browser", opts, async () => {
  const sb = await kimiSandbox();
  const kc = await startMockKimiCode({ devices: [["authorization_pending"]] });
  try {
    const env = { KIMI_CODE_OAUTH_HOST: kc.oauthHost, KIMI_CODE_BASE_URL: kc.baseUrl };
    const t = await TmuxKimi.start(sb, [], { env });
    try {
      await t.waitFor("Select a platform");
      await t.keys("1");
      await t.waitFor("Waiting for user authorization...");
      await t.keys("Escape");
      await t.waitFor((s) => s.includes("Login failed: cancelled.") && promptReady(s));
      await t.keys("C-d");
      await t.waitFor("[exit 0]");
    } finally {
      await t.close();
    }
    let exists = true;
    await Deno.stat(`${sb.shareDir}/credentials/kimi-code.json`).catch(() => (exists = false));
    assertEquals(exists, false);
  } finally {
    await kc.close();
    await sb.cleanup();
  }
});
