/**
 * The page's background tasks panel, session export, Undo and cross-session search in a real
 * browser (headless chromium) against `main.ts --yolo web --no-open` and a mock model on
 * 127.0.0.1: a Shell command run in the background shows in the panel with its command, output
 * tail and elapsed time and is stopped by its button; Export downloads the ZIP; Undo on the
 * last turn (confirmed) puts back the file it wrote and marks the turn; the sidebar's search
 * finds the prompt of the session in its messages and its hit shows that turn.
 *
 * @module
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { seriousViolations } from "../helpers/axe.ts";
import { browserTest, count, startKimiServer, waitForText } from "../helpers/browser.ts";

browserTest(
  "browser: tasks panel with Stop, Export ZIP, Undo of the last turn, search in messages",
  async (ctx) => {
    const { sb, page, pageErrors } = ctx;
    // The axe script is injected inline; the page's CSP would (rightly) refuse it.
    await page.setBypassCSP(true);
    const mock = await startMockOpenAI();
    mock.enqueue(
      {
        toolCalls: [{
          id: "bg-1",
          name: "Shell",
          arguments: JSON.stringify({
            command: "echo browser-bg-marker; sleep 120",
            run_in_background: true,
            description: "browser sleeper",
          }),
        }],
      },
      { text: "The sleeper runs in the background." },
      {
        toolCalls: [{
          id: "w-1",
          name: "WriteFile",
          arguments: JSON.stringify({ path: "notes.txt", content: "rewritten by the agent\n" }),
        }],
      },
      { text: "Notes rewritten." },
    );
    const config = await sb.openaiConfig(mock.url);
    await Deno.writeTextFile(`${sb.workDir}/notes.txt`, "first draft\n");
    const server = await startKimiServer(sb, [
      "--config-file",
      config,
      "--yolo",
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    ctx.afterScreenshots(() => server.stop(), () => mock.close());

    const res = await fetch(`${server.base}/api/sessions/`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ work_dir: sb.workDir }),
    });
    const sessionId = (await res.json()).session_id as string;
    await page.goto(server.url.replace("/#", `/?session=${sessionId}#`));
    await waitForText(page, ".link-state", "ready");

    // ---- a background task in the panel, stopped by its button ------------------------------
    await page.type(".composer textarea", "Start the sleeper");
    await page.keyboard.press("Enter");
    await waitForText(page, ".md", "The sleeper runs in the background.");
    await waitForText(page, ".tasks-pill .pill-count", "1 running");
    await page.click(".tasks-pill");
    await waitForText(page, ".side-panel h2", "Background tasks");
    await waitForText(page, ".task-list .task .task-tail", "browser-bg-marker");
    const task = await page.$eval(".task-list .task", (li: Element) => ({
      status: li.querySelector(".task-status")?.textContent,
      desc: li.querySelector(".task-desc")?.textContent,
      command: li.querySelector(".task-command")?.textContent,
      elapsed: li.querySelector(".task-elapsed")?.textContent ?? "",
    }));
    assertEquals(await seriousViolations(page), []);
    assertEquals(task.status, "running");
    assertEquals(task.desc, "browser sleeper");
    assertEquals(task.command, "echo browser-bg-marker; sleep 120");
    assert(/^\d+s$/.test(task.elapsed), `elapsed: ${task.elapsed}`);
    await page.click('.task-list .task button[aria-label="Stop browser sleeper"]');
    await waitForText(page, ".task-list .task .task-status", "killed");
    assertEquals(await count(page, ".task-list .task button.danger"), 0);
    await page.waitForFunction(() => !document.querySelector(".tasks-pill .pill-count"));

    // ---- Export: the ZIP download ------------------------------------------------------------
    const exported = page.waitForResponse((r) => r.url().endsWith(`/${sessionId}/export`));
    await page.click('.topbar button[title^="Download this session"]');
    const zip = await exported;
    assertEquals(zip.status(), 200);
    assertEquals(zip.headers()["content-type"], "application/zip");
    // the token travelled in the header, never in the URL
    assert(!zip.url().includes("token="), zip.url());
    await waitForText(page, '.topbar button[title^="Download this session"]', "Export");

    // ---- Undo of the last turn ---------------------------------------------------------------
    await page.type(".composer textarea", "Rewrite the notes");
    await page.keyboard.press("Enter");
    await waitForText(page, ".md", "Notes rewritten.");
    await waitForText(page, ".link-state", "ready");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/notes.txt`), "rewritten by the agent\n");
    // Undo is offered on the latest turn only
    assertEquals(await count(page, ".msg-actions button.link:not([disabled])"), 5);
    const undoButtons = await page.$$eval(
      ".turn",
      (turns: Element[]) =>
        turns.map((t) =>
          [...t.querySelectorAll(".msg-actions button")].some((b) => b.textContent === "Undo")
        ),
    );
    assertEquals(undoButtons, [false, true]);
    const dialogs: string[] = [];
    page.once("dialog", (d) => {
      dialogs.push(d.message());
      d.accept();
    });
    await page.evaluate(() => {
      const last: HTMLElement = [...document.querySelectorAll(".turn")].at(-1);
      const buttons: HTMLElement[] = [...last.querySelectorAll(".msg-actions button")];
      buttons.find((b) => b.textContent === "Undo").click();
    });
    await waitForText(page, ".turn:last-of-type .md", "Restored 1 file: notes.txt.");
    assertEquals(dialogs.length, 1);
    assertStringIncludes(dialogs[0], "Undo the last turn?");
    assertEquals(await Deno.readTextFile(`${sb.workDir}/notes.txt`), "first draft\n");
    await page.waitForSelector('.turn.undone[data-turn="1"]');
    assertEquals(await count(page, ".turn.undone"), 1);
    await waitForText(page, ".link-state", "ready");
    // the next Undo would take back the first turn
    const after = await page.$$eval(
      ".turn",
      (turns: Element[]) =>
        turns.map((t) =>
          [...t.querySelectorAll(".msg-actions button")].some((b) => b.textContent === "Undo")
        ),
    );
    assertEquals(after, [true, false, false]);

    // ---- search in messages across sessions ---------------------------------------------------
    await page.type('.sidebar-head input[type="search"]', "the SLEEPER");
    await waitForText(page, ".message-search .hit .hit-snippet", "Start the sleeper");
    assertEquals(
      await page.$eval(".message-search .hit .hit-snippet mark", (m: Element) => m.textContent),
      "the sleeper",
    );
    // a hit opens its session at the matching turn
    const turnOffset = () =>
      page.evaluate(() => {
        const chat = document.querySelector(".chat");
        return document.querySelector('.chat [data-turn="0"]').getBoundingClientRect().top -
          chat.getBoundingClientRect().top;
      });
    await page.evaluate(() => {
      const chat = document.querySelector(".chat");
      chat.scrollTop = chat.scrollHeight;
    });
    const before = await turnOffset();
    assert(before < -50, `turn 0 starts ${before} px from the chat's top before the jump`);
    await page.click(".message-search .hit");
    await page.waitForFunction(() => {
      const chat = document.querySelector(".chat");
      const top = document.querySelector('.chat [data-turn="0"]').getBoundingClientRect().top -
        chat.getBoundingClientRect().top;
      return Math.abs(top) < 30;
    });
    assertEquals(await seriousViolations(page), []);

    // ---- on a 360 px phone: the pill and the panel fit, nothing scrolls sideways -------------
    await page.setViewport({ width: 360, height: 740 });
    await page.click(".tasks-pill");
    await waitForText(page, ".side-panel h2", "Background tasks");
    await waitForText(page, ".task-list .task .task-status", "killed");
    const fit = await page.evaluate(() => {
      const panel = document.querySelector(".side-panel").getBoundingClientRect();
      return {
        scroll: document.documentElement.scrollWidth,
        width: document.documentElement.clientWidth,
        panelLeft: panel.left,
        panelRight: panel.right,
      };
    });
    assert(fit.scroll <= fit.width, `page ${fit.scroll} px wide in a ${fit.width} px window`);
    assert(fit.panelLeft >= 0 && fit.panelRight <= fit.width, JSON.stringify(fit));
    assertEquals(pageErrors, []);
  },
);
