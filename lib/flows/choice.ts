/**
 * Reading the model's branch choice at a flow decision node.
 *
 * @module
 */

const CHOICE_RE = /<choice>([^<]*)<\/choice>/g;

/**
 * The LAST `<choice>X</choice>` in `text` (X trimmed), or null when there is none.
 *
 * @example
 * ```ts
 * parseChoice("<choice>a</choice> then <choice> b </choice>"); // "b"
 * ```
 */
export function parseChoice(text: string | null | undefined): string | null {
  let last: string | null = null;
  for (const m of (text ?? "").matchAll(CHOICE_RE)) last = m[1];
  return last === null ? null : last.trim();
}
