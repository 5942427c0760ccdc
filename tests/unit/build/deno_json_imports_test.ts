/**
 * Every entry of `deno.json`'s import map is imported somewhere in the repository: a first run
 * from a checkout fetches every npm package of the map (`lib/dependency_cache.ts`, and Deno
 * installs a lockfile's packages as a whole), so an entry nothing imports costs every user a
 * download for nothing.
 *
 * @module
 */
import { assertEquals } from "../../helpers/assert.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

async function sources(): Promise<string[]> {
  const out: string[] = [`${ROOT}main.ts`, `${ROOT}mod.ts`];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".gen.ts")) out.push(path);
    }
  };
  for (const dir of ["lib", "tools", "scripts", "tests"]) await walk(`${ROOT}${dir}`);
  return out;
}

/** Entries nothing imports by a literal specifier, and why they stay. */
const KEPT: Record<string, string> = {
  commander: "the peer dependency of @commander-js/extra-typings, pinned to the same version " +
    "(the import-cost bench imports it by a computed specifier)",
};

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

Deno.test("deno.json: every import map entry is imported by some module", async () => {
  const map = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).imports as Record<
    string,
    string
  >;
  const texts = await Promise.all((await sources()).map((f) => Deno.readTextFile(f)));
  const unused = Object.keys(map).filter((key) => {
    if (key in KEPT) return false;
    // `"hono/"` maps `hono/cors`; an npm entry without the slash maps its subpaths too
    // (`highlight.js/lib/core`).
    const spec = key.endsWith("/") ? `${escape(key)}[^"']+` : `${escape(key)}(?:/[^"']+)?`;
    const re = new RegExp(`(?:from|import)\\s*\\(?\\s*["']${spec}["']`);
    return !texts.some((t) => re.test(t));
  });
  assertEquals(unused, []);
});
