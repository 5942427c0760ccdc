/**
 * Cheap token estimates used before the provider reports real usage (reference §2.3 item 8
 * and §6.4): ASCII characters count a quarter token each (rounded up), other characters one
 * token, media parts 2000 tokens.
 *
 * @module
 */
import type { NormalizedMessage } from "./message.ts";
import type { ToolSpec } from "./provider.ts";

const NON_ASCII = /[\u0080-\uffff]/;

/** Estimate the tokens of a string. */
export function estimateTextTokens(text: string): number {
  // The regexp engine finds the first non-ASCII code unit several times faster than a loop
  // (mostly-ASCII text, a resumed 40 MB history, is then counted at memory speed).
  const first = text.search(NON_ASCII);
  if (first < 0) return Math.ceil(text.length / 4);
  let other = 0;
  for (let i = first; i < text.length; i++) {
    if (text.charCodeAt(i) >= 128) other++;
  }
  return Math.ceil((text.length - other) / 4) + other;
}

/** Estimate of a message's text parts (chars/4), as the reference's pending estimate. */
export function estimateMessageTokens(m: NormalizedMessage): number {
  let chars = 0;
  for (const p of m.content) if (p.type === "text") chars += p.text.length;
  return Math.floor(chars / 4);
}

/** Estimate of one message of a request: its role, parts and tool calls. */
export function estimateRequestMessageTokens(m: NormalizedMessage): number {
  let n = estimateTextTokens(m.role);
  for (const p of m.content) {
    if (p.type === "text") n += estimateTextTokens(p.text);
    else if (p.type === "think") n += estimateTextTokens(p.think);
    else n += 2000;
  }
  for (const tc of m.tool_calls ?? []) {
    n += estimateTextTokens(tc.id) + estimateTextTokens(tc.function.name) +
      estimateTextTokens(tc.function.arguments ?? "");
  }
  return n;
}

/** Estimate the fixed part of a request: the system prompt and the tool schemas. */
export function estimatePreambleTokens(systemPrompt: string, tools: readonly ToolSpec[]): number {
  let n = estimateTextTokens(systemPrompt);
  for (const t of tools) {
    n += estimateTextTokens(t.name) + estimateTextTokens(t.description) +
      estimateTextTokens(JSON.stringify(t.parameters));
  }
  return n;
}

/** Estimate a whole request: system prompt, tools and messages. */
export function estimateRequestTokens(
  systemPrompt: string,
  tools: readonly ToolSpec[],
  history: readonly NormalizedMessage[],
): number {
  let n = estimatePreambleTokens(systemPrompt, tools);
  for (const m of history) n += estimateRequestMessageTokens(m);
  return n;
}
