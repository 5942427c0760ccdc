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
  const collapsed = collapsedPrefix(text, width);
  const chars = Array.from(collapsed);
  if (chars.length <= width) return collapsed;
  const room = width - Array.from(placeholder).length;
  if (room <= 0) return chars.slice(0, Math.max(0, width)).join("");
  const head = chars.slice(0, room + 1);
  const space = head.lastIndexOf(" ");
  const kept = space > 0 ? head.slice(0, space) : chars.slice(0, room);
  return kept.join("").trimEnd() + placeholder;
}

/**
 * The words of `text` joined by single spaces, up to the first that takes the result past
 * `width` code points (a word longer than that is cut): the title needs no more, and a 95 MB
 * prompt is then never split, joined or spread into an array of characters.
 */
function collapsedPrefix(text: string, width: number): string {
  const words: string[] = [];
  let points = 0;
  const word = /\S+/g;
  // a cut word keeps more than `width` code points (each takes at most two code units)
  const maxUnits = 2 * (width + 2);
  for (let m = word.exec(text); m !== null; m = word.exec(text)) {
    const w = m[0].length > maxUnits ? m[0].slice(0, maxUnits) : m[0];
    words.push(w);
    points += (words.length > 1 ? 1 : 0) + codePoints(w);
    if (points > width) break;
  }
  return words.join(" ");
}

function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}
