/**
 * Decoding terminal input bytes into key presses (raw mode), including bracketed paste.
 *
 * @module
 */

/** One decoded key press, or a paste. */
export interface Key {
  /**
   * Key name: `char` (printable text in `text`), `paste` (text in `text`), `enter`, `newline`
   * (Ctrl-J / Alt-Enter), `tab`, `backspace`, `delete`, `up`, `down`, `left`, `right`, `home`,
   * `end`, `escape`, `ctrl-<letter>`, `alt-<char>`, `focus-in`, `focus-out`, `unknown`.
   */
  name: string;
  /** Text of a `char` or `paste` key. */
  text?: string;
}

const CSI_KEYS: Record<string, string> = {
  A: "up",
  B: "down",
  C: "right",
  D: "left",
  H: "home",
  F: "end",
  "1~": "home",
  "7~": "home",
  "4~": "end",
  "8~": "end",
  "3~": "delete",
  "5~": "pageup",
  "6~": "pagedown",
  Z: "shift-tab",
  // focus reports (CSI ? 1004 h): the terminal window gained or lost focus
  I: "focus-in",
  O: "focus-out",
};

const CSI_RE = new RegExp("^\u001b(\\[[0-9;]*[A-Za-z~]|O[A-Za-z])");
const PARTIAL_CSI_RE = new RegExp("^\u001b[\\[O][0-9;]*$");
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";

/** Stateful decoder: feed chunks of input text, get keys (keeps incomplete sequences). */
export class KeyDecoder {
  #buf = "";
  #paste: string | null = null;

  /** Decode a chunk. */
  feed(chunk: string): Key[] {
    this.#buf += chunk;
    const keys: Key[] = [];
    while (this.#buf.length > 0) {
      if (this.#paste !== null) {
        const end = this.#buf.indexOf(PASTE_END);
        if (end < 0) {
          this.#paste += this.#buf;
          this.#buf = "";
          break;
        }
        this.#paste += this.#buf.slice(0, end);
        this.#buf = this.#buf.slice(end + PASTE_END.length);
        keys.push({ name: "paste", text: this.#paste.replace(/\r\n?/g, "\n") });
        this.#paste = null;
        continue;
      }
      if (this.#buf.startsWith(PASTE_START)) {
        this.#paste = "";
        this.#buf = this.#buf.slice(PASTE_START.length);
        continue;
      }
      const c = this.#buf[0];
      if (c === "\x1b") {
        const m = this.#buf.match(CSI_RE);
        if (m) {
          this.#buf = this.#buf.slice(m[0].length);
          const body = m[1].startsWith("O") ? m[1].slice(1) : m[1].slice(1).replace(/^1;\d+/, "");
          const name = CSI_KEYS[body] ?? CSI_KEYS[body.replace(/;\d+~$/, "~")];
          keys.push({ name: name ?? "unknown" });
          continue;
        }
        if (this.#buf.length === 1) {
          this.#buf = "";
          keys.push({ name: "escape" });
          continue;
        }
        if (this.#buf[1] === "[" || this.#buf[1] === "O") {
          // an incomplete sequence: wait for more input
          if (PARTIAL_CSI_RE.test(this.#buf)) break;
        }
        const next = this.#buf[1];
        this.#buf = this.#buf.slice(2);
        keys.push(next === "\r" || next === "\n" ? { name: "newline" } : { name: `alt-${next}` });
        continue;
      }
      this.#buf = this.#buf.slice(c.length);
      const code = c.charCodeAt(0);
      if (c === "\r") keys.push({ name: "enter" });
      else if (c === "\n") keys.push({ name: "newline" });
      else if (c === "\t") keys.push({ name: "tab" });
      else if (c === "\x7f" || c === "\x08") keys.push({ name: "backspace" });
      else if (code < 32) keys.push({ name: `ctrl-${String.fromCharCode(code + 96)}` });
      else {
        // group consecutive printable characters (fast typing, unbracketed paste)
        let text = c;
        while (this.#buf.length > 0) {
          const d = this.#buf[0];
          if (d.charCodeAt(0) < 32 || d === "\x7f" || d === "\x1b") break;
          text += d;
          this.#buf = this.#buf.slice(1);
        }
        keys.push({ name: "char", text });
      }
    }
    return keys;
  }
}
