/**
 * Session titles: user text shortened for display in session lists.
 *
 * @module
 */

/**
 * Shorten `text` to at most `width` characters (code points): whitespace runs collapse to one
 * space, and a longer text is cut at the last word boundary that leaves room for the
 * placeholder (`…`). Text without a usable boundary (e.g. CJK) is cut hard. When even the
 * placeholder does not fit, the text is cut to `width` without it.
 */
export function shortenTitle(text: string, width = 50, placeholder = "…"): string {
  const collapsed = text.split(/\s+/).filter((w) => w !== "").join(" ");
  const chars = Array.from(collapsed);
  if (chars.length <= width) return collapsed;
  const room = width - Array.from(placeholder).length;
  if (room <= 0) return chars.slice(0, Math.max(0, width)).join("");
  const head = chars.slice(0, room + 1);
  const space = head.lastIndexOf(" ");
  const kept = space > 0 ? head.slice(0, space) : chars.slice(0, room);
  return kept.join("").trimEnd() + placeholder;
}
