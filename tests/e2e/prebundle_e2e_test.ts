/**
 * The pre-bundled `openai` SDK of runs from the source (`lib/prebundle/`), through `main.ts`:
 * the first run builds it in the background, the next one loads it, a damaged one is replaced,
 * and a run without the permission to build leaves the cache alone.
 */
import { assert, assertEquals, assertStringIncludes } from "../helpers/assert.ts";
import { kimiSandbox } from "../helpers/kimi_process.ts";
import { startMockOpenAI } from "../helpers/mock_openai.ts";
import { prebundleFor } from "../../lib/prebundle/load.ts";

async function waitForFile(path: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const marker = await Deno.stat(`${path}.building`).catch(() => null);
    if (marker === null && await Deno.stat(path).catch(() => null)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${path} was not built within ${timeoutMs} ms`);
}

Deno.test("prebundle e2e: built after the first run, loaded by the next, replaced when damaged", async () => {
  const sb = await kimiSandbox();
  const mock = await startMockOpenAI({ defaultReply: { text: "Bundled hello." } });
  const cache = `${sb.root}/kimi-cache`;
  try {
    const config = await sb.openaiConfig(mock.url);
    const target = prebundleFor("openai", {
      getEnv: (k) => k === "KIMI_CACHE_DIR" ? cache : undefined,
    });
    if (target === null) throw new Error("no pre-bundle target");
    const log = `${sb.shareDir}/logs/kimi.log`;
    const turn = async (prompt: string, permissions?: string[]) => {
      const r = await sb.run(
        ["--print", "--debug", "--config-file", config, "-p", prompt],
        { env: { KIMI_CACHE_DIR: cache }, permissions },
      );
      assertEquals(r.code, 0, r.stderr);
      assertStringIncludes(r.stdout, "Bundled hello.");
      return r;
    };

    // 1. no bundle yet: the SDK loads from npm and the build starts in the background
    await turn("first");
    assertStringIncludes(await Deno.readTextFile(log), `building ${target.file} in the background`);
    await waitForFile(target.file);

    // 2. the next run loads the bundle
    await turn("second");
    assertStringIncludes(await Deno.readTextFile(log), `openai loaded from ${target.file}`);
    assertEquals(mock.requests.length, 2);

    // 3. a damaged bundle is removed, the turn still works, and a new one is built
    await Deno.writeTextFile(target.file, "this is not javascript\n");
    await Deno.writeTextFile(log, "");
    await turn("third");
    const third = await Deno.readTextFile(log);
    assertStringIncludes(third, `${target.file} does not load`);
    assertStringIncludes(third, `building ${target.file} in the background`);
    await waitForFile(target.file);
    assert((await Deno.stat(target.file)).size > 100_000, "a whole bundle again");

    // 4. without --allow-run the run cannot build: it loads from npm and leaves the cache alone
    await Deno.remove(target.file);
    await Deno.writeTextFile(log, "");
    await turn("fourth", [
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-net",
      "--allow-sys",
    ]);
    assertEquals(await Deno.stat(target.file).catch(() => null), null);
    assertEquals(await Deno.stat(target.marker).catch(() => null), null);
    assert(!(await Deno.readTextFile(log)).includes("in the background"), "no build started");
  } finally {
    await mock.close();
    await sb.cleanup();
  }
});
