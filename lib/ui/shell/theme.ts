/**
 * Colours of the shell (ANSI SGR), switchable between a dark and a light palette and turned
 * off by `NO_COLOR`.
 *
 * @module
 */

/** Palette names (config `theme`). */
export type ThemeName = "dark" | "light";

let enabled = true;
try {
  enabled = !Deno.env.get("NO_COLOR");
} catch {
  enabled = true;
}
let theme: ThemeName = "dark";

/** Select the palette. */
export function setTheme(name: ThemeName): void {
  theme = name;
}

/** Whether colours are on. */
export function colorsEnabled(): boolean {
  return enabled;
}

const sgr = (open: string, close = "0") => (text: string) =>
  enabled && text ? `\x1b[${open}m${text}\x1b[${close}m` : text;

/** Styling helpers. */
export const style = {
  /** De-emphasised text. */
  dim: (t: string): string => sgr("2", "22")(t),
  /** Bold text. */
  bold: (t: string): string => sgr("1", "22")(t),
  /** Italic dim text (thinking). */
  thinking: (t: string): string => sgr(theme === "dark" ? "2;3" : "3;90", "0")(t),
  /** Added diff lines. */
  added: (t: string): string => sgr(theme === "dark" ? "32" : "32;1", "39;22")(t),
  /** Removed diff lines. */
  removed: (t: string): string => sgr(theme === "dark" ? "31" : "31;1", "39;22")(t),
  /** Success marks. */
  ok: (t: string): string => sgr("32", "39")(t),
  /** Error text. */
  error: (t: string): string => sgr("31", "39")(t),
  /** Warnings and notices. */
  warn: (t: string): string => sgr("33", "39")(t),
  /** Accents (tool names, the selected option). */
  accent: (t: string): string => sgr(theme === "dark" ? "36" : "34", "39")(t),
  /** The prompt symbol. */
  prompt: (t: string, shellMode: boolean): string =>
    sgr(shellMode ? "33;1" : theme === "dark" ? "36;1" : "34;1", "0")(t),
};
