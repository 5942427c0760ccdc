import { assertEquals } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { startSocks5 } from "../helpers/socks5_server.ts";
import { normalizeProxyUrl } from "../../lib/net/proxy_env.ts";

Deno.test("normalizeProxyUrl: socks:// means SOCKS5; other schemes unchanged", () => {
  assertEquals(normalizeProxyUrl("socks://127.0.0.1:1080"), "socks5://127.0.0.1:1080");
  assertEquals(normalizeProxyUrl("SOCKS://h:1"), "socks5://h:1");
  assertEquals(normalizeProxyUrl("socks5://h:1"), "socks5://h:1");
  assertEquals(normalizeProxyUrl("socks5h://h:1"), "socks5h://h:1");
  assertEquals(normalizeProxyUrl("http://proxy:3128"), "http://proxy:3128");
});

Deno.test("a socks:// HTTP_PROXY carries the model requests (not a direct connection)", async () => {
  const mock = await startMockOpenAI({ defaultReply: { text: ["via ", "proxy"] } });
  const proxy = startSocks5();
  const sb = await kimiSandbox();
  try {
    const config = await sb.openaiConfig(mock.url);
    const r = await sb.run(
      ["--print", "--final-message-only", "--config-file", config, "-p", "hi"],
      {
        env: { HTTP_PROXY: `socks://127.0.0.1:${proxy.port}`, NO_PROXY: "", no_proxy: "" },
      },
    );
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "via proxy\n");
    const port = new URL(mock.url).port;
    assertEquals(proxy.connects.includes(`127.0.0.1:${port}`), true, String(proxy.connects));
  } finally {
    proxy.close();
    await mock.close();
    await sb.cleanup();
  }
});
