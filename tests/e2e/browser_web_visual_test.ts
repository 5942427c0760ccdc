/**
 * What `kimi web`'s page looks like, checked by geometry, computed styles and exact texts in
 * headless chromium (mock model on 127.0.0.1): the composer grows with a long message (up to 40%
 * of the window, then scrolls) and shrinks back; a wide markdown table keeps its words whole and
 * scrolls sideways instead of breaking "Column" into "Colum / n", and a keyboard can reach it (no
 * serious axe violation); a blockquote is marked;
 * headings in a message are not poster-sized; a Shell card shows the command's coloured output
 * without its ANSI escape codes; a tool's error shows its `names` as code; on a 360 px phone the
 * panel buttons stay on one row of the top bar, question options keep their labels whole, and
 * the empty page does not point to a list "on the left" that is hidden; a model error (401)
 * stays in the turn it interrupted and says what to do; a pressed panel button keeps its width;
 * the Files panel wraps a deep folder's path instead of running out of the panel, and Escape
 * closes it with the focus back on its button; an answered approval gives the focus back to the
 * composer; when the
 * server stops, the list's background refresh leaves no error behind, an action says in words
 * that the server is out of reach, and a failed upload can be removed from the composer; a
 * session deleted elsewhere is reported once ("Session not found"), with what to do; the theme
 * button switches the look on the first click, also from "auto" on a dark system.
 *
 * @module
 */
import { assertEquals } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { browserTest, clickText, startKimiServer, waitForText } from "../helpers/browser.ts";
import { seriousViolations } from "../helpers/axe.ts";
import type { Page } from "puppeteer-core";

const HEADERS = ["Identifier", "Description", "Ownership", "Visibility", "Replication"];
const TABLE = [
  `| ${HEADERS.join(" | ")} |`,
  `| ${HEADERS.map(() => "---").join(" | ")} |`,
  `| id-1 | ${"a rather long description of the row ".repeat(3)}| team | public | ${
    "x".repeat(60)
  } |`,
].join("\n");
const MARKDOWN = [
  "# A heading in a message",
  "",
  TABLE,
  "",
  "> quoted advice from the docs",
  "",
  "End of answer.",
].join("\n");

const DEEP = [
  "first_level_directory_with_a_long_name",
  "second_level_directory_with_a_long_name",
  "third_level_directory_with_a_long_name",
];

async function viewport(page: Page, width: number, height: number): Promise<void> {
  await page.setViewport({ width, height });
  await page.waitForFunction((w: number) => document.documentElement.clientWidth === w, {}, width);
}

/** Per header cell: how many line boxes its word takes (1 = the word is whole). */
async function headerLines(page: Page): Promise<number[]> {
  return await page.$$eval(".md th", (ths: Element[]) =>
    ths.map((th) => {
      const range = document.createRange();
      range.selectNodeContents(th);
      return range.getClientRects().length;
    }));
}

browserTest(
  "browser: tables, quotes, headings, ANSI output, phone top bar, panel paths",
  async (ctx) => {
    const { sb, page } = ctx;
    // The axe script is injected inline; the page's CSP would (rightly) refuse it.
    await page.setBypassCSP(true);
    const mock = await startMockOpenAI();
    mock.enqueue(
      { text: MARKDOWN },
      {
        toolCalls: [{
          id: "tc-ansi",
          name: "Shell",
          arguments: JSON.stringify({
            command: "printf '\\033[31mred-word\\033[0m plain \\033[1;32mgreen\\033[0m\\n'",
          }),
        }],
      },
      {
        toolCalls: [{
          id: "tc-missing",
          name: "ReadFile",
          arguments: JSON.stringify({ path: "missing<1>.txt" }),
        }],
      },
      { text: "Printed." },
      { status: 401, error: "Invalid API key" },
      {
        toolCalls: [{
          id: "tc-q",
          name: "AskUserQuestion",
          arguments: JSON.stringify({
            questions: [{
              question: "Which database should the service use?",
              header: "Database",
              options: [
                {
                  label: "PostgreSQL",
                  description: "Relational and battle tested, with a long note",
                },
                { label: "SQLite", description: "Embedded" },
              ],
              multi_select: false,
            }],
          }),
        }],
      },
      { text: "Answered." },
    );
    const config = await sb.openaiConfig(mock.url);
    await Deno.mkdir(`${sb.workDir}/${DEEP.join("/")}`, { recursive: true });
    await Deno.writeTextFile(`${sb.workDir}/${DEEP.join("/")}/leaf.txt`, "leaf\n");
    let server = await startKimiServer(sb, [
      "--config-file",
      config,
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    try {
      // --- the empty page names where the sessions are, on a desktop and on a phone
      await page.goto(`${server.base}/#token=${server.token}`);
      await page.waitForSelector(".sidebar-head");
      const emptyText = () => page.$eval(".empty p", (e: Element) => (e as HTMLElement).innerText);
      assertEquals(
        await emptyText(),
        "Sessions of every project on this machine are in the list on the left.",
      );
      await viewport(page, 360, 740);
      assertEquals(
        await emptyText(),
        "Sessions of every project on this machine are in the list behind the ☰ button.",
      );
      await viewport(page, 1280, 860);

      const res = await fetch(`${server.base}/api/sessions/`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ work_dir: sb.workDir }),
      });
      const { session_id: id } = await res.json();
      await page.goto(`${server.base}/?session=${id}`);
      await waitForText(page, ".link-state", "ready");
      // Opened with the focus nowhere (no touch screen): the message box has it.
      assertEquals(
        await page.evaluate(() =>
          document.activeElement === document.querySelector(".composer textarea")
        ),
        true,
      );

      // --- the composer grows with a long message up to 40% of the window, then scrolls, and
      // shrinks back when emptied
      const setDraft = (value: string) =>
        page.$eval(".composer textarea", (t: Element, v: string) => {
          (t as HTMLTextAreaElement).value = v;
          t.dispatchEvent(new Event("input", { bubbles: true }));
        }, value);
      const box = () =>
        page.$eval(".composer textarea", (t: Element) => {
          const el = t as HTMLTextAreaElement;
          return {
            height: Math.round(el.getBoundingClientRect().height),
            scrolls: el.scrollHeight > el.clientHeight,
            max: Math.round(document.documentElement.clientHeight * 0.4),
          };
        });
      const empty = await box();
      assertEquals(empty.scrolls, false);
      const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}`).join("\n");
      await setDraft(lines(8));
      const eight = await box();
      assertEquals([eight.height > empty.height, eight.scrolls], [true, false]);
      await setDraft(lines(60));
      const sixty = await box();
      assertEquals([sixty.height, sixty.scrolls], [sixty.max, true]);
      await setDraft("");
      assertEquals(await box(), empty);

      // The `/` menu shows the names in a command's description as code, not between backticks.
      await page.type(".composer textarea", "/ini");
      const init = '[role="listbox"][aria-label="Slash commands"] li';
      await waitForText(page, init, "/init");
      assertEquals(
        await page.$$eval(
          init,
          (lis: Element[]) =>
            lis.filter((li) => li.textContent!.startsWith("/init ")).map((li) => [
              li.textContent!.includes("`"),
              [...li.querySelectorAll("code")].map((c) => c.textContent),
            ]),
        ),
        [[false, ["AGENTS.md"]]],
      );
      await setDraft("");

      // --- markdown: table, quote, heading
      await page.type(".composer textarea", "show the table");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md", "End of answer.");
      await waitForText(page, ".link-state", "ready");
      assertEquals(
        await page.$$eval(".md th", (ths: Element[]) => ths.map((t) => t.textContent)),
        HEADERS,
      );
      assertEquals(await headerLines(page), HEADERS.map(() => 1));
      // The list cuts long titles: hovering a session shows the whole title, then its folder.
      assertEquals(
        await page.$eval('.session-open[aria-current="page"]', (b: Element) => [
          b.getAttribute("title"),
          b.querySelector(".session-title")!.textContent,
        ]).then(([title, text]) => title === `${text}\n${sb.workDir}` && text !== ""),
        true,
      );
      assertEquals(
        await page.$eval(".md blockquote", (q: Element) => {
          const s = getComputedStyle(q);
          return [s.borderLeftStyle, s.borderLeftWidth];
        }),
        ["solid", "3px"],
      );
      assertEquals(
        await page.$eval(".md h1", (h: Element) =>
          parseFloat(getComputedStyle(h).fontSize) /
          parseFloat(getComputedStyle(h.closest(".md")!).fontSize)),
        1.5,
      );
      // On a phone the words stay whole too: the table scrolls inside the message, the page
      // does not.
      await viewport(page, 360, 740);
      assertEquals(await headerLines(page), HEADERS.map(() => 1));
      assertEquals(
        await page.$eval(".md table", (t: Element) => t.scrollWidth > t.clientWidth),
        true,
      );
      assertEquals(await page.evaluate(() => document.documentElement.scrollWidth), 360);
      // A keyboard reaches what scrolls sideways (axe: scrollable-region-focusable).
      assertEquals(await seriousViolations(page), []);

      // --- the phone's top bar: every panel button on one row (the row scrolls sideways
      // inside the screen when they do not all fit), not a row of its own for the last ones
      const bar = await page.$eval(".topbar .tools", (nav: Element) => {
        const buttons = [...nav.querySelectorAll("button")];
        const box = nav.getBoundingClientRect();
        return {
          buttons: buttons.length,
          rows: new Set(buttons.map((b) => Math.round(b.getBoundingClientRect().top))).size,
          inside: box.left >= 0 && box.right <= document.documentElement.clientWidth,
          height: Math.round(box.height),
          buttonHeight: Math.round(buttons[0].getBoundingClientRect().height),
        };
      });
      assertEquals(bar.buttons >= 5, true);
      assertEquals([bar.rows, bar.inside], [1, true], JSON.stringify(bar));
      // one row of buttons (plus at most a scroll bar), not two
      assertEquals(bar.height < 2 * bar.buttonHeight, true, JSON.stringify(bar));
      await viewport(page, 1280, 860);

      // --- Shell output without escape codes
      await page.type(".composer textarea", "print in colour");
      await page.keyboard.press("Enter");
      await waitForText(page, '[role="alertdialog"]', "red-word");
      // The command in the card's description is shown as code.
      assertEquals(
        await page.$$eval(
          '[role="alertdialog"] p code',
          (cs: Element[]) => cs.map((c) => c.textContent),
        ),
        ["printf '\\033[31mred-word\\033[0m plain \\033[1;32mgreen\\033[0m\\n'", "Shell"],
      );
      await page.keyboard.press("1");
      await waitForText(page, ".md", "Printed.");
      // The card answered by key gave the focus back to the composer.
      assertEquals(
        await page.evaluate(() =>
          document.activeElement === document.querySelector(".composer textarea")
        ),
        true,
      );
      assertEquals(
        await page.$eval(".tool-card.tool-Shell .shell-output", (e: Element) => e.textContent),
        "red-word plain green\n",
      );
      // A tool's error names the file as code, and keeps text that looks like markup.
      assertEquals(
        await page.$eval(".tool-card.tool-ReadFile .tool-error", (e: Element) => [
          e.textContent,
          [...e.querySelectorAll("code")].map((c) => c.textContent),
        ]),
        ["missing<1>.txt does not exist.", ["missing<1>.txt"]],
      );

      // --- a model error stays with the turn it interrupted and says what to do
      await page.type(".composer textarea", "fail please");
      await page.keyboard.press("Enter");
      const failure = await waitForText(page, ".turn .notice.error", "Model error");
      assertEquals(
        failure,
        "Model error: 401 Invalid API key. The provider refused the API key: check it under " +
          "Settings → Providers and models, then send the message again.",
      );
      assertEquals(await page.$$eval(".turn", (ts: Element[]) => ts.length), 3);
      assertEquals(
        await page.$$eval(
          ".turn:last-of-type .notice",
          (ns: Element[]) => ns.map((n) => n.textContent),
        ),
        ["Step interrupted", failure],
      );
      assertEquals(await page.$(".error.inline"), null);

      // --- a question's option labels keep their words whole on a phone
      await page.type(".composer textarea", "ask me");
      await page.keyboard.press("Enter");
      await page.waitForSelector(".card.question");
      await viewport(page, 360, 740);
      assertEquals(
        await page.$$eval(
          ".card.question .option > span:not(.sr-only)",
          (spans: Element[]) =>
            spans.map((s) => {
              const range = document.createRange();
              range.selectNodeContents(s);
              return [s.textContent, range.getClientRects().length];
            }),
        ),
        [["PostgreSQL", 1], ["SQLite", 1]],
      );
      await viewport(page, 1280, 860);
      await page.click(".card.question input");
      await page.click('.card.question button[type="submit"]');
      await waitForText(page, ".md", "Answered.");
      await waitForText(page, ".link-state", "ready");

      // --- a pressed panel button keeps its width; the Files panel wraps a deep path
      const filesWidth = () =>
        page.$$eval(
          ".topbar .tools button",
          (bs: Element[]) =>
            bs.find((b) => b.textContent === "Files")!.getBoundingClientRect().width,
        );
      const before = await filesWidth();
      await clickText(page, ".topbar .tools button", "Files");
      await page.waitForSelector('.topbar .tools button[aria-pressed="true"]');
      assertEquals(await filesWidth(), before);
      for (const name of DEEP) {
        await clickText(page, ".side-panel .files button.link", `${name}/`);
        await waitForText(page, ".side-panel .crumbs", name);
      }
      await waitForText(page, ".side-panel .files", "leaf.txt");
      const fit = await page.$eval(".side-panel", (panel: Element) => {
        const crumbs = panel.querySelector(".crumbs")!.getBoundingClientRect();
        const box = panel.getBoundingClientRect();
        return [panel.scrollWidth <= panel.clientWidth, crumbs.right <= box.right];
      });
      assertEquals(fit, [true, true]);
      // Escape in the panel closes it, and the focus goes back to the button that opened it.
      await page.focus(".side-panel .crumbs button");
      await page.keyboard.press("Escape");
      await page.waitForFunction(() => !document.querySelector(".side-panel"));
      assertEquals(
        await page.evaluate(() => (document.activeElement as HTMLElement).dataset.panel),
        "files",
      );

      // --- the server stops: the list's background refresh fails quietly (the link state says
      // it); once the server is back, no error is left on screen
      const listFailed = new Promise<void>((resolve) =>
        page.on("requestfailed", (r) => {
          if (r.url().includes("/api/sessions/?")) resolve();
        })
      );
      const port = new URL(server.base).port;
      const restart = async () => {
        server = await startKimiServer(sb, [
          "--config-file",
          config,
          "web",
          "--no-open",
          "--port",
          port,
          "--auth-token",
          server.token,
        ]);
      };
      await server.stop();
      await waitForText(page, ".link-state", "reconnecting");
      await listFailed;
      const listedAgain = page.waitForResponse((r) =>
        r.url().includes("/api/sessions/?") && r.ok()
      );
      await restart();
      await waitForText(page, ".link-state", "ready");
      await listedAgain;
      assertEquals(await page.$$eval(".toast", (ts: Element[]) => ts.length), 0);
      // An action while the server is away says so in words (not "Failed to fetch").
      await server.stop();
      await waitForText(page, ".link-state", "reconnecting");
      await clickText(page, ".msg-actions button", "Fork from here");
      assertEquals(
        await waitForText(page, ".toast", "Cannot reach"),
        "Cannot reach the kimi server: it stopped or the network is down. Start it again; " +
          "this page reconnects by itself.Dismiss",
      );
      // An upload that failed can be taken off the composer (it never reached the server).
      await Deno.writeTextFile(`${sb.root}/notes.txt`, "notes\n");
      await (await page.$('.composer input[type="file"]'))!.uploadFile(`${sb.root}/notes.txt`);
      assertEquals(
        await waitForText(page, ".attachments .chip.failed", "notes.txt"),
        "notes.txt (failed: Cannot reach the kimi server: it stopped or the network is down. " +
          "Start it again; this page reconnects by itself.)×",
      );
      await page.click('.attachments .chip.failed button[aria-label="Remove notes.txt"]');
      await page.waitForFunction(() => !document.querySelector(".composer .attachments"));
      await restart();
      await waitForText(page, ".link-state", "ready");
      // --- the session is deleted elsewhere: the page says so once, and what to do
      const deleted = await fetch(`${server.base}/api/sessions/${id}`, {
        method: "DELETE",
        headers: { Authorization: `Bearer ${server.token}` },
      });
      assertEquals(deleted.status, 200, await deleted.text());
      await waitForText(page, '.empty[role="alert"] h2', "Session not found");
      assertEquals(
        await page.$eval('.empty[role="alert"] p', (p: Element) => p.textContent),
        "It may have been deleted (in another tab or window): pick another session in the " +
          "list, or start a new one.",
      );
      // --- the theme button switches to the other look, also from "auto" on a dark system
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      const look = () =>
        page.evaluate(() => [
          document.documentElement.dataset.theme,
          getComputedStyle(document.body).backgroundColor,
        ]);
      assertEquals(await look(), ["auto", "rgb(22, 24, 28)"]);
      const switchTheme = async (from: string) => {
        await page.click('button[aria-label^="Theme:"]');
        await page.waitForFunction(
          (t: string) => document.documentElement.dataset.theme !== t,
          {},
          from,
        );
      };
      await switchTheme("auto");
      assertEquals(await look(), ["light", "rgb(255, 255, 255)"]);
      await switchTheme("light");
      assertEquals(await look(), ["dark", "rgb(22, 24, 28)"]);
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop(), () => mock.close());
    }
  },
);
