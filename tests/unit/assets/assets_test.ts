import { assertEquals } from "../../helpers/assert.ts";
import { renderTemplate } from "../../../lib/assets/mod.ts";
import { renderEmbedded } from "../../../scripts/embed_assets.ts";

Deno.test("embedded assets are up to date with tools/, agents/ and skills/", async () => {
  const expected = await renderEmbedded();
  const actual = await Deno.readTextFile(
    new URL("../../../lib/assets/embedded.gen.ts", import.meta.url),
  );
  assertEquals(actual, expected, "run `deno task embed`");
});

Deno.test("renderTemplate substitutes known vars and keeps unknown ones", () => {
  assertEquals(renderTemplate("a ${X} ${Y}", { X: "1" }), "a 1 ${Y}");
});
