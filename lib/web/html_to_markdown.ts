/**
 * Main-content extraction from an HTML page into Markdown (@mozilla/readability on a
 * linkedom document, then turndown). The libraries are loaded on first use.
 *
 * @module
 */

/** The extracted article. */
export interface ExtractedPage {
  /** Markdown of the main content. */
  readonly markdown: string;
  /** Page title, when known. */
  readonly title: string | null;
  /** Author line, when known. */
  readonly byline: string | null;
  /** Short summary, when known. */
  readonly excerpt: string | null;
  /** Site name, when known. */
  readonly siteName: string | null;
  /** Publication time, when known. */
  readonly publishedTime: string | null;
}

// deno-lint-ignore no-explicit-any
type Doc = any;

async function loadLibraries() {
  const [{ parseHTML }, { Readability }, turndown] = await Promise.all([
    import("linkedom"),
    import("@mozilla/readability"),
    import("turndown"),
  ]);
  return { parseHTML, Readability, TurndownService: turndown.default };
}

function clean(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const v = value.replace(/\s+/g, " ").trim();
  return v ? v : null;
}

/**
 * Extract the main content of `html` (fetched from `url`, used to resolve relative links).
 * Returns `null` when no text content could be found.
 */
export async function extractMainContent(html: string, url: string): Promise<ExtractedPage | null> {
  const { parseHTML, Readability, TurndownService } = await loadLibraries();
  const doc: Doc = (parseHTML(html) as Doc).document;
  if (doc.head && !doc.querySelector("base[href]")) {
    const base = doc.createElement("base");
    base.setAttribute("href", url);
    doc.head.prepend(base);
  }
  const turndown = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
  });
  turndown.remove(["script", "style", "noscript", "template"]);

  let article: Record<string, unknown> | null = null;
  try {
    article = new Readability(doc.cloneNode(true), { keepClasses: true }).parse();
  } catch {
    article = null;
  }
  let markdown = "";
  if (typeof article?.content === "string" && article.content) {
    markdown = turndown.turndown(article.content).trim();
  }
  if (!markdown && doc.body) markdown = turndown.turndown(doc.body.innerHTML ?? "").trim();
  if (!markdown) return null;
  return {
    markdown,
    title: clean(article?.title) ?? clean(doc.title),
    byline: clean(article?.byline),
    excerpt: clean(article?.excerpt),
    siteName: clean(article?.siteName),
    publishedTime: clean(article?.publishedTime),
  };
}

/** The page as text: a `---` metadata header (known fields only) followed by the Markdown. */
export function renderExtractedPage(page: ExtractedPage, url: string): string {
  let hostname = "";
  try {
    hostname = new URL(url).hostname;
  } catch {
    // keep empty
  }
  const meta: Array<[string, string | null]> = [
    ["title", page.title],
    ["author", page.byline],
    ["url", url],
    ["hostname", hostname || null],
    ["description", page.excerpt],
    ["sitename", page.siteName],
    ["date", page.publishedTime],
  ];
  const lines = meta.filter(([, v]) => v).map(([k, v]) => `${k}: ${v}`);
  return ["---", ...lines, "---", page.markdown].join("\n") + "\n";
}
