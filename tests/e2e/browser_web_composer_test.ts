/**
 * The composer of `kimi web`'s page in headless chromium (mock model on 127.0.0.1): an image
 * attached with the file picker is uploaded and reaches the model with the next prompt; a
 * prompt typed while the agent works waits in the queue; Stop cancels the running turn and the
 * queued prompt then goes out; the `/` menu lists the server's slash commands; at 360 px the
 * session list is a drawer opened by the menu button.
 *
 * @module
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { browserTest, count, startKimiServer, waitForText } from "../helpers/browser.ts";

/** A valid 2×2 red PNG. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

browserTest(
  "browser: upload an image to the model, queue while busy, cancel mid-turn, slash menu, 360px drawer",
  async (ctx) => {
    const { sb, page, dir } = ctx;
    const mock = await startMockOpenAI();
    mock.enqueue(
      { text: "I see a small red image." },
      { text: "Working on it", stall: true },
      { text: "Queued prompt answered." },
      { text: "Got the dropped and pasted files." },
    );
    const config = await sb.openaiConfig(mock.url, { capabilities: ["image_in"] });
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

      // Attach an image with the picker; it is uploaded at once, then sent with the prompt.
      const png = `${dir}/red.png`;
      await Deno.writeFile(png, Uint8Array.from(atob(PNG_BASE64), (c) => c.charCodeAt(0)));
      const picker = await page.$('.composer input[type="file"]');
      await picker!.uploadFile(png);
      await waitForText(page, ".attachments .chip.ready", "red.png");
      await page.type(".composer textarea", "What is in the image?");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md", "I see a small red image.");
      const chat = mock.requests.filter((r) => r.path === "/v1/chat/completions");
      const user = chat[0].body.messages.findLast((m: { role: string }) => m.role === "user");
      const parts = user.content as { type: string; text?: string; image_url?: { url: string } }[];
      assert(
        Array.isArray(parts),
        `user content is a list of parts: ${JSON.stringify(user.content)}`,
      );
      const image = parts.find((p) => p.type === "image_url");
      assert(image, `an image part reached the model: ${JSON.stringify(parts).slice(0, 400)}`);
      assert(image.image_url!.url.startsWith("data:image/"), image.image_url!.url.slice(0, 40));
      assertStringIncludes(JSON.stringify(parts), "What is in the image?");
      assertEquals(await count(page, ".composer .attachments .chip"), 0);
      // The chat shows the prompt's text and the file's name, not the server's wrappers.
      await waitForText(page, ".msg.user .attachments .chip", "red");
      const shown = await page.$eval(".msg.user .user-text", (e: Element) => e.textContent ?? "");
      assertEquals(shown, "What is in the image?");
      assertEquals(await count(page, ".msg.user img.thumb"), 1);
      await waitForText(page, ".link-state", "ready");

      // A turn that never ends: queue a prompt meanwhile, then stop.
      await page.type(".composer textarea", "start the long job");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md", "Working on it");
      await waitForText(page, ".link-state", "working");
      await page.type(".composer textarea", "queued follow-up");
      await page.keyboard.press("Enter");
      await waitForText(page, ".queue .queued-text", "queued follow-up");
      await page.click(".composer button.danger");
      // The cancelled turn ends, then the queued prompt goes out and is answered.
      await waitForText(page, ".md", "Queued prompt answered.");
      await waitForText(page, ".link-state", "ready");
      assertEquals(await count(page, ".queue li"), 0);
      assertEquals(await count(page, ".msg.user"), 3);
      await waitForText(page, ".notice.warn", "Cancelled");

      // The slash menu lists the commands from initialize.
      await page.type(".composer textarea", "/cl");
      await waitForText(page, '[role="listbox"][aria-label="Slash commands"] li', "/clear");
      await page.keyboard.press("Tab");
      assertEquals(
        await page.$eval(".composer textarea", (e: Element) => (e as HTMLTextAreaElement).value),
        "/clear ",
      );
      await page.$eval(".composer textarea", (e: Element) => {
        (e as HTMLTextAreaElement).value = "";
        e.dispatchEvent(new Event("input", { bubbles: true }));
      });

      // `@` completes work-dir files.
      await Deno.writeTextFile(`${sb.workDir}/notes-for-mention.md`, "x");
      await page.type(".composer textarea", "look at @notes-for");
      await waitForText(page, '[role="listbox"][aria-label="Files"] li', "@notes-for-mention.md");
      await page.keyboard.press("Tab");
      assertEquals(
        await page.$eval(".composer textarea", (e: Element) => (e as HTMLTextAreaElement).value),
        "look at @notes-for-mention.md",
      );
      await page.$eval(".composer textarea", (e: Element) => {
        (e as HTMLTextAreaElement).value = "";
        e.dispatchEvent(new Event("input", { bubbles: true }));
      });

      // A file dropped on the composer and an image pasted into it are uploaded and sent.
      await page.evaluate((b64: string) => {
        const drop = new DataTransfer();
        drop.items.add(new File(["dropped text body\n"], "dropped.txt", { type: "text/plain" }));
        document.querySelector(".composer")!.dispatchEvent(
          new DragEvent("drop", { dataTransfer: drop, bubbles: true, cancelable: true }),
        );
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const paste = new DataTransfer();
        paste.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
        document.querySelector(".composer textarea")!.dispatchEvent(
          new ClipboardEvent("paste", { clipboardData: paste, bubbles: true, cancelable: true }),
        );
      }, PNG_BASE64);
      await waitForText(page, ".composer .attachments .chip.ready", "dropped.txt");
      await waitForText(page, ".composer .attachments .chip.ready", "pasted.png");
      await page.type(".composer textarea", "two files");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md", "Got the dropped and pasted files.");
      const last = mock.requests.filter((r) => r.path === "/v1/chat/completions").at(-1)!;
      const sent = JSON.stringify(
        last.body.messages.findLast((m: { role: string }) => m.role === "user").content,
      );
      assertStringIncludes(sent, "dropped text body");
      assertStringIncludes(sent, "data:image/");
      await waitForText(page, ".link-state", "ready");

      // The model picker shows the default model; the thinking switch saves the config.
      assertEquals(
        await page.$eval(".composer-tools select", (e: Element) => (e as HTMLInputElement).value),
        "mock",
      );
      await page.click(".composer-tools label.switch input");
      await page.waitForFunction(
        async (base: string, token: string) => {
          const r = await fetch(`${base}/api/config/`, {
            headers: { Authorization: `Bearer ${token}` },
          });
          return (await r.json()).default_thinking === true;
        },
        {},
        server.base,
        server.token,
      );

      // 360 px: the session list is a drawer.
      await page.setViewport({ width: 360, height: 740 });
      const sidebarVisible = () =>
        page.$eval("#sidebar", (e: Element) => {
          const r = e.getBoundingClientRect();
          return getComputedStyle(e).visibility !== "hidden" && r.right > 0;
        });
      await page.waitForFunction(() =>
        getComputedStyle(document.querySelector("#sidebar")!).visibility === "hidden"
      );
      assertEquals(await sidebarVisible(), false);
      await page.click(".menu-button");
      await page.waitForFunction(() => {
        const e = document.querySelector("#sidebar")!;
        return getComputedStyle(e).visibility !== "hidden" && e.getBoundingClientRect().left >= 0;
      });
      assertEquals(await count(page, "#sidebar .session-open"), 1);
      const title = await page.$eval(
        "#sidebar .session-title",
        (e: Element) => e.textContent ?? "",
      );
      assert(!title.includes("<uploaded_files>"), title);
      assertEquals(
        await page.$eval(".menu-button", (e: Element) => e.getAttribute("aria-expanded")),
        "true",
      );
      await page.click("#sidebar .session-open");
      await page.waitForFunction(() =>
        getComputedStyle(document.querySelector("#sidebar")!).visibility === "hidden"
      );
      // Nothing overflows the narrow screen horizontally.
      const overflow = await page.evaluate(() =>
        document.documentElement.scrollWidth - document.documentElement.clientWidth
      );
      assertEquals(overflow, 0);
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop(), () => mock.close());
    }
  },
);
