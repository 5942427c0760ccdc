/**
 * The session sidebar and the side panels of `kimi web`'s page in headless chromium (mock
 * model on 127.0.0.1): sessions grouped by folder, search, rename, archive and the archived
 * section, delete; the create dialog offering to create a missing directory; the files panel
 * (browse, download) and the git changes; the question card answering AskUserQuestion; a
 * desktop notification when an approval waits while the tab is hidden.
 *
 * @module
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { browserTest, clickText, count, startKimiServer, waitForText } from "../helpers/browser.ts";

browserTest(
  "browser: sidebar (search, rename, archive, delete), create a missing dir, files and git panels, question card, notification",
  async (ctx) => {
    const { sb, page } = ctx;
    const mock = await startMockOpenAI();
    mock.enqueue(
      {
        toolCalls: [{
          id: "q-1",
          name: "AskUserQuestion",
          arguments: JSON.stringify({
            questions: [{
              question: "Which color?",
              header: "Color",
              options: [{ label: "Red", description: "warm" }, {
                label: "Blue",
                description: "cold",
              }],
            }],
          }),
        }],
      },
      { text: "Blue it is." },
      {
        toolCalls: [{
          id: "tc-n",
          name: "Shell",
          arguments: JSON.stringify({ command: "echo hidden-tab" }),
        }],
      },
      { text: "done" },
    );
    const config = await sb.openaiConfig(mock.url);
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.base}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      }).then((r) => r.json());
    const other = `${sb.root}/other-project`;
    await Deno.mkdir(`${sb.workDir}/src`, { recursive: true });
    await Deno.writeTextFile(`${sb.workDir}/src/main.ts`, "console.log('x');\n");
    await Deno.writeTextFile(`${sb.workDir}/README.md`, "# readme\n");
    await Deno.mkdir(other);
    const git = (...args: string[]) =>
      new Deno.Command("git", { args, cwd: sb.workDir, stdout: "null", stderr: "null" }).output();
    const hasGit = (await git("init", "-q").catch(() => null))?.success ?? false;
    if (hasGit) {
      await git("-c", "user.email=t@t", "-c", "user.name=t", "add", "-A");
      await git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init");
      await Deno.writeTextFile(`${sb.workDir}/README.md`, "# readme\nmore\n");
    }
    const server = await startKimiServer(sb, [
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    try {
      const a = await api("/api/sessions/", {
        method: "POST",
        body: JSON.stringify({ work_dir: sb.workDir }),
      });
      await api(`/api/sessions/${a.session_id}`, {
        method: "PATCH",
        body: JSON.stringify({ title: "alpha task" }),
      });
      const b = await api("/api/sessions/", {
        method: "POST",
        body: JSON.stringify({ work_dir: other }),
      });
      await api(`/api/sessions/${b.session_id}`, {
        method: "PATCH",
        body: JSON.stringify({ title: "beta task" }),
      });

      await page.goto(`${server.base}/#token=${server.token}`);
      await waitForText(page, ".session-title", "alpha task");
      await waitForText(page, ".session-title", "beta task");
      // Grouped by folder.
      const groups = await page.$$eval(
        ".group h3",
        (els: Element[]) => els.map((e) => e.getAttribute("title")).sort(),
      );
      assertEquals(groups, [other, sb.workDir].sort());
      // Search.
      await page.type('.sidebar-head input[type="search"]', "beta");
      await page.waitForFunction(() => document.querySelectorAll(".session-title").length === 1);
      await waitForText(page, ".session-title", "beta task");
      await page.$eval('.sidebar-head input[type="search"]', (e: Element) => {
        (e as HTMLInputElement).value = "";
        e.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await page.waitForFunction(() => document.querySelectorAll(".session-title").length === 2);

      // Rename beta through its menu.
      const menuOf = async (title: string) => {
        const items = await page.$$(".session");
        for (const item of items) {
          if ((await item.$eval(".session-title", (e: Element) => e.textContent)) === title) {
            return item;
          }
        }
        throw new Error(`no session titled ${title}`);
      };
      let beta = await menuOf("beta task");
      await (await beta.$("summary"))!.click();
      await (await beta.$(".menu button:nth-child(1)"))!.click();
      await page.waitForSelector(".rename input");
      await page.$eval(".rename input", (e: Element) => ((e as HTMLInputElement).value = ""));
      await page.type(".rename input", "gamma task");
      await page.keyboard.press("Enter");
      await waitForText(page, ".session-title", "gamma task");
      assertEquals((await api(`/api/sessions/${b.session_id}`)).title, "gamma task");

      // Archive it: gone from the list, listed under "Archived".
      beta = await menuOf("gamma task");
      await (await beta.$("summary"))!.click();
      await (await beta.$(".menu button:nth-child(2)"))!.click();
      await page.waitForFunction(() => document.querySelectorAll(".session-title").length === 1);
      await page.click(".sidebar-head .row label:nth-child(2) input");
      await waitForText(page, ".session-title", "gamma task");
      assertEquals((await api(`/api/sessions/${b.session_id}`)).archived, true);
      // Delete it (confirmed).
      page.once("dialog", (d) => d.accept());
      beta = await menuOf("gamma task");
      await (await beta.$("summary"))!.click();
      await (await beta.$(".menu button.danger"))!.click();
      await page.waitForFunction(() => document.querySelectorAll(".session-title").length === 0);
      assertEquals(await api(`/api/sessions/${b.session_id}`), null);
      await page.click(".sidebar-head .row label:nth-child(2) input");
      await waitForText(page, ".session-title", "alpha task");

      // A startup dir that arrives after the user edited the field (here: typed, then cleared it)
      // does not replace the user's edit.
      await page.evaluate(() => {
        const w = globalThis as unknown as { releaseStartup?: () => void };
        const real = globalThis.fetch;
        const held = new Promise<void>((r) => (w.releaseStartup = r));
        globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
          if (String(input).includes("/api/work-dirs/startup")) await held;
          return real(input, init);
        };
      });
      await page.click(".sidebar-head button.primary");
      await page.waitForSelector("dialog.dialog[open]");
      await page.type("dialog input[name=work_dir]", other);
      await page.$eval(
        "dialog input[name=work_dir]",
        (e: Element) => (e as HTMLInputElement).select(),
      );
      await page.keyboard.press("Backspace");
      await page.evaluate(() =>
        (globalThis as unknown as { releaseStartup: () => void }).releaseStartup()
      );
      // The hint text shows the startup dir once the late answer is in; the field stays empty.
      await page.waitForFunction(() =>
        (document.querySelector("dialog input[name=work_dir]") as HTMLInputElement)
          ?.placeholder !== "/path/to/project"
      );
      assertEquals(
        await page.$eval(
          "dialog input[name=work_dir]",
          (e: Element) => (e as HTMLInputElement).value,
        ),
        "",
      );
      await clickText(page, "dialog .actions button", "Cancel");
      await page.waitForSelector("dialog.dialog[open]", { hidden: true });

      // The create dialog offers to create a missing directory.
      const missing = `${sb.root}/brand/new`;
      await page.click(".sidebar-head button.primary");
      await page.waitForSelector("dialog.dialog[open]");
      // The startup dir is filled in once the server answers; replace it after that.
      await page.waitForFunction(() =>
        (document.querySelector("dialog input[name=work_dir]") as HTMLInputElement)?.value !== ""
      );
      await page.$eval(
        "dialog input[name=work_dir]",
        (e: Element) => ((e as HTMLInputElement).value = ""),
      );
      await page.type("dialog input[name=work_dir]", missing);
      assertEquals(
        await page.$eval(
          "dialog input[name=work_dir]",
          (e: Element) => (e as HTMLInputElement).value,
        ),
        missing,
      );
      await page.click("dialog button[type=submit]");
      await waitForText(page, "dialog .error", "Directory does not exist");
      await page.click("dialog .actions button.primary");
      await page.waitForSelector("dialog.dialog[open]", { hidden: true });
      await waitForText(page, ".workdir", missing);
      // The session is open (its socket attached): its work dir exists now.
      await waitForText(page, ".link-state", "ready");
      assert((await Deno.stat(missing)).isDirectory);

      // Files and git panels of the first session.
      await clickText(page, ".session-open", "alpha task");
      await waitForText(page, ".session-heading", "alpha task");
      await page.click("nav.tools button:nth-child(1)");
      await waitForText(page, ".side-panel .files", "README.md");
      await clickText(page, ".side-panel .files button.link", "src/");
      await waitForText(page, ".side-panel .files", "main.ts");
      const href = await page.$eval(
        ".side-panel .files a",
        (e: Element) => (e as HTMLAnchorElement).href,
      );
      const download = await fetch(href);
      assertEquals(await download.text(), "console.log('x');\n");
      await page.click("nav.tools button:nth-child(2)");
      if (hasGit) {
        await waitForText(page, ".side-panel", "README.md");
        assertStringIncludes(
          await page.$eval(".side-panel", (e: Element) => e.textContent ?? ""),
          "+1",
        );
        // README.md only gained a line: git calls it modified (M), not added.
        assertEquals(
          await page.$eval(
            ".side-panel .files li",
            (e: Element) => (e.textContent ?? "").replace(/\s+/g, " ").trim(),
          ),
          "M README.md +1 -0",
        );
      } else {
        await waitForText(page, ".side-panel", "not a git repository");
      }
      await page.click('.side-panel button[aria-label="Close panel"]');

      // The question card answers AskUserQuestion.
      await waitForText(page, ".link-state", "ready");
      await page.type(".composer textarea", "pick a color");
      await page.keyboard.press("Enter");
      await waitForText(
        page,
        '[role="dialog"][aria-label="Question from the agent"]',
        "Which color?",
      );
      const labels = await page.$$(".question .option");
      await labels[1].click();
      await page.click(".question button[type=submit]");
      await waitForText(page, ".md", "Blue it is.");
      const toolMsg = mock.requests.at(-1)!.body.messages.find((m: { role: string }) =>
        m.role === "tool"
      );
      assertStringIncludes(JSON.stringify(toolMsg.content), "Blue");
      await waitForText(page, ".link-state", "ready");

      // A hidden tab is told when an approval waits.
      await page.evaluate(() => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
        const w = globalThis as unknown as { __notes: string[]; Notification: unknown };
        w.__notes = [];
        class FakeNotification {
          static permission = "granted";
          static requestPermission() {
            return Promise.resolve("granted");
          }
          constructor(title: string) {
            w.__notes.push(title);
          }
        }
        w.Notification = FakeNotification;
      });
      await page.type(".composer textarea", "run it");
      await page.keyboard.press("Enter");
      await waitForText(page, '[role="alertdialog"]', "hidden-tab");
      await page.waitForFunction(() =>
        (globalThis as unknown as { __notes: string[] }).__notes.length === 1
      );
      assertEquals(
        await page.evaluate(() => (globalThis as unknown as { __notes: string[] }).__notes),
        ["kimi is waiting for you"],
      );
      await page.keyboard.press("1");
      await waitForText(page, ".md", "done");
      assertEquals(await count(page, '[role="alertdialog"]'), 0);

      // Fork from the first answer: a new session with that turn only.
      await waitForText(page, ".link-state", "ready");
      const before = new URL(page.url()).searchParams.get("session");
      await clickText(page, ".msg-actions button", "Fork from here");
      await page.waitForFunction(
        (old: string) => new URL(location.href).searchParams.get("session") !== old,
        {},
        before!,
      );
      await waitForText(page, ".session-heading", "Fork");
      await waitForText(page, ".link-state", "ready");
      await waitForText(page, ".md", "Blue it is.");
      assertEquals(await count(page, ".msg.user"), 1);
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop(), () => mock.close());
    }
  },
);
