/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Plain text written for the terminal and the model (tool errors, command descriptions) with
 * its `backticked` names shown as code; everything else stays text, `<` and all.
 *
 * @module
 */
import type { ComponentChildren } from "preact";

/** `text` as children: each `backticked` run (on one line) becomes a `<code>`. */
export function withCodeSpans(text: string): ComponentChildren[] {
  return text.split(/`([^`\n]+)`/).map((part, i) => i % 2 ? <code key={i}>{part}</code> : part);
}
