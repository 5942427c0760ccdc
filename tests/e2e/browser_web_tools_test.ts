/**
 * Tool calls in `kimi web`'s page (headless chromium, mock model on 127.0.0.1): a Shell call
 * approved with the card's button, a second one approved with the key `1`, a WriteFile whose
 * approval card and tool card show the diff; a third Shell call declined with `3`.
 *
 * @module
 */
import { assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { browserTest, count, startKimiServer, waitForText } from "../helpers/browser.ts";

function shell(id: string, command: string) {
  return { toolCalls: [{ id, name: "Shell", arguments: JSON.stringify({ command }) }] };
}

browserTest(
  "browser: approve Shell by button and by key 1, WriteFile diff card, decline with 3",
  async (ctx) => {
    const { sb, page } = ctx;
    const mock = await startMockOpenAI();
    mock.enqueue(
      // A long unbroken word: the card must wrap it, not overflow sideways.
      shell("tc-1", `echo first-ok # ${"x".repeat(300)}`),
      shell("tc-2", "echo second-ok"),
      {
        toolCalls: [{
          id: "tc-3",
          name: "WriteFile",
          arguments: JSON.stringify({ path: "notes.txt", content: "alpha\nbeta\n" }),
        }],
      },
      shell("tc-4", "echo never-run > declined.txt"),
      { text: "All steps are finished." },
    );
    const config = await sb.openaiConfig(mock.url);
    await Deno.writeTextFile(`${sb.workDir}/notes.txt`, "alpha\n");
    const server = await startKimiServer(sb, [
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    try {
      const res = await fetch(`${server.base}/api/sessions/`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ work_dir: sb.workDir }),
      });
      const { session_id: id } = await res.json();
      await page.goto(`${server.base}/?session=${id}#token=${server.token}`);
      await waitForText(page, ".link-state", "ready");
      // A second tab on the session, open before the turn starts.
      const page2 = await ctx.browser.newPage();
      ctx.watchPage(page2);
      await page2.goto(`${server.base}/?session=${id}`);
      await waitForText(page2, ".link-state", "ready");
      await page.bringToFront();
      await page.type(".composer textarea", "run the steps");
      await page.keyboard.press("Enter");

      // 1: approve with the button.
      const card1 = await waitForText(page, '[role="alertdialog"]', "echo first-ok");
      assertStringIncludes(card1, "Shell");
      assertEquals(
        await page.$eval('[role="alertdialog"]', (e: Element) => e.scrollWidth <= e.clientWidth),
        true,
      );
      // On a phone the long command scrolls inside the card and its buttons stay in sight.
      await page.setViewport({ width: 360, height: 740 });
      await page.waitForFunction(() => document.documentElement.clientWidth === 360);
      assertEquals(
        await page.$eval('[role="alertdialog"]', (card: Element) => {
          const box = card.getBoundingClientRect();
          return [...card.querySelectorAll(".actions button")].map((b) => {
            const r = b.getBoundingClientRect();
            return card.scrollHeight > card.clientHeight && r.top >= box.top &&
              r.bottom <= box.bottom && r.bottom <= document.documentElement.clientHeight;
          });
        }),
        [true, true, true, true],
      );
      await page.setViewport({ width: 1280, height: 860 });
      await page.waitForFunction(() => document.documentElement.clientWidth === 1280);
      await page.click('[role="alertdialog"] button.primary');
      await waitForText(page, ".tool-card .shell-output", "first-ok");
      await waitForText(page, ".notice.approval-note", "Approved · Shell");

      // 2: the second tab shows the same approval; the key 1 there approves it, and the first
      // tab follows.
      await waitForText(page, '[role="alertdialog"]', "echo second-ok");
      await waitForText(page2, '[role="alertdialog"]', "echo second-ok");
      // A third tab that opens while the approval waits gets the turn so far and the card.
      const page3 = await ctx.browser.newPage();
      ctx.watchPage(page3);
      await page3.goto(`${server.base}/?session=${id}`);
      await waitForText(page3, ".tool-card .shell-output", "first-ok");
      await waitForText(page3, '[role="alertdialog"]', "echo second-ok");
      assertEquals(await count(page3, ".msg.user"), 1);
      assertEquals(await count(page3, ".tool-card"), 2);
      await page2.bringToFront();
      await page2.keyboard.press("1");
      await waitForText(page2, ".tool-card .shell-output", "second-ok");
      await waitForText(page, ".tool-card .shell-output", "second-ok");
      await page.waitForFunction(() =>
        !document.querySelector('[role="alertdialog"]')?.textContent?.includes("second-ok")
      );
      assertEquals(await count(page2, ".msg.user"), 1);
      await page3.waitForFunction(() =>
        !document.querySelector('[role="alertdialog"]')?.textContent?.includes("second-ok")
      );
      await waitForText(page3, ".tool-card .shell-output", "second-ok");
      await page3.close();
      await page2.close();
      await page.bringToFront();

      // 3: the WriteFile approval shows the diff before anything is written.
      await waitForText(page, '[role="alertdialog"] .diff', "notes.txt");
      assertEquals(await Deno.readTextFile(`${sb.workDir}/notes.txt`), "alpha\n");
      assertEquals(await count(page, '[role="alertdialog"] .diff-table tr.add'), 1);
      await page.keyboard.press("1");
      await waitForText(page, ".tool-card.tool-WriteFile .diff-table tr.add", "beta");
      assertEquals(await Deno.readTextFile(`${sb.workDir}/notes.txt`), "alpha\nbeta\n");
      // side by side view
      await page.click(".tool-card.tool-WriteFile .diff figcaption button");
      await waitForText(page, ".tool-card.tool-WriteFile .diff-table.split td.add", "beta");

      // 4: decline with the key 3.
      await waitForText(page, '[role="alertdialog"]', "never-run");
      await page.keyboard.press("3");
      await waitForText(page, ".notice.approval-note", "Declined");
      await waitForText(page, ".link-state", "ready");
      let declined = true;
      try {
        await Deno.stat(`${sb.workDir}/declined.txt`);
      } catch {
        declined = false;
      }
      assertEquals(declined, false);
      assertEquals(await count(page, '[role="alertdialog"]'), 0);
      assertEquals(await count(page, ".notice.approval-note"), 4);
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop(), () => mock.close());
    }
  },
);
