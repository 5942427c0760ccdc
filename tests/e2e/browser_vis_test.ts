/**
 * `kimi vis` in a real browser: a session recorded by a print run (text, a Shell call and its
 * result) shows in the explorer under its work dir; opening it shows its turns, steps and tool
 * calls, and its integrity view finds no problem; the token from the banner is moved out of the
 * address bar; without the token the API refuses and the page says what to do.
 *
 * @module
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { browserTest, startKimiServer, waitForText } from "../helpers/browser.ts";

browserTest(
  "browser: kimi vis opens a recorded session and shows its turns and tool calls",
  async (ctx) => {
    const { sb, page } = ctx;
    const config = await sb.scriptedConfig([
      'text: Let me look.\ntool_call: {"id": "tc-1", "name": "Shell", "arguments": "{\\"command\\": \\"echo vis-ok\\"}"}',
      "text: All done here.",
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
    const server = await startKimiServer(sb, ["vis", "--no-open", "-p", "0"]);
    try {
      await page.goto(server.url);
      // The token left the address bar.
      await page.waitForFunction(() => !location.hash.includes("token="));
      assertEquals(new URL(page.url()).hash, "");
      const title = await waitForText(page, ".vis-table button", "list files please");
      assertStringIncludes(title, "list files please");
      assertStringIncludes(
        await page.$eval(".vis .group h2", (e: Element) => e.textContent ?? ""),
        sb.workDir,
      );
      await page.click(".vis-table button");
      await page.waitForSelector(".vis-turn");
      const turn = await page.$eval(".vis-turn summary", (e: Element) => e.textContent ?? "");
      assertStringIncludes(turn, "Turn 1");
      assertStringIncludes(turn, "2 step(s)");
      assertStringIncludes(turn, "list files please");
      const tools = await page.$$eval(
        ".vis-tools li",
        (els: Element[]) => els.map((e) => e.textContent),
      );
      assertEquals(tools, ["Shell"]);
      // The summary cards come from their own request: wait for them, not for the timeline.
      const summary = await waitForText(page, ".summary", "tool calls1");
      assertStringIncludes(summary, "tool calls1");
      // Context viewer shows the conversation.
      await page.click("#vis-tab-context");
      await waitForText(page, ".context", "All done here.");
      assert(page.url().includes("/vis/sessions/"));
      // ZIP export, then import: the copy is listed as imported, with the same records.
      const auth = { Authorization: `Bearer ${server.token}` };
      const [, hash, id] = /\/vis\/sessions\/([^/]+)\/([^/?#]+)/.exec(page.url())!;
      const zip = await fetch(`${server.base}/api/vis/sessions/${hash}/${id}/download`, {
        headers: auth,
      });
      assertEquals(zip.headers.get("content-type"), "application/zip");
      // A clean record: the integrity check finds nothing, and says how much it read.
      const wire = await fetch(`${server.base}/api/vis/sessions/${hash}/${id}/wire`, {
        headers: auth,
      }).then((r) => r.json());
      assertEquals(wire.skipped, 0);
      await page.click("#vis-tab-integrity");
      assertEquals(
        (await waitForText(page, ".vis-integrity-ok", "No problem found")).trim(),
        `No problem found in ${wire.total} records.`,
      );
      const form = new FormData();
      form.append("file", new File([await zip.arrayBuffer()], "s.zip"));
      const imported = await fetch(`${server.base}/api/vis/sessions/import`, {
        method: "POST",
        headers: auth,
        body: form,
      }).then((r) => r.json());
      const copy = await fetch(
        `${server.base}/api/vis/sessions/imported/${imported.session_id}/summary`,
        { headers: auth },
      ).then((r) => r.json());
      assertEquals([copy.turns, copy.steps, copy.tool_calls], [1, 2, 1]);
      // Only imported sessions can be deleted.
      const refused = await fetch(`${server.base}/api/vis/sessions/${hash}/${id}`, {
        method: "DELETE",
        headers: auth,
      });
      assertEquals(refused.status, 403);
      await refused.body?.cancel();
      const deleted = await fetch(
        `${server.base}/api/vis/sessions/imported/${imported.session_id}`,
        { method: "DELETE", headers: auth },
      );
      assertEquals(deleted.status, 200);
      await deleted.body?.cancel();
      // A reload keeps working with the stored token (not in the URL any more).
      await page.reload();
      await page.waitForSelector(".vis-turn");
      // Another browser profile without the token gets the token screen.
      const other = await ctx.browser.createBrowserContext();
      const p2 = await other.newPage();
      await p2.goto(`${server.base}/vis`);
      await waitForText(p2, "h1", "A token is needed");
      const res = await fetch(`${server.base}/api/vis/sessions`);
      assertEquals(res.status, 401);
      await res.body?.cancel();
      await p2.close();
      await other.close();
      assertEquals(ctx.pageErrors, []);
    } finally {
      ctx.afterScreenshots(() => server.stop());
    }
  },
);

browserTest("browser: kimi web serves the tracing viewer at /vis with its token", async (ctx) => {
  const { sb, page } = ctx;
  const config = await sb.scriptedConfig(["text: traced by the web server"]);
  const run = await sb.run(["--config-file", config, "--print", "-p", "trace in web"]);
  assertEquals(run.code, 0, run.stderr);
  const server = await startKimiServer(sb, [
    "--config-file",
    config,
    "web",
    "--no-open",
    "--port",
    "0",
  ]);
  try {
    await page.goto(`${server.base}/vis#token=${server.token}`);
    await waitForText(page, ".vis-table button", "trace in web");
    await page.click(".vis-table button");
    await waitForText(page, ".vis-turn summary", "trace in web");
    const res = await fetch(`${server.base}/api/vis/sessions`);
    assertEquals(res.status, 401);
    await res.body?.cancel();
    assertEquals(ctx.pageErrors, []);
  } finally {
    ctx.afterScreenshots(() => server.stop());
  }
});
