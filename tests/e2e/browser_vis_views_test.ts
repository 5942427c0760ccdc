/**
 * The analysis views of `kimi vis` in a real browser, over a session recorded by a print run
 * (thinking, a Shell call that fails, two StatusUpdates) into whose `wire.jsonl` a ToolCall with
 * no result and a malformed line are planted: the decision path shows the thinking, the call and
 * its error, and clicking the call reveals it in the timeline; the integrity view names the
 * planted call and the skipped line; the Tools table and the usage chart and table show the
 * recorded values; the dual view puts the timeline and the context side by side on a wide
 * screen and stacks them below 1024 px; the tabs follow the arrow keys; axe finds no serious
 * violation on these views.
 *
 * @module
 */
import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { browserTest, startKimiServer, waitForText } from "../helpers/browser.ts";
import { seriousViolations } from "../helpers/axe.ts";

async function onlyWireFile(shareDir: string): Promise<string> {
  const found: string[] = [];
  for await (const hash of Deno.readDir(`${shareDir}/sessions`)) {
    for await (const session of Deno.readDir(`${shareDir}/sessions/${hash.name}`)) {
      const path = `${shareDir}/sessions/${hash.name}/${session.name}/wire.jsonl`;
      if (await Deno.stat(path).then(() => true, () => false)) found.push(path);
    }
  }
  assertEquals(found.length, 1, found.join(", "));
  return found[0];
}

const texts = (els: Element[]) => els.map((e) => (e.textContent ?? "").trim());

browserTest(
  "browser: kimi vis shows the decision path, integrity findings, tool stats, usage and the dual view",
  async (ctx) => {
    const { sb, page } = ctx;
    // The axe script is injected inline; the page's CSP would (rightly) refuse it.
    await page.setBypassCSP(true);
    const config = await sb.scriptedConfig([
      [
        "think: I should run it",
        "text: Let me look.",
        "usage: input_other=120 output=30",
        'tool_call: {"id": "tc-1", "name": "Shell", "arguments": "{\\"command\\": \\"echo vis-ok; exit 3\\"}"}',
      ].join("\n"),
      "usage: input_other=200 output=10\ntext: All done here.",
    ]);
    const run = await sb.run([
      "--config-file",
      config,
      "--yolo",
      "--print",
      "-p",
      "list files please",
    ]);
    assertEquals(run.code, 0, run.stderr);
    // Plant a ToolCall that never gets a result, and a malformed line.
    const wire = await onlyWireFile(sb.shareDir);
    const lines = (await Deno.readTextFile(wire)).trimEnd().split("\n");
    const last = JSON.parse(lines.at(-1)!);
    assertEquals(last.message.type, "TurnEnd");
    const planted = {
      timestamp: last.timestamp + 1,
      message: {
        type: "ToolCall",
        payload: {
          type: "function",
          id: "tc-planted",
          function: { name: "Glob", arguments: '{"pattern": "*.md"}' },
          extras: null,
        },
      },
    };
    await Deno.writeTextFile(wire, `${JSON.stringify(planted)}\n{"timestamp": 1, "mess\n`, {
      append: true,
    });
    const server = await startKimiServer(sb, ["vis", "--no-open", "-p", "0"]);
    try {
      await page.goto(server.url);
      await waitForText(page, ".vis-table button", "list files please");
      await page.click(".vis-table button");
      await page.waitForSelector(".vis-turn");
      assertEquals(await seriousViolations(page), []);

      // Decision path: thinking → Shell call → its error; then the planted call, unanswered.
      await page.click("#vis-tab-decisions");
      await page.waitForSelector(".vis-link");
      assertEquals(
        await page.$eval(".vis-decision-turn h3", (e: Element) => e.textContent),
        "Turn 1 · 2 tool calls · list files please",
      );
      const links = await page.$$eval(
        ".vis-link",
        (els: Element[]) =>
          els.map((l) =>
            [...l.querySelectorAll(".vis-node")].map((n) => (n.textContent ?? "").trim())
          ),
      );
      assertEquals(links.length, 2);
      assertEquals(links[0].slice(0, 2), [
        "Thinking I should run it",
        "Shell command=echo vis-ok; exit 3",
      ]);
      assertMatch(
        links[0][2],
        /^Error · (\d+ ms|\d+\.\d\d s) · Command failed with exit code: 3\. — vis-ok$/,
      );
      assertEquals(links[1], ["Glob pattern=*.md", "No result recorded"]);
      assertEquals(await seriousViolations(page), []);
      // Clicking the call shows it, highlighted and focused, in the timeline.
      await page.click(".vis-node.call");
      await page.waitForSelector('#vis-tab-timeline[aria-selected="true"]');
      await page.waitForSelector("li.vis-hl");
      const revealed = await page.$eval("li.vis-hl", (li: Element) => ({
        summary: (li.querySelector("summary")?.textContent ?? "").trim(),
        open: li.querySelector("details").open === true,
        focused: document.activeElement === li.querySelector("summary"),
        current: li.getAttribute("aria-current"),
      }));
      assertMatch(revealed.summary, /^ToolCall #4 · \+/);
      assertEquals([revealed.open, revealed.focused, revealed.current], [true, true, "true"]);

      // Integrity: the planted call and the malformed line, each named.
      await page.click("#vis-tab-integrity");
      await page.waitForSelector(".vis-finding");
      assertEquals(
        await page.$eval(".vis-integrity [role=status]", (e: Element) => e.textContent),
        "2 findings in 12 records.",
      );
      assertEquals(await page.$$eval(".vis-finding", texts), [
        "Error ToolCall Glob (id tc-planted) #11 has no ToolResult Show record #11",
        "Warning 1 line(s) of wire.jsonl could not be read (malformed or torn)",
      ]);
      assertEquals(await seriousViolations(page), []);
      // The planted record (after the turn's end, outside any step) is shown in its turn.
      await page.click(".vis-finding button");
      await page.waitForSelector("li.vis-hl");
      assertMatch(
        await page.$eval("li.vis-hl summary", (e: Element) => (e.textContent ?? "").trim()),
        /^ToolCall #11 · \+/,
      );
      assertEquals(
        await page.$eval(
          "li.vis-hl",
          (li: Element) => li.closest(".vis-step")?.querySelector("h4")?.textContent,
        ),
        "Outside any step",
      );

      // Tools: one row per tool, most called first (a tie: by name).
      await page.click("#vis-tab-tools");
      await page.waitForSelector(".vis-tool-stats tbody tr");
      const rows = await page.$$eval(
        ".vis-tool-stats tbody tr",
        (trs: Element[]) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? "")),
      );
      assertEquals(rows.map((r) => r.slice(0, 4)), [["Glob", "1", "0", "1"], [
        "Shell",
        "1",
        "1",
        "0",
      ]]);
      assertEquals(rows[0].slice(4), ["0 ms", "0 ms", "0 ms"]);
      for (const d of rows[1].slice(4)) assertMatch(d, /^(\d+ ms|\d+\.\d\d s)$/);
      assertEquals(rows[1][4], rows[1][5]);
      assertEquals(await seriousViolations(page), []);

      // Usage: the table has the StatusUpdates' values; the charts a point per value.
      await page.click("#vis-tab-usage");
      await page.waitForSelector(".vis-usage-table tbody tr");
      const usage = await page.$$eval(
        ".vis-usage-table tbody tr",
        (trs: Element[]) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? "")),
      );
      assertEquals(usage.map((r) => [r[0], r[2], r[3], r[4]]), [
        ["#5", "0.12%", "120", "30"],
        ["#9", "0.2%", "200", "10"],
      ]);
      for (const r of usage) assertMatch(r[1], /^\d+\.\d\d s$/);
      const charts = await page.$$eval(".vis-chart", (figs: Element[]) =>
        figs.map((f) => ({
          label: f.querySelector("svg")?.getAttribute("aria-label"),
          points: [...f.querySelectorAll("circle")].map((c) => c.getAttribute("data-index")),
          axis: [...f.querySelectorAll(".axis-title")].map((t) => t.textContent),
        })));
      assertEquals(charts, [
        {
          label: "Context usage chart (values in the table below)",
          points: ["5", "9"],
          axis: ["Time since the session's first record", "Context used"],
        },
        {
          label: "Tokens per step chart (values in the table below)",
          points: ["5", "9", "5", "9"],
          axis: ["Time since the session's first record", "Tokens"],
        },
      ]);
      assertEquals(
        await page.$$eval(".vis-chart:nth-of-type(1) .axis g text", texts),
        ["0%", "0.05%", "0.1%", "0.15%", "0.2%"],
      );
      assertEquals(await seriousViolations(page), []);
      // The dark theme too (contrast of the chart's and the findings' colours).
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      assertEquals(await seriousViolations(page), []);
      await page.click("#vis-tab-integrity");
      await page.waitForSelector(".vis-finding");
      assertEquals(await seriousViolations(page), []);
      await page.click("#vis-tab-decisions");
      await page.waitForSelector(".vis-link");
      assertEquals(await seriousViolations(page), []);
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);

      // Dual view: side by side on a wide screen, stacked below 1024 px.
      await page.click("#vis-tab-dual");
      await waitForText(page, ".vis-dual .context", "All done here.");
      await page.waitForSelector(".vis-dual .vis-turn");
      const boxes = () =>
        page.$$eval(".vis-dual > section", (els: Element[]) =>
          els.map((e) => {
            const r = e.getBoundingClientRect();
            return { left: r.left, top: r.top, bottom: r.bottom };
          }));
      const wide = await boxes();
      assert(wide[1].left > wide[0].left && wide[1].top === wide[0].top, JSON.stringify(wide));
      assertEquals(await seriousViolations(page), []);
      await page.setViewport({ width: 800, height: 860 });
      await page.waitForFunction(() => {
        const [a, b] = [...document.querySelectorAll(".vis-dual > section")].map((e) =>
          e.getBoundingClientRect()
        );
        return a && b && b.top >= a.bottom && a.left === b.left;
      });

      // The tabs follow the arrow keys (and keep their widths: the selected one is not bolder).
      const tabWidths = () =>
        page.$$eval(
          '[role="tab"]',
          (ts: Element[]) => ts.map((t) => Math.round(t.getBoundingClientRect().width * 100)),
        );
      const widthsBefore = await tabWidths();
      await page.focus("#vis-tab-dual");
      await page.keyboard.press("ArrowRight");
      await page.waitForSelector('#vis-tab-state[aria-selected="true"]');
      assertEquals(await tabWidths(), widthsBefore);
      assertEquals(await page.evaluate(() => document.activeElement?.id), "vis-tab-state");
      await page.keyboard.press("Home");
      await page.waitForSelector('#vis-tab-timeline[aria-selected="true"]');
      await page.keyboard.press("ArrowLeft");
      await page.waitForSelector('#vis-tab-subagents[aria-selected="true"]');
      assertEquals(await page.evaluate(() => document.activeElement?.id), "vis-tab-subagents");

      // The timeline's filter box is wide enough for its hint.
      await page.setViewport({ width: 1280, height: 860 });
      await page.click("#vis-tab-timeline");
      await page.waitForSelector(".timeline input[type=search]");
      assertEquals(
        await page.$eval(".timeline input[type=search]", (input: Element) => {
          const el = input as HTMLInputElement;
          const s = getComputedStyle(el);
          const ctx2d = document.createElement("canvas").getContext("2d")!;
          ctx2d.font = `${s.fontSize} ${s.fontFamily}`;
          const room = el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
          return ctx2d.measureText(el.placeholder).width <= room;
        }),
        true,
      );
      // On a phone the eight tabs are one row that scrolls sideways (not five rows of buttons
      // above the view), and the explorer's search box is not squeezed to a word.
      await page.setViewport({ width: 360, height: 740 });
      await page.waitForFunction(() => document.documentElement.clientWidth === 360);
      assertEquals(
        await page.$eval('[role="tablist"]', (list: Element) => {
          const tops = new Set(
            [...list.querySelectorAll('[role="tab"]')].map((t) =>
              Math.round(t.getBoundingClientRect().top)
            ),
          );
          return [tops.size, list.scrollWidth > list.clientWidth];
        }),
        [1, true],
      );
      assertEquals(await page.evaluate(() => document.documentElement.scrollWidth), 360);
      await page.goto(server.url);
      await waitForText(page, ".vis-table button", "list files please");
      assert(
        await page.$eval(
          ".vis-explorer input[type=search]",
          (e: Element) => e.getBoundingClientRect().width >= 200,
        ),
      );
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop());
    }
  },
);
