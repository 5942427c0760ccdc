import { assertEquals } from "../../helpers/assert.ts";
import { denoCacheDir, missingPackages, pinnedNpmPackages } from "../../../lib/dependency_cache.ts";

Deno.test("first-run check: the npm packages of deno.json, Deno's cache dir, what is missing", async () => {
  assertEquals(
    pinnedNpmPackages({
      imports: {
        zod: "npm:zod@4.6.7",
        "@a/b/": "npm:/@a/b@1.2.3/",
        "@c/d": "npm:@c/d@0.1.0",
        local: "./lib/x.ts",
      },
    }),
    [
      { name: "zod", version: "4.6.7" },
      { name: "@a/b", version: "1.2.3" },
      { name: "@c/d", version: "0.1.0" },
    ],
  );
  assertEquals(pinnedNpmPackages(null), []);
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  assertEquals(denoCacheDir(env({ DENO_DIR: "/d", HOME: "/h" }), "linux"), "/d");
  assertEquals(denoCacheDir(env({ HOME: "/h" }), "linux"), "/h/.cache/deno");
  assertEquals(denoCacheDir(env({ HOME: "/h", XDG_CACHE_HOME: "/x" }), "linux"), "/x/deno");
  assertEquals(denoCacheDir(env({ HOME: "/h" }), "darwin"), "/h/Library/Caches/deno");
  assertEquals(denoCacheDir(env({ LOCALAPPDATA: "C:\\L" }), "windows"), "C:\\L\\deno");
  assertEquals(denoCacheDir(env({}), "linux"), null);

  const dir = await Deno.makeTempDir();
  try {
    const pk = [{ name: "zod", version: "4.6.7" }, { name: "@a/b", version: "1.2.3" }];
    assertEquals(missingPackages(dir, pk), pk);
    await Deno.mkdir(`${dir}/npm/registry.npmjs.org/zod/4.6.7`, { recursive: true });
    assertEquals(missingPackages(dir, pk), [pk[1]]);
    // a mirror's packages live under the registry URL's path
    await Deno.mkdir(`${dir}/npm/4873/npm/@a/b/1.2.3`, { recursive: true });
    assertEquals(missingPackages(dir, pk, "http://127.0.0.1:4873/npm/"), [pk[0]]);
    assertEquals(missingPackages(dir, pk), [pk[1]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
