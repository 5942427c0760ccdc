/**
 * Short, escaped excerpts of untrusted text (files, server replies) for error messages: an error
 * quotes at most a few dozen printable characters, never kilobytes of markup or raw binary.
 *
 * @module
 */

/** Default longest excerpt, in characters. */
export const EXCERPT_MAX = 120;

// C0/C1 controls, DEL, the replacement character (undecodable bytes), bidi overrides.
// deno-lint-ignore no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\ufffd\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` made safe to show: unprintable characters escaped (`\n`, `\u0000`, …), whitespace runs
 * kept, and cut to `max` characters with `…` when longer.
 */
export function excerpt(text: string, max: number = EXCERPT_MAX): string {
  const cut = text.length > max * 2 ? text.slice(0, max * 2) : text;
  let out = cut.replace(UNPRINTABLE, (c) => {
    switch (c) {
      case "\n":
        return "\\n";
      case "\r":
        return "\\r";
      case "\t":
        return "\\t";
      default:
        return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
    }
  });
  if (out.length > max || cut.length < text.length) out = out.slice(0, max).trimEnd() + "…";
  return out;
}

/**
 * Whether text read from a file looks binary: it holds NUL characters or many undecodable
 * bytes (U+FFFD) in its first 8 KiB.
 */
export function looksBinary(text: string): boolean {
  const head = text.slice(0, 8192);
  if (head.includes("\u0000")) return true;
  let bad = 0;
  for (const c of head) if (c === "\ufffd") bad++;
  return bad > 8 && bad * 20 > head.length;
}

/**
 * A one-line summary of an HTTP error body: an HTML page gives its `<title>` (or first heading,
 * or first line of text) instead of its markup; anything else its first non-blank line. The
 * result is escaped and at most `max` characters.
 */
export function summarizeErrorBody(body: string, max: number = EXCERPT_MAX): string {
  if (
    /^\s*<(!doctype\s+html|html|head|body)\b/i.test(body) || /<\/(html|body|title)>/i.test(body)
  ) {
    const pick = (re: RegExp) => {
      const m = body.match(re);
      return m ? htmlText(m[1]).replace(/\n/g, " ") : "";
    };
    const title = pick(/<title[^>]*>([\s\S]*?)<\/title>/i) || pick(/<h1[^>]*>([\s\S]*?)<\/h1>/i) ||
      firstLine(htmlText(body.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " ")));
    return excerpt(title || "HTML error page", max);
  }
  return excerpt(firstLine(body), max);
}

function firstLine(text: string): string {
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t) return t;
  }
  return "";
}

function htmlText(html: string): string {
  return html
    .replace(/<[^>]*>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]+/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join("\n")
    .trim();
}
