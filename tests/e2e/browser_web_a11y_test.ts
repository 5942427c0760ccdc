/**
 * Accessibility and the token screens of `kimi web`'s page in headless chromium: axe-core
 * (injected into the page) finds no serious or critical violation on the token screen, the
 * chat with messages and tool cards, the approval card, the create dialog and the settings
 * panel, in the light and the dark theme; a wrong token gives a screen that says what to do and
 * is not kept; pasting the right token there opens the app.
 *
 * @module
 */
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { browserTest, startKimiServer, waitForText } from "../helpers/browser.ts";
import { seriousViolations } from "../helpers/axe.ts";

browserTest(
  "browser: token screens and no serious accessibility violation on the main views",
  async (ctx) => {
    const { sb, page } = ctx;
    // The axe script is injected inline; the page's CSP would (rightly) refuse it.
    await page.setBypassCSP(true);
    const mock = await startMockOpenAI();
    mock.enqueue(
      {
        text:
          "# Result\n\n- one\n- two\n\n```bash\nls -la\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
      },
      {
        toolCalls: [{
          id: "tc-1",
          name: "Shell",
          arguments: JSON.stringify({ command: "echo a11y" }),
        }],
      },
      { text: "ok" },
    );
    const config = await sb.openaiConfig(mock.url);
    const server = await startKimiServer(sb, [
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    try {
      // No token at all.
      await page.goto(`${server.base}/`);
      await waitForText(page, "h1", "A token is needed");
      assertEquals(await seriousViolations(page), []);
      // The check can fail: an image without a text alternative is reported.
      await page.evaluate(() => {
        const img = document.createElement("img");
        img.id = "probe";
        img.src = "data:image/gif;base64,R0lGODlhAQABAAAAACw=";
        document.body.append(img);
      });
      assertEquals((await seriousViolations(page)).map((v) => v.split(" ")[0]), ["image-alt"]);
      await page.evaluate(() => document.getElementById("probe")?.remove());
      // A wrong token: a clear screen, and the wrong token is not kept.
      await page.goto("about:blank");
      await page.goto(`${server.base}/#token=wrong-token`);
      await waitForText(page, "h1", "This token was not accepted");
      assertEquals(
        await page.$$eval(".token-screen p code", (cs: Element[]) => cs.map((c) => c.textContent)),
        ["kimi web rotate-token", "kimi web", "#token=", "kimi web"],
      );
      assertStringIncludes(
        await page.$eval("main", (e: Element) => e.textContent ?? ""),
        "kimi web",
      );
      assertEquals(await page.evaluate(() => localStorage.getItem("kimi.token")), null);
      assertEquals(new URL(page.url()).hash, "");
      // Pasting the right one opens the app.
      await page.type(".token-screen input", server.token);
      await page.click(".token-screen button[type=submit]");
      await page.waitForSelector(".sidebar-head");
      assertEquals(await page.evaluate(() => localStorage.getItem("kimi.token")), server.token);

      // Create dialog.
      await page.click(".sidebar-head button.primary");
      await page.waitForSelector("dialog.dialog[open]");
      assertEquals(await seriousViolations(page), []);
      await page.click("dialog button[type=submit]");
      await page.waitForSelector(".composer textarea");
      await waitForText(page, ".link-state", "ready");

      // Chat with markdown.
      await page.type(".composer textarea", "markdown please");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md h1", "Result");
      await waitForText(page, ".link-state", "ready");
      assertEquals(await seriousViolations(page), []);

      // Approval card.
      await page.type(".composer textarea", "run it");
      await page.keyboard.press("Enter");
      await waitForText(page, '[role="alertdialog"]', "echo a11y");
      assertEquals(await seriousViolations(page), []);
      await page.keyboard.press("1");
      await waitForText(page, ".tool-card .shell-output", "a11y");
      await waitForText(page, ".link-state", "ready");

      // The in-chat search box, with a match.
      await page.keyboard.down("Control");
      await page.keyboard.press("f");
      await page.keyboard.up("Control");
      await page.waitForSelector(".chat-search input");
      await page.type(".chat-search input", "a11y");
      await waitForText(page, ".search-count", "of");
      assertEquals(await seriousViolations(page), []);
      await page.keyboard.press("Escape");
      await page.waitForFunction(() => !document.querySelector(".chat-search"));

      // Settings panel, then the dark theme.
      await page.click("nav.tools button:nth-child(3)");
      await waitForText(page, ".side-panel h2", "Settings");
      assertEquals(await seriousViolations(page), []);
      // The config file (providers and models) is shown with its secrets masked.
      await page.click(".config-file summary");
      await page.waitForSelector(".config-file textarea");
      const configText = await page.$eval(
        ".config-file textarea",
        (e: Element) => (e as HTMLTextAreaElement).value,
      );
      assertStringIncludes(configText, "mock");
      assertEquals(configText.includes("sk-test"), false);
      assertEquals(await seriousViolations(page), []);
      await page.select(".side-panel select", "dark");
      await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
      assertEquals(await seriousViolations(page), []);
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop(), () => mock.close());
    }
  },
);
