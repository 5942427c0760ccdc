/**
 * A Python-style `repr` of wire messages, as the reference's text print mode shows them
 * (`TurnBegin(user_input='hi')`, `StepBegin(n=1)`, `TextPart(type='text', text='...')`).
 *
 * @module
 */
import type { WireMessage } from "../../wire/messages.ts";

/** Python `repr` of a string. */
export function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += "\\" + quote;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else out += ch;
  }
  return out + quote;
}

const PART_CLASS: Record<string, string> = {
  text: "TextPart",
  think: "ThinkPart",
  image_url: "ImageURLPart",
  audio_url: "AudioURLPart",
  video_url: "VideoURLPart",
};
const BLOCK_CLASS: Record<string, string> = {
  brief: "BriefDisplayBlock",
  diff: "DiffDisplayBlock",
  todo: "TodoDisplayBlock",
  shell: "ShellDisplayBlock",
  background_task: "BackgroundTaskDisplayBlock",
};

function reprValue(v: unknown, cls?: string): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "string") return pyStr(v);
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : String(v);
  if (Array.isArray(v)) return "[" + v.map((x) => reprValue(x)).join(", ") + "]";
  const o = v as Record<string, unknown>;
  const name = cls ?? classOf(o);
  if (name === null) {
    return "{" + Object.entries(o).map(([k, x]) => `${pyStr(k)}: ${reprValue(x)}`).join(", ") + "}";
  }
  return `${name}(` + Object.entries(o).map(([k, x]) => `${k}=${reprField(k, x)}`).join(", ") + ")";
}

function classOf(o: Record<string, unknown>): string | null {
  const t = o.type;
  if (typeof t === "string") {
    if (PART_CLASS[t] && (t in o || t === "text" || t === "think")) return PART_CLASS[t];
    if (BLOCK_CLASS[t]) return BLOCK_CLASS[t];
  }
  return null;
}

function reprField(key: string, v: unknown): string {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if (key === "function") return reprValue(v, "FunctionBody");
    if (key === "token_usage") return reprValue(v, "TokenUsage");
    if (key === "return_value") return reprValue(v, "ToolReturnValue");
    if (key === "image_url" || key === "audio_url" || key === "video_url") {
      return reprValue(
        v,
        key === "image_url" ? "ImageURL" : key === "audio_url" ? "AudioURL" : "VideoURL",
      );
    }
  }
  return reprValue(v);
}

/** Python-style repr of a wire message. */
export function reprWireMessage(msg: WireMessage): string {
  const payload = msg.payload as Record<string, unknown>;
  if (msg.type === "ContentPart") return reprValue(payload);
  return reprValue(payload, msg.type);
}
