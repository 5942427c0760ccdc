/**
 * The program imports zod as a namespace (`import * as z from "zod"`), never the `z` object by
 * name: the bundler can then keep only the zod members the program reads, and leaves out zod's
 * translations (some 60 modules, a third of zod), which the named `z` object would drag in.
 *
 * @module
 */
import { assertEquals } from "../../helpers/assert.ts";
import { REPO_ROOT } from "../../helpers/import_graph.ts";

/** A named import of zod's `z` object (type-only imports are erased and do not count). */
const NAMED_Z = /^\s*import\s*\{[^}]*\bz\b[^}]*\}\s*from\s*["']zod["']/m;

async function programFiles(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${dir}/${rel}`)) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...await programFiles(dir, r));
    else if (r.endsWith(".ts")) out.push(r);
  }
  return out;
}

Deno.test("zod imports: program modules import zod as a namespace", async () => {
  const offenders: string[] = [];
  for (const top of ["lib", "tools"]) {
    for (const f of await programFiles(REPO_ROOT, top)) {
      if (NAMED_Z.test(await Deno.readTextFile(`${REPO_ROOT}/${f}`))) offenders.push(f);
    }
  }
  for (const f of ["main.ts", "mod.ts"]) {
    if (NAMED_Z.test(await Deno.readTextFile(`${REPO_ROOT}/${f}`))) offenders.push(f);
  }
  assertEquals(offenders, [], 'use `import * as z from "zod"`');
});

Deno.test("zod imports: the check sees a named import and ignores namespace and type imports", () => {
  assertEquals(NAMED_Z.test('import { z } from "zod";'), true);
  assertEquals(NAMED_Z.test('import { type ZodType, z } from "zod";'), true);
  assertEquals(NAMED_Z.test('import * as z from "zod";'), false);
  assertEquals(NAMED_Z.test('import type * as z from "zod";'), false);
  assertEquals(NAMED_Z.test('import type { z } from "zod";'), false);
});
