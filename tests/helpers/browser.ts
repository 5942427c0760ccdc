/**
 * Browser tests: Debian's chromium, headless, driven over the DevTools protocol by
 * `puppeteer-core`. {@link browserTest} registers a test that gets a fresh browser profile in
 * its own temp dir, saves a screenshot of the final page there, and keeps the dir (printing its
 * path) when the test fails. Without a browser the tests skip with a message — except under CI
 * (`CI=true`), where they fail.
 *
 * @module
 */
import "./browser_globals.ts";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { type KimiSandbox, kimiSandbox, MAIN_TS, sandboxEnv } from "./kimi_process.ts";

/** Where a browser may be installed (first match wins; `KIMI_TEST_CHROMIUM` overrides). */
export const BROWSER_CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
];

/** The browser executable, or null when none is installed. */
export function findBrowser(): string | null {
  const fromEnv = Deno.env.get("KIMI_TEST_CHROMIUM");
  for (const p of fromEnv ? [fromEnv] : BROWSER_CANDIDATES) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch {
      // Not there.
    }
  }
  return null;
}

/** Whether the tests run under CI (browser mandatory). */
export function underCi(): boolean {
  return /^(1|true|yes)$/i.test(Deno.env.get("CI") ?? "");
}

/** Launch headless chromium with a profile under `dir`. */
export async function launchBrowser(executablePath: string, dir: string): Promise<Browser> {
  const profile = `${dir}/profile`;
  await Deno.mkdir(profile, { recursive: true });
  return await puppeteer.launch({
    executablePath,
    headless: true,
    userDataDir: profile,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
    protocolTimeout: 120_000,
    // a loaded 2-core machine can take a while to start a browser
    timeout: 120_000,
  });
}

/** What a browser test gets. */
export interface BrowserTestContext {
  /** The browser. */
  browser: Browser;
  /** A first page (1280×860 unless the test resizes it). */
  page: Page;
  /** The test's temp dir (kept on failure). */
  dir: string;
  /** A kimi sandbox under `dir`. */
  sb: KimiSandbox;
  /** Console errors and page errors seen on any page opened through {@link watchPage}. */
  pageErrors: string[];
  /** Record console errors and uncaught exceptions of another page. */
  watchPage(page: Page): void;
  /**
   * Run `fns` once the final screenshots are taken (stop servers here, so the screenshot shows
   * the page as the test left it, not a lost connection).
   */
  afterScreenshots(...fns: (() => Promise<unknown>)[]): void;
}

/**
 * Register a browser test. The final screenshot is `final.png` in the test's dir, plus one per
 * extra page the test puts in `ctx` through `shots`.
 */
export function browserTest(
  name: string,
  fn: (ctx: BrowserTestContext) => Promise<void>,
): void {
  const exe = findBrowser();
  if (!exe && !underCi()) {
    Deno.test({
      name,
      ignore: true,
      fn() {},
    });
    console.warn(`skipping "${name}": no chromium found (install it: apt-get install chromium)`);
    return;
  }
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      if (!exe) {
        throw new Error(
          "CI=true but no browser was found: install chromium (`apt-get install chromium`) or set KIMI_TEST_CHROMIUM.",
        );
      }
      const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "kimi-browser-" }));
      const sb = await kimiSandbox({ dir, sessionFiles: false });
      const browser = await launchBrowser(exe, dir);
      const pageErrors: string[] = [];
      const watchPage = (p: Page) => {
        p.setDefaultTimeout(90_000);
        p.on("pageerror", (err) => pageErrors.push(String((err as Error).message ?? err)));
        p.on("console", (m) => {
          // DOMPurify parses untrusted markup in an inert document that inherits the page's
          // CSP, so Chromium reports the (blocked, then stripped) inline handlers it meets.
          if (
            m.type() === "error" &&
            !/Failed to load resource|Executing inline event handler violates/.test(m.text())
          ) {
            pageErrors.push(m.text());
          }
        });
      };
      const page = await browser.newPage();
      // A loaded 2-core machine: wait for states, generously.
      page.setDefaultTimeout(90_000);
      await page.setViewport({ width: 1280, height: 860 });
      watchPage(page);
      const after: (() => Promise<unknown>)[] = [];
      const afterScreenshots = (...fns: (() => Promise<unknown>)[]) => after.push(...fns);
      let failed = true;
      try {
        await fn({ browser, page, dir, sb, pageErrors, watchPage, afterScreenshots });
        failed = false;
      } finally {
        try {
          const pages = await browser.pages();
          for (let i = 0; i < pages.length; i++) {
            if (pages[i].url() === "about:blank") continue;
            await pages[i].screenshot({ path: `${dir}/final${i ? `-${i}` : ""}.png` });
          }
        } catch (err) {
          console.error(`screenshot failed: ${(err as Error).message}`);
        }
        await browser.close().catch(() => {});
        for (const f of after) await f().catch((err) => console.error(`cleanup: ${err}`));
        if (failed || Deno.env.get("KIMI_TEST_KEEP_BROWSER_DIR")) {
          console.error(`browser test "${name}": its dir (screenshots) is kept: ${dir}`);
        } else {
          await Deno.remove(dir, { recursive: true }).catch(() => {});
        }
      }
    },
  });
}

/** A spawned `kimi web` / `kimi vis` server. */
export interface KimiServer {
  /** Base URL (`http://127.0.0.1:<port>`). */
  base: string;
  /** The URL from the banner (token in the fragment). */
  url: string;
  /** The access token. */
  token: string;
  /** Everything the server printed so far. */
  output(): string;
  /** Stop it (SIGINT, then wait). */
  stop(): Promise<void>;
}

/** Spawn `main.ts <args>` in `sb` and wait for the banner's URL (with `#token=`). */
export async function startKimiServer(
  sb: KimiSandbox,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string } = {},
): Promise<KimiServer> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "-A", MAIN_TS, ...args],
    cwd: opts.cwd ?? sb.workDir,
    clearEnv: true,
    env: sandboxEnv(sb, {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      NO_COLOR: "1",
      ...opts.env,
    }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const decoder = new TextDecoder();
  const found = Promise.withResolvers<string>();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) {
      out += decoder.decode(chunk, { stream: true });
      const m = /(https?:\/\/[^\s]+#token=[A-Za-z0-9_\-]+)/.exec(out);
      if (m) found.resolve(m[1]);
    }
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const status = child.status.then((s) => {
    found.reject(new Error(`server exited (${s.code}) before printing its URL:\n${out}`));
    return s;
  });
  const url = await found.promise;
  const u = new URL(url);
  const token = new URLSearchParams(u.hash.slice(1)).get("token") ?? "";
  return {
    base: `${u.protocol}//${u.host}`,
    url,
    token,
    output: () => out,
    async stop() {
      try {
        child.kill("SIGINT");
      } catch {
        // Already gone.
      }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {
          // Gone.
        }
      }, 15_000);
      await status;
      clearTimeout(timer);
      await pumps.catch(() => {});
    },
  };
}

/** Wait until `selector` has text containing `text` (returns the element's text). */
export async function waitForText(
  page: Page,
  selector: string,
  text: string,
  timeout = 90_000,
): Promise<string> {
  await page.waitForFunction(
    (sel: string, t: string) =>
      [...document.querySelectorAll(sel)].some((e) => (e.textContent ?? "").includes(t)),
    { timeout, polling: 100 },
    selector,
    text,
  );
  return await page.$$eval(
    selector,
    (els: Element[], t: string) =>
      els.map((e) => e.textContent ?? "").find((s) => s.includes(t)) ?? "",
    text,
  );
}

/** Click the first element matching `selector` whose text contains `text`. */
export async function clickText(page: Page, selector: string, text: string): Promise<void> {
  await waitForText(page, selector, text);
  await page.$$eval(
    selector,
    (els: Element[], t: string) =>
      (els.find((e) => (e.textContent ?? "").includes(t)) as HTMLElement | undefined)?.click(),
    text,
  );
}

/** The number of elements matching `selector`. */
export async function count(page: Page, selector: string): Promise<number> {
  return await page.$$eval(selector, (els: Element[]) => els.length);
}
