/**
 * Terminal markdown (marked + marked-terminal, code highlighted by cli-highlight), loaded on
 * first use so the prompt comes up without it.
 *
 * @module
 */
import { stripAnsi } from "./layout.ts";
import { colorsEnabled } from "./theme.ts";

/** Renders markdown text to terminal text. */
export type MarkdownRenderer = (text: string, width: number) => string;

let loading: Promise<MarkdownRenderer> | null = null;

/**
 * marked-terminal renders a block-level `text` token (the body of a tight list item) from its
 * raw source, so `code`, *emphasis* and links in list items came out as typed. marked gives
 * such tokens their inline tokens: render those (inline text tokens have none and keep
 * marked-terminal's own rendering, which the `false` fallback selects).
 */
const inlineInBlockText = {
  renderer: {
    text(this: { parser: { parseInline(tokens: unknown[]): string } }, token: unknown) {
      const t = token as { tokens?: unknown[] } | string;
      if (typeof t === "object" && t && Array.isArray(t.tokens) && t.tokens.length > 0) {
        return this.parser.parseInline(t.tokens);
      }
      return false;
    },
  },
};

/** Load the renderer (once); resolves to a plain-text fallback if the modules fail to load. */
export function loadMarkdown(): Promise<MarkdownRenderer> {
  loading ??= (async () => {
    try {
      // non-literal specifiers keep these heavy modules out of the startup graph
      const markedSpec = "marked";
      const termSpec = "marked-terminal";
      const [{ Marked }, { markedTerminal }] = await Promise.all([
        import(markedSpec) as Promise<typeof import("marked")>,
        import(termSpec) as Promise<typeof import("marked-terminal")>,
      ]);
      const cache = new Map<number, InstanceType<typeof Marked>>();
      const forWidth = (width: number) => {
        let m = cache.get(width);
        if (!m) {
          m = new Marked();
          m.use(markedTerminal({ width, reflowText: true, tab: 2, emoji: false }) as any);
          m.use(inlineInBlockText);
          cache.set(width, m);
        }
        return m;
      };
      return (text: string, width: number) => {
        try {
          const out = forWidth(width).parse(text, { async: false }) as string;
          const plain = colorsEnabled() ? out : stripAnsi(out);
          return plain.replace(/\n+$/, "");
        } catch {
          return text.replace(/\n+$/, "");
        }
      };
    } catch {
      return (text: string) => text.replace(/\n+$/, "");
    }
  })();
  return loading;
}
