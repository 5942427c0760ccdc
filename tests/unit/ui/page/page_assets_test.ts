/**
 * The embedded page: the committed `lib/ui/web/page_assets.gen.ts` matches a fresh build of
 * `lib/ui/web/page/`, the first load fits the 300 KB gzipped budget, and `pageAssets()` serves
 * the HTML shell with the hashed script and stylesheet it names.
 *
 * @module
 */
import { assert, assertEquals } from "../../../helpers/assert.ts";
import { pageAssets } from "../../../../lib/ui/web/page_assets.ts";

/** First-load budget, gzipped (issue: ≤ 300 KB). */
const BUDGET_BYTES = 300 * 1024;

async function gzipSize(bytes: Uint8Array): Promise<number> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return (await new Response(stream).arrayBuffer()).byteLength;
}

Deno.test("page assets: the generated module is up to date with the page sources", async () => {
  const script = new URL("../../../../scripts/build_page.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "-A", script, "--check"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 0, text);
});

Deno.test("page assets: the shell names the served script and stylesheet; first load within budget", async () => {
  const assets = await pageAssets();
  const html = assets.get("/index.html");
  assert(html, "the HTML shell is served");
  assertEquals(html.immutable, false);
  const text = new TextDecoder().decode(html.body);
  const refs = [...text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
  assertEquals(refs.length, 2);
  let total = await gzipSize(html.body);
  for (const ref of refs) {
    const asset = assets.get(ref);
    assert(asset, `${ref} is served`);
    assertEquals(asset.immutable, true);
    total += await gzipSize(asset.body);
  }
  assertEquals([...assets.keys()].sort(), ["/index.html", ...refs].sort());
  assert(total <= BUDGET_BYTES, `first load is ${total} bytes gzipped (budget ${BUDGET_BYTES})`);
  // Nothing is fetched from another origin.
  assert(!/https?:\/\//.test(text), text);
});
