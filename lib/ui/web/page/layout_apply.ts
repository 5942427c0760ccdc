/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Applies the layout preferences of `layout_prefs.ts` to the page: the CSS variables
 * `--sidebar-width` and `--font-size` on the root element.
 *
 * @module
 */
import {
  clampSidebarWidth,
  FONT_SIZES,
  type FontSize,
  saveFontSize,
  storedFontSize,
  storedSidebarWidth,
} from "./layout_prefs.ts";

/** Apply a sidebar width to the page (CSS variable `--sidebar-width`). */
export function applySidebarWidth(width: number): void {
  document.documentElement.style.setProperty("--sidebar-width", `${width}px`);
}

/** Apply a text size to the page (`--font-size` and `data-font-size` on the root). */
export function applyFontSize(size: FontSize): void {
  const root = document.documentElement;
  root.style.setProperty("--font-size", FONT_SIZES[size]);
  root.dataset.fontSize = size;
}

/** Apply and keep a text size. */
export function setFontSize(size: FontSize): void {
  applyFontSize(size);
  saveFontSize(size);
}

/** Apply the stored preferences before the first render (no jump in size). */
export function applyStoredLayout(): void {
  applySidebarWidth(clampSidebarWidth(storedSidebarWidth(), innerWidth));
  applyFontSize(storedFontSize());
}
