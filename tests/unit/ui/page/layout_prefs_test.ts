/**
 * The page's layout preferences: the sidebar width is clamped to 200–560 px and never more than
 * half the window; unknown stored text sizes read as "normal".
 *
 * @module
 */
import { assertEquals } from "../../../helpers/assert.ts";
import {
  clampSidebarWidth,
  FONT_SIZE_KEY,
  maxSidebarWidth,
  storedFontSize,
} from "../../../../lib/ui/web/page/layout_prefs.ts";

Deno.test("layout prefs: sidebar width clamped to the range and to half the window", () => {
  assertEquals(maxSidebarWidth(1600), 560);
  assertEquals(maxSidebarWidth(1100), 550);
  assertEquals(maxSidebarWidth(300), 200);
  assertEquals(clampSidebarWidth(100, 1600), 200);
  assertEquals(clampSidebarWidth(333.6, 1600), 334);
  assertEquals(clampSidebarWidth(900, 1600), 560);
  assertEquals(clampSidebarWidth(540, 1000), 500);
  assertEquals(clampSidebarWidth(Number.NaN, 1600), 290);
  assertEquals(clampSidebarWidth(Number.NaN, 480), 240);
});

Deno.test("layout prefs: stored text size", () => {
  const before = localStorage.getItem(FONT_SIZE_KEY);
  try {
    localStorage.setItem(FONT_SIZE_KEY, "large");
    assertEquals(storedFontSize(), "large");
    for (const bad of ["huge", "constructor", "__proto__", ""]) {
      localStorage.setItem(FONT_SIZE_KEY, bad);
      assertEquals(storedFontSize(), "normal");
    }
    localStorage.removeItem(FONT_SIZE_KEY);
    assertEquals(storedFontSize(), "normal");
  } finally {
    if (before === null) localStorage.removeItem(FONT_SIZE_KEY);
    else localStorage.setItem(FONT_SIZE_KEY, before);
  }
});
