/**
 * The layout of `kimi web`'s page in headless chromium (scripted model): the sidebar splitter
 * (drag, keys, double-click, kept across a reload, clamped to half the window, hidden in the
 * drawer layout); the `?action=create` and `?action=create-in-dir&workDir=` links (the dialog
 * opens, a session is created in the dir and opened, a missing dir is offered for creation, the
 * address bar is cleaned so a reload does not create another); the unread dot of a session that
 * finished a turn while another was open; pinned sessions; the text size setting.
 *
 * @module
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import type { Page } from "puppeteer-core";
import { browserTest, clickText, count, startKimiServer, waitForText } from "../helpers/browser.ts";
import { WsClient } from "../helpers/web_server.ts";

interface Listed {
  session_id: string;
  work_dir: string;
  pinned: boolean;
}

/** The splitter's aria-valuenow and the sidebar's rendered width. */
async function widths(page: Page): Promise<[number, number]> {
  return await page.evaluate(() => [
    Number(document.querySelector('[role="separator"]')!.getAttribute("aria-valuenow")),
    Math.round(document.getElementById("sidebar")!.getBoundingClientRect().width),
  ]) as [number, number];
}

/** The `<li>` of the session titled `title`. */
async function sessionItem(page: Page, title: string) {
  for (const item of await page.$$(".session")) {
    if ((await item.$eval(".session-title", (e: Element) => e.textContent)) === title) return item;
  }
  throw new Error(`no session titled ${title}`);
}

/** Titles of the sessions in each group, with the group's heading. */
async function groupsOf(page: Page): Promise<[string, string[]][]> {
  return await page.$$eval(".group", (els: Element[]) =>
    els.map((g) => [
      g.querySelector("h3")?.textContent ?? "",
      [...g.querySelectorAll(".session-title")].map((t) => t.textContent ?? ""),
    ])) as [string, string[]][];
}

browserTest(
  "browser: sidebar splitter, ?action links, unread dots, pinned sessions, text size",
  async (ctx) => {
    const { sb, page } = ctx;
    const config = await sb.scriptedConfig(["text: beta answered", "text: again"]);
    const server = await startKimiServer(sb, [
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.base}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      }).then((r) => r.json());
    const create = async (dir: string, title: string): Promise<string> => {
      const s = await api("/api/sessions/", {
        method: "POST",
        body: JSON.stringify({ work_dir: dir }),
      });
      await api(`/api/sessions/${s.session_id}`, {
        method: "PATCH",
        body: JSON.stringify({ title }),
      });
      return s.session_id;
    };
    // The open session is live and the page has taken its latest time as seen (opening a
    // session writes its record, which must not read as new activity once it is left).
    const settled = async (id: string) => {
      await waitForText(page, ".topbar .link-state", "ready");
      const t = Date.parse((await api(`/api/sessions/${id}`)).last_updated);
      await page.waitForFunction(
        (id: string, t: number) => JSON.parse(localStorage.getItem("kimi.seen") ?? "{}")[id] === t,
        {},
        id,
        t,
      );
    };
    const other = `${sb.root}/other-project`;
    await Deno.mkdir(other);
    try {
      const a = await create(sb.workDir, "alpha task");
      const b = await create(other, "beta task");
      await page.goto(`${server.base}/#token=${server.token}`);
      await waitForText(page, ".session-title", "alpha task");
      await waitForText(page, ".session-title", "beta task");

      // --- the splitter: attributes, drag, keys, double-click, persistence
      const sep = '[role="separator"]';
      assertEquals(
        await page.$eval(sep, (e: Element) => [
          e.getAttribute("aria-orientation"),
          e.getAttribute("aria-valuemin"),
          e.getAttribute("aria-valuemax"),
          (e as HTMLElement).tabIndex,
        ]),
        ["vertical", "200", "560", 0],
      );
      assertEquals(await widths(page), [290, 290]);
      const box = (await (await page.$(sep))!.boundingBox())!;
      const y = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width / 2, y);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width / 2 + 60, y, { steps: 3 });
      await page.mouse.move(box.x + box.width / 2 + 100, y, { steps: 3 });
      await page.mouse.up();
      assertEquals(await widths(page), [390, 390]);
      assertEquals(await page.evaluate(() => localStorage.getItem("kimi.sidebarWidth")), "390");
      // dragging far left stops at the minimum
      const box2 = (await (await page.$(sep))!.boundingBox())!;
      await page.mouse.move(box2.x + box2.width / 2, y);
      await page.mouse.down();
      await page.mouse.move(20, y, { steps: 4 });
      await page.mouse.up();
      assertEquals(await widths(page), [200, 200]);
      // keys
      await page.focus(sep);
      await page.keyboard.press("ArrowRight");
      assertEquals(await widths(page), [216, 216]);
      await page.keyboard.press("End");
      assertEquals(await widths(page), [560, 560]);
      await page.keyboard.press("ArrowRight");
      assertEquals(await widths(page), [560, 560]);
      await page.keyboard.press("Home");
      assertEquals(await widths(page), [200, 200]);
      await page.keyboard.press("ArrowLeft");
      assertEquals(await widths(page), [200, 200]);
      await page.click(sep, { count: 2 });
      await page.waitForFunction(() =>
        document.querySelector('[role="separator"]')!.getAttribute("aria-valuenow") === "290"
      );
      assertEquals(await widths(page), [290, 290]);
      await page.focus(sep);
      await page.keyboard.press("ArrowLeft");
      await page.keyboard.press("ArrowLeft");
      assertEquals(await widths(page), [258, 258]);
      await page.reload();
      await waitForText(page, ".session-title", "alpha task");
      assertEquals(await widths(page), [258, 258]);
      // never more than half the window
      await page.setViewport({ width: 1100, height: 860 });
      await page.waitForFunction(() =>
        document.querySelector('[role="separator"]')!.getAttribute("aria-valuemax") === "550"
      );
      await page.focus(sep);
      await page.keyboard.press("End");
      assertEquals(await widths(page), [550, 550]);
      // the drawer layout has no splitter
      await page.setViewport({ width: 800, height: 860 });
      await page.waitForFunction(() =>
        getComputedStyle(document.querySelector('[role="separator"]')!).display === "none"
      );
      await page.setViewport({ width: 1280, height: 860 });
      await page.waitForFunction(() =>
        document.querySelector('[role="separator"]')!.getAttribute("aria-valuemax") === "560"
      );
      assertEquals(await widths(page), [550, 550]);

      // --- text size
      const bodySize = () => page.evaluate(() => getComputedStyle(document.body).fontSize);
      assertEquals(await bodySize(), "15px");
      await clickText(page, ".tools button", "Settings");
      await page.waitForSelector("select[name=font_size]");
      await page.select("select[name=font_size]", "large");
      assertEquals(await bodySize(), "17px");
      const chatSize = () =>
        page.evaluate(() => getComputedStyle(document.querySelector(".empty p")!).fontSize);
      assertEquals(await chatSize(), "17px");
      await page.reload();
      await waitForText(page, ".session-title", "alpha task");
      assertEquals(await bodySize(), "17px");
      await clickText(page, ".tools button", "Settings");
      assertEquals(
        await page.$eval(
          "select[name=font_size]",
          (e: Element) => (e as unknown as { value: string }).value,
        ),
        "large",
      );
      await page.select("select[name=font_size]", "small");
      assertEquals(await bodySize(), "13px");
      await page.select("select[name=font_size]", "normal");
      assertEquals(await bodySize(), "15px");

      // --- ?action=create opens the dialog; the address bar is cleaned
      await page.goto(`${server.base}/?action=create`);
      await page.waitForSelector("dialog.dialog[open]");
      assertEquals(await page.evaluate(() => location.pathname + location.search), "/");
      await clickText(page, "dialog .actions button", "Cancel");
      await page.waitForSelector("dialog.dialog[open]", { hidden: true });
      // on a phone too, where the list (which holds the dialog) is a closed drawer
      await page.setViewport({ width: 360, height: 740 });
      await page.goto(`${server.base}/?action=create`);
      await page.waitForSelector("dialog.dialog[open]", { visible: true });
      assertEquals(
        await page.$eval("dialog.dialog", (e: Element) => getComputedStyle(e).visibility),
        "visible",
      );
      await clickText(page, "dialog .actions button", "Cancel");
      await page.setViewport({ width: 1280, height: 860 });

      // --- ?action=create-in-dir creates a session there and opens it, once
      const third = `${sb.root}/third project`;
      await Deno.mkdir(third);
      await page.goto(`${server.base}/?action=create-in-dir&workDir=${encodeURIComponent(third)}`);
      await waitForText(page, ".topbar .workdir", third);
      let inThird = ((await api("/api/sessions/")) as Listed[]).filter((s) => s.work_dir === third);
      assertEquals(inThird.length, 1);
      assertEquals(
        await page.evaluate(() => location.pathname + location.search),
        `/?session=${inThird[0].session_id}`,
      );
      await page.reload();
      await waitForText(page, ".topbar .workdir", third);
      await waitForText(page, ".session-title", "alpha task");
      inThird = ((await api("/api/sessions/")) as Listed[]).filter((s) => s.work_dir === third);
      assertEquals(inThird.length, 1);
      await settled(inThird[0].session_id);
      // a missing dir is offered for creation, not created silently
      const missing = `${sb.root}/brand/new`;
      await page.goto(
        `${server.base}/?action=create-in-dir&workDir=${encodeURIComponent(missing)}`,
      );
      await page.waitForSelector("dialog.dialog[open]");
      await waitForText(page, "dialog .error", `Directory does not exist: ${missing}`);
      assertEquals(await page.evaluate(() => location.pathname + location.search), "/");
      await Deno.stat(missing).then(() => assert(false, "created silently"), () => {});
      assertEquals(
        await page.$eval(
          "dialog input[name=work_dir]",
          (e: Element) => (e as HTMLInputElement).value,
        ),
        missing,
      );
      await clickText(page, "dialog .actions button", "Create the directory and start");
      await waitForText(page, ".topbar .workdir", missing);
      assertEquals((await Deno.stat(missing)).isDirectory, true);
      await settled(
        ((await api("/api/sessions/")) as Listed[]).find((s) => s.work_dir === missing)!.session_id,
      );
      // a link without workDir says what is missing
      await page.goto(`${server.base}/?action=create-in-dir`);
      await waitForText(page, "dialog .error", "no workDir");
      await clickText(page, "dialog .actions button", "Cancel");

      // --- unread dot: beta finishes a turn while alpha is open
      await page.goto(`${server.base}/?session=${a}`);
      await waitForText(page, ".session.current .session-title", "alpha task");
      await waitForText(page, ".session-title", "beta task");
      assertEquals(await count(page, ".dot.unread"), 0);
      await settled(a);
      const ws = await WsClient.open(
        `${server.base.replace("http", "ws")}/api/sessions/${b}/stream?token=${server.token}`,
      );
      await ws.waitFor((f) => f.method === "session_status");
      await ws.initialize();
      ws.send({ jsonrpc: "2.0", id: "p1", method: "prompt", params: { user_input: "hi beta" } });
      assertEquals((await ws.waitFor((f) => f.id === "p1")).result, { status: "finished" });
      ws.close();
      await page.waitForFunction(() => document.querySelectorAll(".dot.unread").length === 1);
      const dotted = await page.$$eval(
        ".session",
        (els: Element[]) =>
          els.filter((e) => e.querySelector(".dot.unread")).map((e) => [
            e.querySelector(".session-title")!.textContent,
            e.querySelector(".dot.unread")!.textContent,
          ]),
      );
      assertEquals(dotted, [["beta task", "new activity"]]);
      // remembered across a reload
      await page.reload();
      await waitForText(page, ".session-title", "beta task");
      await page.waitForFunction(() => document.querySelectorAll(".dot.unread").length === 1);
      // opening it clears the dot, for good
      await (await (await sessionItem(page, "beta task")).$(".session-open"))!.click();
      await waitForText(page, ".session.current .session-title", "beta task");
      assertEquals(await count(page, ".dot.unread"), 0);
      await settled(b);
      await page.goto(`${server.base}/?session=${a}`);
      await waitForText(page, ".session.current .session-title", "alpha task");
      await waitForText(page, ".session-title", "beta task");
      assertEquals(await count(page, ".dot.unread"), 0);

      // --- pin beta: first, in a "Pinned" group, in both views; kept on the server
      let beta = await sessionItem(page, "beta task");
      await (await beta.$("summary"))!.click();
      assertEquals(await beta.$eval(".menu button.pin", (e: Element) => e.textContent), "Pin");
      await (await beta.$(".menu button.pin"))!.click();
      await page.waitForFunction(() =>
        document.querySelector(".group.pinned h3")?.textContent === "Pinned"
      );
      let groups = await groupsOf(page);
      assertEquals(groups[0], ["Pinned", ["beta task"]]);
      assert(!groups.slice(1).some(([, titles]) => titles.includes("beta task")), `${groups}`);
      assertEquals((await api(`/api/sessions/${b}`)).pinned, true);
      await page.click(".sidebar-head .row label:nth-child(1) input"); // flat view
      await page.waitForFunction(() => !document.querySelector(".group:not(.pinned) h3"));
      groups = await groupsOf(page);
      assertEquals(groups[0], ["Pinned", ["beta task"]]);
      assertEquals(groups.length, 2);
      assert(groups[1][1].includes("alpha task"), `${groups}`);
      await page.reload();
      await page.waitForFunction(() =>
        document.querySelector(".group.pinned .session-title")?.textContent === "beta task"
      );
      assertEquals((await groupsOf(page))[0], ["Pinned", ["beta task"]]);
      beta = await sessionItem(page, "beta task");
      await (await beta.$("summary"))!.click();
      assertEquals(await beta.$eval(".menu button.pin", (e: Element) => e.textContent), "Unpin");
      await (await beta.$(".menu button.pin"))!.click();
      await page.waitForFunction(() => !document.querySelector(".group.pinned"));
      assertEquals((await api(`/api/sessions/${b}`)).pinned, false);

      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop());
    }
  },
);
