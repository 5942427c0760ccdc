/**
 * The browser page of `kimi web` and `kimi vis`, served from the generated module
 * `page_assets.gen.ts` (built by `scripts/build_page.ts`, committed), loaded on first use so
 * other modes never parse it.
 *
 * The HTML shell is `/index.html` (the server answers it for `/` and the client's routes);
 * hashed assets under `/assets/` are immutable.
 *
 * @module
 */

/** One servable file, in the shape the server's page hook takes. */
export interface PageAsset {
  /** Body bytes. */
  body: Uint8Array;
  /** MIME type. */
  contentType: string;
  /** Whether the URL is content-hashed (cache forever); false for the HTML shell. */
  immutable: boolean;
}

/** The Content-Security-Policy the page is built for (only this origin; no third-party image). */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join("; ");

async function load(): Promise<ReadonlyMap<string, PageAsset>> {
  const { PAGE_FILES } = await import("./page_assets.gen.ts");
  const enc = new TextEncoder();
  const files = new Map<string, PageAsset>();
  for (const [path, f] of Object.entries(PAGE_FILES)) {
    files.set(path, {
      body: enc.encode(f.text),
      contentType: f.contentType,
      immutable: path.startsWith("/assets/"),
    });
  }
  return files;
}

/**
 * The page's files by URL path: `/index.html` (the HTML shell, which the server also answers
 * for `/` and client routes such as `/vis/…`) and the hashed `/assets/…` script and stylesheet.
 * Loaded once per process.
 */
export function pageAssets(): Promise<ReadonlyMap<string, PageAsset>> {
  return ASSETS;
}

/**
 * The page's files, read once when this module loads (only the web and vis servers load it);
 * immutable.
 */
const ASSETS: Promise<ReadonlyMap<string, PageAsset>> = load();
