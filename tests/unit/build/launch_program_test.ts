/**
 * What the profile launcher (`scripts/launch.ts`) passes `deno run` to load kimi: the checkout's
 * deno.json as config, the raw source over http its deno.json as import map plus the flag form
 * of `lazy-dynamic-imports` (an import map carries no settings), the bundle no config.
 *
 * @module
 */
import { assertEquals } from "../../helpers/assert.ts";
import { kimiProgram, LAZY_DYNAMIC_IMPORTS_FLAG } from "../../../scripts/launch.ts";

Deno.test("launch: config flags for a checkout, the raw source over http and the bundle", () => {
  assertEquals(kimiProgram("file:///repo/scripts/launch.ts"), {
    main: "/repo/main.ts",
    configFlags: ["--config=/repo/deno.json"],
    importFlags: [],
  });
  assertEquals(kimiProgram("https://example.test/kimi/scripts/launch.ts"), {
    main: "https://example.test/kimi/main.ts",
    configFlags: ["--import-map=https://example.test/kimi/deno.json", LAZY_DYNAMIC_IMPORTS_FLAG],
    importFlags: ["--allow-import=example.test"],
  });
  assertEquals(LAZY_DYNAMIC_IMPORTS_FLAG, "--unstable-lazy-dynamic-imports");
  assertEquals(kimiProgram("https://example.test/dist/kimi/scripts/launch.js").configFlags, [
    "--no-config",
  ]);
});
