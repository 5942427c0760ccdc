/**
 * The composer's controls and the in-chat search of `kimi web`'s page in headless chromium,
 * through `main.ts web --no-open`:
 * - steer: text sent with "Steer" while the model holds its answer waits under the composer,
 *   then reaches the model inside the same turn (the next request carries it as a user
 *   message) and the chat shows it once, after a reload too; a steer the turn ends before taking
 *   in (Stop) runs as the next turn;
 * - plan toggle: switching it on puts the plan-mode reminder in the next request, and the
 *   checkbox shows the server's state after a reload (on, then off again);
 * - model and thinking picker: the next request goes to the picked model with thinking on as
 *   the kimi provider encodes it, and the config file on disk changed (global config PATCH);
 * - in-chat search: Ctrl+F and the topbar button open it, matches are counted exactly over
 *   user messages, markdown, thinking and tool cards, Enter / Shift+Enter / ▲ move the
 *   highlight (into a turn hidden behind "Show earlier messages", which is revealed), Escape
 *   closes it and gives the focus back.
 *
 * @module
 */
import { assert, assertEquals } from "../helpers/assert.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { browserTest, count, startKimiServer, waitForText } from "../helpers/browser.ts";
import type { Page } from "puppeteer-core";

type ChatMessage = { role: string; content: string | { type: string; text?: string }[] };

function textOf(m: ChatMessage): string {
  return typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("\n");
}

async function checkbox(page: Page, label: string): Promise<boolean> {
  return await page.$$eval(
    ".composer-tools label.switch",
    (els: Element[], l: string) =>
      (els.find((e) => (e.textContent ?? "").includes(l))?.querySelector("input") as
        | HTMLInputElement
        | undefined)?.checked ?? false,
    label,
  );
}

async function clickSwitch(page: Page, label: string): Promise<void> {
  await page.$$eval(
    ".composer-tools label.switch",
    (els: Element[], l: string) =>
      (els.find((e) => (e.textContent ?? "").includes(l))?.querySelector("input") as
        | HTMLInputElement
        | undefined)?.click(),
    label,
  );
}

browserTest(
  "browser: steer reaches the running turn, plan toggle sets plan mode, model and thinking picker",
  async (ctx) => {
    const { sb, page } = ctx;
    const mock = await startMockOpenAI();
    const hold = Promise.withResolvers<void>();
    mock.enqueue(
      { text: "Looking at the code.", waitFor: hold.promise },
      { text: "Checked the tests too." },
      { text: "Here is the plan." },
      { text: "Answered by the other model." },
      { text: "Still going", stall: true },
      { text: "The steer ran as a turn of its own." },
    );
    const configPath = `${sb.root}/controls-config.json`;
    const models = (model: string) => ({
      provider: "mock",
      model,
      max_context_size: 100000,
      capabilities: ["thinking"],
    });
    await Deno.writeTextFile(
      configPath,
      JSON.stringify({
        default_model: "mock",
        default_thinking: false,
        models: { mock: models("mock-model"), other: models("other-model") },
        providers: { mock: { type: "kimi", base_url: mock.url, api_key: "sk-test" } },
      }),
    );
    const server = await startKimiServer(sb, [
      "--config-file",
      configPath,
      "web",
      "--no-open",
      "--port",
      "0",
    ]);
    const chats = () => mock.requests.filter((r) => r.path === "/v1/chat/completions");
    try {
      const res = await fetch(`${server.base}/api/sessions/`, {
        method: "POST",
        headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ work_dir: sb.workDir }),
      });
      const { session_id: id } = await res.json();
      const url = `${server.base}/?session=${id}#token=${server.token}`;
      await page.goto(url);
      await waitForText(page, ".link-state", "ready");

      // Steer: the model holds its first answer while the steer goes in.
      await page.type(".composer textarea", "review the code");
      await page.keyboard.press("Enter");
      await waitForText(page, ".link-state", "working");
      while (chats().length < 1) await new Promise((r) => setTimeout(r, 50));
      await page.type(".composer textarea", "also check the tests");
      await page.$$eval(
        ".composer-row button",
        (els: Element[]) =>
          (els.find((e) => e.textContent?.trim() === "Steer") as HTMLElement).click(),
      );
      await page.waitForFunction(() =>
        (document.querySelector(".composer textarea") as HTMLTextAreaElement).value === ""
      );
      // Until the step ends the steer waits, shown under the composer (not yet in the chat).
      await waitForText(page, ".queue.steering li", "Steer: also check the tests");
      hold.resolve();
      await waitForText(page, ".md", "Checked the tests too.");
      await waitForText(page, ".link-state", "ready");
      assertEquals(chats().length, 2);
      const second = chats()[1].body.messages as ChatMessage[];
      const users = second.filter((m) => m.role === "user").map(textOf);
      assert(
        users.some((t) => t.includes("also check the tests")),
        `the steer reached the model: ${JSON.stringify(users)}`,
      );
      // In the same turn: the first answer precedes the steer in the request.
      const assistantAt = second.findIndex((m) =>
        m.role === "assistant" && textOf(m).includes("Looking at the code.")
      );
      const steerAt = second.findIndex((m) =>
        m.role === "user" && textOf(m).includes("also check the tests")
      );
      assert(assistantAt >= 0 && steerAt > assistantAt, JSON.stringify(second).slice(0, 2000));
      const steerShown = async () =>
        await page.$$eval(
          ".notice",
          (els: Element[]) =>
            els.filter((e) => (e.textContent ?? "").includes("also check the tests")).length,
        );
      assertEquals(await count(page, ".msg.user"), 1);
      assertEquals(await count(page, "section.turn"), 1);
      assertEquals(await steerShown(), 1);
      assertEquals(await count(page, ".queue.steering li"), 0);
      // A reload replays it once as well.
      await page.reload();
      await waitForText(page, ".md", "Checked the tests too.");
      await waitForText(page, ".link-state", "ready");
      assertEquals(await count(page, ".msg.user"), 1);
      assertEquals(await steerShown(), 1);

      // Plan mode: on → the next request carries the plan reminder; the server keeps it.
      assertEquals(await checkbox(page, "Plan mode"), false);
      await clickSwitch(page, "Plan mode");
      await page.waitForFunction(() =>
        [...document.querySelectorAll(".composer-tools label.switch")].some((e) =>
          e.textContent?.includes("Plan mode") && e.querySelector("input")?.checked
        )
      );
      await page.reload();
      await waitForText(page, ".link-state", "ready");
      await page.waitForFunction(() =>
        [...document.querySelectorAll(".composer-tools label.switch")].some((e) =>
          e.textContent?.includes("Plan mode") && e.querySelector("input")?.checked
        )
      );
      await page.type(".composer textarea", "plan the refactor");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md", "Here is the plan.");
      await waitForText(page, ".link-state", "ready");
      const planned = (chats()[2].body.messages as ChatMessage[]).map(textOf).join("\n");
      assert(planned.includes("Plan mode is on."), planned.slice(-3000));
      assert(!JSON.stringify(chats()[1].body).includes("Plan mode is on."));
      // Off again, and a reload shows it off.
      await clickSwitch(page, "Plan mode");
      await page.waitForFunction(() =>
        [...document.querySelectorAll(".composer-tools label.switch")].some((e) =>
          e.textContent?.includes("Plan mode") && !e.querySelector("input")?.checked
        )
      );
      await page.reload();
      await waitForText(page, ".link-state", "ready");
      await waitForText(page, ".md", "Here is the plan.");
      assertEquals(await checkbox(page, "Plan mode"), false);

      // Model and thinking: the first requests went to the default model, thinking off.
      assertEquals(chats()[0].body.model, "mock-model");
      assertEquals(chats()[0].body.thinking, { type: "disabled" });
      await page.waitForFunction(() =>
        (document.querySelector(".composer-tools select") as HTMLSelectElement | null)?.value ===
          "mock"
      );
      await page.select(".composer-tools select", "other");
      const saved = async () => JSON.parse(await Deno.readTextFile(configPath));
      while ((await saved()).default_model !== "other") {
        await new Promise((r) => setTimeout(r, 50));
      }
      assertEquals(await checkbox(page, "Thinking"), false);
      await clickSwitch(page, "Thinking");
      while ((await saved()).default_thinking !== true) {
        await new Promise((r) => setTimeout(r, 50));
      }
      await page.waitForFunction(() =>
        [...document.querySelectorAll(".composer-tools label.switch")].some((e) =>
          e.textContent?.includes("Thinking") && e.querySelector("input")?.checked
        )
      );
      const onDisk = await saved();
      assertEquals(onDisk.default_model, "other");
      assertEquals(onDisk.default_thinking, true);
      // The models and the provider stay as they were.
      assertEquals(Object.keys(onDisk.models).sort(), ["mock", "other"]);
      assertEquals(onDisk.providers.mock.base_url, mock.url);
      await waitForText(page, ".link-state", "ready");
      await page.type(".composer textarea", "and now?");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md", "Answered by the other model.");
      const last = chats()[3].body;
      assertEquals(last.model, "other-model");
      assertEquals(last.thinking?.type, "enabled");
      // The picker shows the saved state after a reload.
      await page.reload();
      await waitForText(page, ".link-state", "ready");
      await page.waitForFunction(() =>
        (document.querySelector(".composer-tools select") as HTMLSelectElement | null)?.value ===
          "other"
      );
      assertEquals(await checkbox(page, "Thinking"), true);

      // A steer the turn ends before taking in (here: Stop) runs as the next turn.
      await page.type(".composer textarea", "a long one");
      await page.keyboard.press("Enter");
      await waitForText(page, ".md", "Still going");
      await waitForText(page, ".link-state", "working");
      await page.type(".composer textarea", "then summarise");
      await page.$$eval(
        ".composer-row button",
        (els: Element[]) =>
          (els.find((e) => e.textContent?.trim() === "Steer") as HTMLElement).click(),
      );
      await waitForText(page, ".queue.steering li", "Steer: then summarise");
      await page.click(".composer button.danger");
      await waitForText(page, ".md", "The steer ran as a turn of its own.");
      await waitForText(page, ".link-state", "ready");
      assertEquals(chats().length, 6);
      const rerun = chats()[5].body.messages as ChatMessage[];
      // The last user message ends with it (after the interrupted turn's note), once.
      assert(textOf(rerun.findLast((m) => m.role === "user")!).endsWith("then summarise"));
      assertEquals(JSON.stringify(rerun).split("then summarise").length, 2);
      assertEquals(
        await page.$$eval(
          ".msg.user .user-text",
          (els: Element[]) => els.map((e) => e.textContent),
        ),
        ["review the code", "plan the refactor", "and now?", "a long one", "then summarise"],
      );
      assertEquals(await count(page, ".queue li"), 0);
      assertEquals(
        await page.$$eval(
          ".notice",
          (els: Element[]) =>
            els.filter((e) => (e.textContent ?? "").includes("then summarise")).length,
        ),
        0,
      );
      assertEquals(ctx.pageErrors, []);
    } finally {
      hold.resolve();
      ctx.afterScreenshots(() => server.stop(), () => mock.close());
    }
  },
);

/** The records of a session of `turns` turns with "zebra" in a few kinds of places. */
function searchWire(turns: number): string {
  const lines = [JSON.stringify({ type: "metadata", protocol_version: "1.10" })];
  let t = 1_700_000_000;
  const rec = (type: string, payload: unknown) =>
    lines.push(JSON.stringify({ timestamp: t++, message: { type, payload } }));
  for (let i = 0; i < turns; i++) {
    rec("TurnBegin", { user_input: i === 5 ? "Where is the Zebra?" : `Question ${i}` });
    rec("StepBegin", { n: 1 });
    if (i === 110) {
      rec("ContentPart", { type: "think", think: "thinking about a ZEBRA", encrypted: null });
    }
    if (i === 115) {
      rec("ToolCall", {
        type: "function",
        id: "tc-zebra",
        function: { name: "Shell", arguments: '{"command": "echo zebra"}' },
        extras: null,
      });
      rec("ToolResult", {
        tool_call_id: "tc-zebra",
        return_value: {
          is_error: false,
          output: "zebra\n",
          message: "",
          display: [],
          extras: null,
        },
      });
    }
    if (i === 112) {
      // Its card shows neither the arguments nor the output: only the card can be marked.
      rec("ToolCall", {
        type: "function",
        id: "tc-todo",
        function: { name: "SetTodoList", arguments: '{"todos": [{"title": "feed the zebra"}]}' },
        extras: null,
      });
      rec("ToolResult", {
        tool_call_id: "tc-todo",
        return_value: { is_error: false, output: "", message: "", display: [], extras: null },
      });
    }
    rec("ContentPart", {
      type: "text",
      text: i === 5 ? "The **zebra** is in the zoo." : `## Part ${i}\n\n- step one\n- step two\n`,
    });
    rec("TurnEnd", {});
  }
  return lines.join("\n") + "\n";
}

browserTest(
  "browser: in-chat search counts matches, moves the highlight, reveals an earlier turn",
  async (ctx) => {
    const { sb, page } = ctx;
    const config = await sb.scriptedConfig(["text: unused"]);
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
      const s = await res.json();
      await Deno.writeTextFile(`${s.session_dir}/wire.jsonl`, searchWire(120));
      await page.goto(`${server.base}/?session=${s.session_id}#token=${server.token}`);
      await waitForText(page, ".link-state", "ready");
      await waitForText(page, ".turn:last-child h2", "Part 119");
      // The first 20 turns are behind "Show earlier messages".
      await waitForText(page, ".chat > p.center button", "20 turns hidden");
      assertEquals(await count(page, 'section.turn[data-turn="5"]'), 0);

      // Ctrl+F from the composer opens the box with the focus in it.
      await page.focus(".composer textarea");
      await page.keyboard.down("Control");
      await page.keyboard.press("f");
      await page.keyboard.up("Control");
      await page.waitForFunction(() =>
        document.activeElement?.matches(".chat-search input[type=search]") ?? false
      );
      // What the search shows: count, current range, where it is, whether it is in view.
      await page.evaluate(() => {
        (globalThis as unknown as { __searchState: () => unknown }).__searchState = () => {
          const cur = CSS.highlights.get("kimi-search-current");
          const range = cur ? [...cur][0] as Range : null;
          const where = range?.startContainer.parentElement;
          const boxed = document.querySelector(".search-current");
          const chat = document.querySelector(".chat")!.getBoundingClientRect();
          const r = range?.getBoundingClientRect();
          return {
            label: document.querySelector(".search-count")?.textContent ?? "",
            text: range?.toString() ?? null,
            turn: where?.closest("section.turn")?.getAttribute("data-turn") ?? null,
            in: ["user-text", "md", "think-text", "tool-arg", "shell-output"].find((c) =>
              where?.closest(`.${c}`)
            ) ?? null,
            boxed: boxed?.closest("section.turn")?.getAttribute("data-turn") ?? null,
            visible: !!r && r.height > 0 && r.top >= chat.top && r.bottom <= chat.bottom,
          };
        };
      });
      const state = () =>
        page.evaluate(() =>
          (globalThis as unknown as { __searchState: () => unknown }).__searchState()
        );
      const expectAt = async (label: string, turn: string, inClass: string, text: string) => {
        const want = { label, text, turn, in: inClass, boxed: turn, visible: true };
        try {
          await page.waitForFunction(
            (w: string) =>
              JSON.stringify(
                (globalThis as unknown as { __searchState: () => unknown }).__searchState(),
              ) === w,
            { timeout: 30_000 },
            JSON.stringify(want),
          );
        } catch {
          assertEquals(await state(), want);
        }
      };
      await page.keyboard.type("zebra");
      // The first match is in turn 6 (index 5), hidden until now: revealed.
      await expectAt("1 of 6", "5", "user-text", "Zebra");
      assertEquals(await count(page, 'section.turn[data-turn="5"]'), 1);
      // The markdown around the match is intact: the bold word is still a <strong>.
      assertEquals(
        await page.$eval(
          'section.turn[data-turn="5"] .md strong',
          (e: Element) => e.textContent ?? "",
        ),
        "zebra",
      );
      await page.keyboard.press("Enter");
      await expectAt("2 of 6", "5", "md", "zebra");
      await page.keyboard.press("Enter");
      // Thinking: its collapsed details open to show the match.
      await expectAt("3 of 6", "110", "think-text", "ZEBRA");
      assertEquals(
        await page.$eval(
          'section.turn[data-turn="110"] details.think',
          (e: Element) => (e as HTMLDetailsElement).open,
        ),
        true,
      );
      // A match in what a card does not show (its arguments): the card is marked, in view.
      await page.keyboard.press("Enter");
      const cardMarked = () =>
        page.waitForFunction(() => {
          const card = document.querySelector(".search-current");
          const r = card?.getBoundingClientRect();
          const chat = document.querySelector(".chat")!.getBoundingClientRect();
          return document.querySelector(".search-count")?.textContent === "4 of 6" &&
            card.matches('section.turn[data-turn="112"] .tool-card.tool-SetTodoList') &&
            !CSS.highlights.has("kimi-search-current") &&
            r.height > 0 && r.top >= chat.top && r.bottom <= chat.bottom;
        });
      await cardMarked();
      await page.keyboard.press("Enter");
      await expectAt("5 of 6", "115", "tool-arg", "zebra");
      await page.keyboard.press("Enter");
      await expectAt("6 of 6", "115", "shell-output", "zebra");
      // Every match the page shows as text is highlighted.
      assertEquals(
        await page.evaluate(() => CSS.highlights.get("kimi-search")?.size ?? 0),
        5,
      );
      await page.keyboard.press("Enter");
      await expectAt("1 of 6", "5", "user-text", "Zebra");
      await page.keyboard.down("Shift");
      await page.keyboard.press("Enter");
      await page.keyboard.up("Shift");
      await expectAt("6 of 6", "115", "shell-output", "zebra");
      await page.click('.chat-search button[aria-label="Previous match"]');
      await expectAt("5 of 6", "115", "tool-arg", "zebra");
      await page.click('.chat-search button[aria-label="Previous match"]');
      await cardMarked();
      await page.click('.chat-search button[aria-label="Next match"]');
      await expectAt("5 of 6", "115", "tool-arg", "zebra");

      // Another query: counted anew; none found says so.
      await page.$eval(".chat-search input", (e: Element) => {
        (e as HTMLInputElement).value = "";
        e.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await page.focus(".chat-search input");
      await page.keyboard.type("no such animal");
      await waitForText(page, ".search-count", "No matches");
      assertEquals(await count(page, ".search-current"), 0);
      await page.$eval(".chat-search input", (e: Element) => {
        (e as HTMLInputElement).value = "";
        e.dispatchEvent(new Event("input", { bubbles: true }));
      });
      // A new query starts at the first match from the top of the view: turn 114 at the top.
      await page.waitForFunction(() => {
        const turn = document.querySelector('section.turn[data-turn="114"]');
        const chat = document.querySelector(".chat");
        turn.scrollIntoView({ block: "start" });
        chat.scrollTop += 40;
        const top = chat.getBoundingClientRect().top;
        const r = turn.getBoundingClientRect();
        return r.top < top - 20 && r.bottom > top + 20;
      });
      await page.focus(".chat-search input");
      await page.keyboard.type("part 11");
      // "Part 11" and "Part 110" … "Part 119" (headings of the markdown): "Part 114" is the 6th.
      await page.waitForFunction(() =>
        document.querySelector(".search-count")?.textContent === "6 of 11" &&
        document.querySelector(".search-current")?.closest("section.turn")
            ?.getAttribute("data-turn") === "114"
      );
      await page.keyboard.press("Enter");
      await expectAt("7 of 11", "115", "md", "Part 11");

      // Escape closes the box, clears the marks and gives the focus back to the composer.
      await page.keyboard.press("Escape");
      await page.waitForFunction(() => !document.querySelector(".chat-search"));
      await page.waitForFunction(() =>
        document.activeElement?.matches(".composer textarea") ?? false
      );
      assertEquals(await count(page, ".search-current"), 0);
      assertEquals(await page.evaluate(() => CSS.highlights.size), 0);
      // The revealed turns stay shown.
      assertEquals(await count(page, 'section.turn[data-turn="5"]'), 1);

      // The topbar button opens it too (Ctrl+K is the other shortcut).
      await page.click(".topbar button[aria-keyshortcuts]");
      await page.waitForFunction(() =>
        document.activeElement?.matches(".chat-search input[type=search]") ?? false
      );
      assertEquals(
        await page.$eval(
          ".topbar button[aria-keyshortcuts]",
          (e: Element) => e.getAttribute("aria-pressed"),
        ),
        "true",
      );
      await page.keyboard.press("Escape");
      await page.waitForFunction(() => !document.querySelector(".chat-search"));
      await page.focus(".composer textarea");
      await page.keyboard.down("Control");
      await page.keyboard.press("k");
      await page.keyboard.up("Control");
      await page.waitForFunction(() =>
        document.activeElement?.matches(".chat-search input[type=search]") ?? false
      );
      // On a 360 px phone the box and its buttons fit.
      await page.setViewport({ width: 360, height: 740 });
      await page.keyboard.type("zebra");
      await waitForText(page, ".search-count", " of 6");
      await page.waitForFunction(() => {
        const close = document.querySelector('.chat-search button[aria-label="Close search"]');
        return close.getBoundingClientRect().right <= document.documentElement.clientWidth &&
          document.documentElement.scrollWidth === document.documentElement.clientWidth;
      });
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop());
    }
  },
);
