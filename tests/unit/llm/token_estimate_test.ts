/**
 * `estimateTextTokens`: a quarter token per ASCII code unit (rounded up) plus one per other code
 * unit, the same count as a plain loop over the string on random mixes of ASCII, Latin-1, CJK,
 * astral characters (two code units each) and lone surrogates.
 */
import { assertEquals } from "../../helpers/assert.ts";
import { estimateTextTokens } from "../../../lib/llm/token_estimate.ts";

/** The definition, code unit by code unit. */
function reference(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) < 128) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

Deno.test("estimateTextTokens counts what the code-unit loop counts", () => {
  assertEquals(estimateTextTokens(""), 0);
  assertEquals(estimateTextTokens("abcde"), 2);
  assertEquals(estimateTextTokens("\x7f\x80"), 2);
  assertEquals(estimateTextTokens("ab你好"), 3);
  assertEquals(estimateTextTokens("🙂"), 2);
  const pieces = ["a", "bcd ", "\n", "\x7f", "\x80", "é", "你", "🙂", "\ud800", "x".repeat(50)];
  let seed = 34;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2_000; i++) {
    let text = "";
    const n = Math.floor(next() * 30);
    for (let j = 0; j < n; j++) text += pieces[Math.floor(next() * pieces.length)];
    assertEquals(estimateTextTokens(text), reference(text), JSON.stringify(text));
  }
});
