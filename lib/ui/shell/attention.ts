/**
 * Calling the user back to the shell: the terminal bell and a desktop notification sent
 * through the terminal (OSC 9, or OSC 777 for terminals that speak that one) when an approval
 * or a question waits or a background task or goal finishes. Nothing is sent while the
 * terminal reports that it has focus; a terminal that does not report focus always gets it.
 * `[notifications] terminal_bell` / `desktop` turn each off.
 *
 * @module
 */
import type { Attention } from "../../hooks/notification_hooks.ts";

/** Settings of {@link attentionSequence}. */
export interface AttentionSettings {
  /** Ring the terminal bell. */
  terminalBell: boolean;
  /** Send a desktop notification through the terminal. */
  desktop: boolean;
  /** Whether the terminal has focus (null: it does not say). */
  focused: boolean | null;
  /** The environment (`TERM`, `TERM_PROGRAM`, `TMUX` choose the notification sequence). */
  env: (name: string) => string | undefined;
}

/** Longest title or body sent to the terminal. */
const MAX_TEXT = 200;

/** Terminals that show OSC 777 `notify` (and not OSC 9). */
function speaksOsc777(env: (name: string) => string | undefined): boolean {
  const term = env("TERM") ?? "";
  return /^(rxvt|foot)/.test(term) || env("TERM_PROGRAM") === "foot";
}

/** Text safe inside an OSC string: one line, no control characters, bounded. */
function oscText(text: string, extraForbidden = ""): string {
  let out = "";
  for (const ch of text.replace(/\s+/g, " ").trim()) {
    const code = ch.codePointAt(0)!;
    if (code < 32 || code === 127 || (code >= 0x80 && code < 0xa0)) continue;
    if (extraForbidden.includes(ch)) continue;
    out += ch;
  }
  return out.length > MAX_TEXT ? `${out.slice(0, MAX_TEXT - 1)}…` : out;
}

/**
 * The bytes that call for attention for `a` ("" when nothing is to be sent: both settings off
 * or the terminal focused). Inside tmux the OSC is wrapped for tmux's passthrough.
 */
export function attentionSequence(a: Attention, s: AttentionSettings): string {
  if (s.focused === true) return "";
  let out = "";
  if (s.desktop) {
    const title = oscText(a.title, ";");
    const body = oscText(a.body.split("\n")[0] ?? "", ";");
    let osc = speaksOsc777(s.env)
      ? `\x1b]777;notify;${title};${body}\x1b\\`
      : `\x1b]9;${oscText(body ? `${a.title}: ${body}` : a.title)}\x1b\\`;
    if (s.env("TMUX")) osc = `\x1bPtmux;${osc.replaceAll("\x1b", "\x1b\x1b")}\x1b\\`;
    out += osc;
  }
  if (s.terminalBell) out += "\x07";
  return out;
}

/** The process environment, a denied read counting as unset. */
export function processEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
