/**
 * What the prompt holds besides typed text: large pastes folded into a placeholder
 * (`[pasted 240 lines]`, expanded when sent), images pasted from the clipboard (`[image #1]`),
 * and `@path` mentions of image or video files. On send, the text becomes the user input the
 * model sees: plain text when there is no media, else text parts with an image (or video) part
 * right after each reference.
 *
 * @module
 */
import { extname, isAbsolute, resolve } from "node:path";
import type { ContentPart } from "../../llm/message.ts";
import type { UserInput } from "../../wire/messages.ts";

/** Pastes with at least this many lines are folded. */
export const FOLD_MIN_LINES = 10;
/** Pastes with at least this many characters are folded. */
export const FOLD_MIN_CHARS = 1000;
/** Largest media file attached, in bytes. */
export const MAX_MEDIA_BYTES = 20 * 1024 * 1024;

const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
};
const VIDEO_TYPES: Record<string, string> = {
  ".mp4": "video/mp4",
  ".mov": "video/quicktime",
  ".webm": "video/webm",
  ".mkv": "video/x-matroska",
  ".avi": "video/x-msvideo",
};

/** A media attachment problem the user can fix (too large, unreadable). */
export class AttachmentError extends Error {
  /** Create an error with a user-facing message. */
  constructor(message: string) {
    super(message);
    this.name = "AttachmentError";
  }
}

/** The MIME type of a media file name, or null when it is not an image or video. */
export function mediaTypeOf(path: string): { kind: "image" | "video"; mime: string } | null {
  const ext = extname(path).toLowerCase();
  if (IMAGE_TYPES[ext]) return { kind: "image", mime: IMAGE_TYPES[ext] };
  if (VIDEO_TYPES[ext]) return { kind: "video", mime: VIDEO_TYPES[ext] };
  return null;
}

/** A `data:` URL of bytes. */
export function dataUrl(mime: string, bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return `data:${mime};base64,${btoa(bin)}`;
}

/** The part for a media file. */
function mediaPart(kind: "image" | "video", url: string): ContentPart {
  return kind === "image"
    ? { type: "image_url", image_url: { url, id: null } }
    : { type: "video_url", video_url: { url, id: null } };
}

const MENTION_RE = /(^|\s)@("[^"]+"|\S+)/g;

/** The placeholders and pasted images of one prompt session. */
export class PromptAttachments {
  readonly #pastes = new Map<string, string>();
  readonly #images = new Map<string, { mime: string; bytes: Uint8Array }>();
  #imageSeq = 0;

  /** Fold a paste when it is large; returns the text to insert (the paste or a placeholder). */
  foldPaste(text: string): string {
    const lines = text.split("\n").length;
    if (lines < FOLD_MIN_LINES && text.length < FOLD_MIN_CHARS) return text;
    const base = lines > 1 ? `pasted ${lines} lines` : `pasted ${text.length} characters`;
    let placeholder = `[${base}]`;
    for (let n = 2; this.#pastes.has(placeholder); n++) placeholder = `[${base} #${n}]`;
    this.#pastes.set(placeholder, text);
    return placeholder;
  }

  /** Keep a pasted image; returns its placeholder (`[image #n]`). */
  addImage(mime: string, bytes: Uint8Array): string {
    const placeholder = `[image #${++this.#imageSeq}]`;
    this.#images.set(placeholder, { mime, bytes });
    return placeholder;
  }

  /** `text` with every paste placeholder replaced by the pasted text. */
  expandPastes(text: string): string {
    let out = text;
    for (const [placeholder, pasted] of this.#pastes) {
      out = out.split(placeholder).join(pasted);
    }
    return out;
  }

  /**
   * The user input for a sent line (pastes already expanded): image placeholders and `@path`
   * mentions of media files each gain their part right after the reference. Plain text when
   * there is no media. Throws {@link AttachmentError} for a file that is too large.
   */
  async toUserInput(text: string, workDir: string): Promise<UserInput> {
    type Ref = { at: number; end: number; part: () => Promise<ContentPart | null> };
    const refs: Ref[] = [];
    for (const [placeholder, img] of this.#images) {
      for (let i = text.indexOf(placeholder); i >= 0; i = text.indexOf(placeholder, i + 1)) {
        refs.push({
          at: i,
          end: i + placeholder.length,
          part: () => Promise.resolve(mediaPart("image", dataUrl(img.mime, img.bytes))),
        });
      }
    }
    for (const m of text.matchAll(MENTION_RE)) {
      const raw = m[2].replace(/^"|"$/g, "");
      const media = mediaTypeOf(raw);
      if (!media) continue;
      const start = m.index! + m[1].length;
      refs.push({
        at: start,
        end: start + 1 + m[2].length,
        part: () => readMedia(isAbsolute(raw) ? raw : resolve(workDir, raw), media),
      });
    }
    if (refs.length === 0) return text;
    refs.sort((a, b) => a.at - b.at);
    const parts: ContentPart[] = [];
    let last = 0;
    for (const r of refs) {
      const part = await r.part();
      if (!part) continue;
      parts.push({ type: "text", text: text.slice(last, r.end) });
      parts.push(part);
      last = r.end;
    }
    if (parts.length === 0) return text;
    if (last < text.length) parts.push({ type: "text", text: text.slice(last) });
    return parts.filter((p) => p.type !== "text" || p.text !== "");
  }

  /** Forget everything (after a send). Placeholders still in the editor stay valid. */
  clearUnused(text: string): void {
    for (const k of [...this.#pastes.keys()]) if (!text.includes(k)) this.#pastes.delete(k);
    for (const k of [...this.#images.keys()]) if (!text.includes(k)) this.#images.delete(k);
  }
}

async function readMedia(
  path: string,
  media: { kind: "image" | "video"; mime: string },
): Promise<ContentPart | null> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
      throw new AttachmentError(
        `Cannot attach ${path}: kimi may not read it (run with --allow-read covering it).`,
      );
    }
    return null; // not a file: the mention stays plain text
  }
  if (!info.isFile) return null;
  if (info.size > MAX_MEDIA_BYTES) {
    throw new AttachmentError(
      `${path} is too large to attach (${(info.size / 1048576).toFixed(1)} MB; at most ${
        MAX_MEDIA_BYTES / 1048576
      } MB).`,
    );
  }
  try {
    return mediaPart(media.kind, dataUrl(media.mime, await Deno.readFile(path)));
  } catch (err) {
    throw new AttachmentError(`Could not read ${path}: ${(err as Error).message}`);
  }
}
