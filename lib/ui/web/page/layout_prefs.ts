/**
 * Layout preferences of the page kept in this browser: the sidebar's width (set by the
 * splitter) and the text size (Settings). Both live in `localStorage` and apply as CSS variables
 * on the root element (`--sidebar-width`, `--font-size`; `layout_apply.ts` sets them). No DOM
 * here, so the rules are unit-tested under Deno.
 *
 * @module
 */

/** `localStorage` key of the sidebar width (px). */
export const SIDEBAR_WIDTH_KEY = "kimi.sidebarWidth";
/** `localStorage` key of the text size. */
export const FONT_SIZE_KEY = "kimi.fontSize";

/** Sidebar width when nothing is stored, and after a double-click on the splitter. */
export const DEFAULT_SIDEBAR_WIDTH = 290;
/** Narrowest sidebar. */
export const MIN_SIDEBAR_WIDTH = 200;
/** Widest sidebar (and never more than half the window). */
export const MAX_SIDEBAR_WIDTH = 560;

/** The text sizes offered in Settings, with their body font size. */
export const FONT_SIZES = { small: "13px", normal: "15px", large: "17px" } as const;
/** A text size name. */
export type FontSize = keyof typeof FONT_SIZES;

/** The widest sidebar a window `viewportWidth` px wide allows (at least the minimum). */
export function maxSidebarWidth(viewportWidth: number): number {
  return Math.max(MIN_SIDEBAR_WIDTH, Math.min(MAX_SIDEBAR_WIDTH, Math.floor(viewportWidth / 2)));
}

/** `width` rounded and clamped to the allowed range for a window `viewportWidth` px wide. */
export function clampSidebarWidth(width: number, viewportWidth: number): number {
  if (!Number.isFinite(width)) {
    return Math.min(DEFAULT_SIDEBAR_WIDTH, maxSidebarWidth(viewportWidth));
  }
  return Math.min(maxSidebarWidth(viewportWidth), Math.max(MIN_SIDEBAR_WIDTH, Math.round(width)));
}

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Storage disabled: the preference lasts as long as the page.
  }
}

/** The stored sidebar width (unclamped), or the default. */
export function storedSidebarWidth(): number {
  const n = Number(read(SIDEBAR_WIDTH_KEY));
  return read(SIDEBAR_WIDTH_KEY) !== null && Number.isFinite(n) && n > 0
    ? n
    : DEFAULT_SIDEBAR_WIDTH;
}

/** Keep a sidebar width for later visits. */
export function saveSidebarWidth(width: number): void {
  write(SIDEBAR_WIDTH_KEY, String(width));
}

/** The stored text size (unknown values read as "normal"). */
export function storedFontSize(): FontSize {
  const v = read(FONT_SIZE_KEY);
  return v !== null && Object.hasOwn(FONT_SIZES, v) ? v as FontSize : "normal";
}

/** Keep a text size for later visits. */
export function saveFontSize(size: FontSize): void {
  write(FONT_SIZE_KEY, size);
}
