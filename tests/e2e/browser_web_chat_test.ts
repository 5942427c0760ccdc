/**
 * `kimi web`'s page in a real browser (headless chromium), against `main.ts web --no-open`
 * with an OpenAI-compatible mock model on 127.0.0.1 that streams in small chunks: open with the
 * token (moved out of the address bar), create a session in the dialog, send a prompt and see
 * the streamed markdown render (heading, list, highlighted code block, table); reload and see
 * the same history once; a second page on the session sees the next answer stream live.
 *
 * @module
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { browserTest, count, startKimiServer, waitForText } from "../helpers/browser.ts";

const MARKDOWN = [
  "# Plan heading",
  "",
  "Some **bold** words.",
  "",
  "- first item",
  "- second item",
  "",
  "```ts",
  "const answer: number = 42;",
  "```",
  "",
  "| name | value |",
  "| --- | --- |",
  "| alpha | 1 |",
  "| beta | 2 |",
  "",
  '<img src="x" onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>',
].join("\n");

browserTest(
  "browser: open with the token, create a session, streamed markdown, reload, second page",
  async (ctx) => {
    const { sb, page, browser } = ctx;
    const mock = await startMockOpenAI();
    mock.enqueue(
      { text: MARKDOWN, chunkChars: 7, chunkDelayMs: 5 },
      { text: "The second answer streams live to every tab.", chunkChars: 4, chunkDelayMs: 30 },
    );
    const config = await sb.openaiConfig(mock.url);
    let server = await startKimiServer(sb, [
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    try {
      await page.goto(server.url);
      await page.waitForSelector(".sidebar-head");
      // The token went from the address bar into storage.
      assertEquals(new URL(page.url()).hash, "");
      assertEquals(await page.evaluate(() => sessionStorage.getItem("kimi.token")), server.token);

      // Create a session in the dialog (the startup dir is offered).
      await page.click(".sidebar-head button.primary");
      await page.waitForSelector("dialog.dialog[open]");
      await page.waitForFunction(
        (dir: string) =>
          (document.querySelector("dialog input[name=work_dir]") as HTMLInputElement)?.value ===
            dir,
        {},
        sb.workDir,
      );
      await page.click("dialog button[type=submit]");
      await page.waitForSelector(".composer textarea");
      await page.waitForFunction(() => new URL(location.href).searchParams.has("session"));
      const sessionId = new URL(page.url()).searchParams.get("session")!;
      await waitForText(page, ".link-state", "ready");

      await page.type(".composer textarea", "Show me some markdown");
      await page.keyboard.press("Enter");
      // Streamed markdown renders.
      await waitForText(page, ".md h1", "Plan heading");
      await waitForText(page, ".md td", "beta");
      await waitForText(page, ".link-state", "ready");
      assertEquals(await count(page, ".md li"), 2);
      assertStringIncludes(
        await page.$eval(".md strong", (e: Element) => e.textContent ?? ""),
        "bold",
      );
      const code = await page.$eval(".md pre.code code", (e: Element) => e.innerHTML);
      assertStringIncludes(code, 'class="hljs-keyword"');
      assertStringIncludes(
        await page.$eval(".md pre.code", (e: Element) => e.textContent ?? ""),
        "const answer: number = 42;",
      );
      assertEquals(await count(page, ".md table tr"), 3);
      // Untrusted HTML in model output is inert.
      assertEquals(await count(page, ".md script"), 0);
      assertEquals(
        await page.$$eval(".md img", (els: Element[]) => els.map((e) => e.getAttribute("onerror"))),
        [null],
      );
      assert((await page.title()) !== "pwned");
      assertEquals(await count(page, ".msg.user"), 1);

      // Reload: the same history, once.
      await page.reload();
      await waitForText(page, ".md h1", "Plan heading");
      await waitForText(page, ".link-state", "ready");
      assertEquals(await count(page, ".msg.user"), 1);
      assertEquals(await count(page, ".md h1"), 1);
      assertEquals(await count(page, ".md li"), 2);
      assertEquals(new URL(page.url()).searchParams.get("session"), sessionId);
      // The session shows in the sidebar under its title.
      await waitForText(page, ".session-title", "Show me some markdown");

      // A second page on the session sees the next answer live.
      const page2 = await browser.newPage();
      ctx.watchPage(page2);
      await page2.goto(`${server.base}/?session=${sessionId}`);
      await waitForText(page2, ".md h1", "Plan heading");
      await waitForText(page2, ".link-state", "ready");
      await page.type(".composer textarea", "And again");
      await page.keyboard.press("Enter");
      await waitForText(page2, ".md", "streams live to every tab");
      await waitForText(page2, ".user-text", "And again");
      await waitForText(page, ".md", "streams live to every tab");
      await waitForText(page2, ".link-state", "ready");
      assertEquals(await count(page2, ".msg.user"), 2);
      assertEquals(await count(page, ".msg.user"), 2);

      // The server goes away and comes back on the same port: the pages reconnect, replay the
      // history and show every message once.
      await server.stop();
      await waitForText(page, ".link-state", "reconnecting");
      const port = new URL(server.base).port;
      server = await startKimiServer(sb, [
        "--config-file",
        config,
        "web",
        "--no-open",
        "--port",
        port,
      ]);
      await waitForText(page, ".link-state", "ready");
      await waitForText(page2, ".link-state", "ready");
      for (const p of [page, page2]) {
        assertEquals(await count(p, ".msg.user"), 2);
        assertEquals(await count(p, ".md h1"), 1);
        assertEquals(await count(p, ".md li"), 2);
      }
      // Reconnect attempts while the server was down are refused; nothing else may fail.
      assertEquals(ctx.pageErrors.filter((e) => !e.includes("ERR_CONNECTION_REFUSED")), []);
    } finally {
      ctx.afterScreenshots(() => server.stop(), () => mock.close());
    }
  },
);
