/**
 * Compiling ripgrep (Rust `regex`) patterns to JavaScript RegExps for the pure-TS Grep engine:
 * leading inline flags, `(?P<name>...)` groups and POSIX classes are translated; errors are
 * reported in ripgrep's words where ripgrep's checks are reproducible.
 *
 * @module
 */

/** ripgrep's error for a literal newline in a pattern outside multiline mode. */
export const RG_NEWLINE_ERROR = 'rg: the literal "\\n" is not allowed in a regex\n\n' +
  "Consider enabling multiline mode with the --multiline flag (or -U for short).\n" +
  "When multiline mode is enabled, new line characters can be matched.\n";

const POSIX_CLASSES: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-\\/:-@\\[-`{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f",
};

/** Whether the pattern contains a newline, literally or as the escape `\n`. */
export function hasLiteralNewline(pattern: string): boolean {
  if (pattern.includes("\n")) return true;
  for (let i = 0; i < pattern.length - 1; i++) {
    if (pattern[i] === "\\") {
      if (pattern[i + 1] === "n") return true;
      i++;
    }
  }
  return false;
}

/** Options of {@link compileRustRegex}. */
export interface RustRegexOptions {
  /** `-i`. */
  ignoreCase: boolean;
  /** `.` matches newlines (`--multiline-dotall`). */
  dotAll: boolean;
  /** `^`/`$` match at line boundaries. */
  multiLine: boolean;
  /** Global (for iterating matches). */
  global: boolean;
}

/** A compiled pattern, or ripgrep-style error text (stderr) when it does not compile. */
export type CompiledRegex = { ok: true; regex: RegExp } | { ok: false; stderr: string };

function translate(pattern: string, flags: Set<string>): string {
  let src = pattern;
  // Leading inline flags, e.g. `(?i)` or `(?is)`.
  const lead = /^\(\?([imsUx]+)\)/.exec(src);
  if (lead) {
    for (const f of lead[1]) if (f === "i" || f === "s" || f === "m") flags.add(f);
    src = src.slice(lead[0].length);
  }
  src = src.replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, "(?<$1>");
  src = src.replace(/\[:([a-z]+):\]/g, (whole, name: string) => POSIX_CLASSES[name] ?? whole);
  return src;
}

/** Compile a ripgrep pattern. Tries Unicode mode first (like Rust), then legacy mode. */
export function compileRustRegex(pattern: string, opts: RustRegexOptions): CompiledRegex {
  const flags = new Set<string>();
  if (opts.ignoreCase) flags.add("i");
  if (opts.dotAll) flags.add("s");
  if (opts.multiLine) flags.add("m");
  if (opts.global) flags.add("g");
  const src = translate(pattern, flags);
  const base = [...flags].join("");
  let lastError = "";
  for (const extra of ["u", ""]) {
    try {
      return { ok: true, regex: new RegExp(src, base + extra) };
    } catch (e) {
      lastError = e instanceof Error ? e.message : String(e);
    }
  }
  return { ok: false, stderr: `rg: regex parse error:\n    ${pattern}\nerror: ${lastError}\n` };
}
