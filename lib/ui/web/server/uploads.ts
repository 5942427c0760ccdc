/**
 * Files uploaded into a session (`<session_dir>/uploads/`): saving them under a sanitised
 * unique name, and folding the ones not yet sent into the next prompt (reference §A6).
 *
 * @module
 */
import { extname, join } from "node:path";
import { Buffer } from "node:buffer";
import type { ContentPart } from "../../../llm/message.ts";
import { imageSize } from "../../../tooling/image_size.ts";
import type { UserInput } from "../../../wire/messages.ts";

/** Largest accepted upload. */
export const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
/** User text meaning "send the uploaded files without a message". */
export const FILES_ONLY_MESSAGE = "KIMI_FILE_UPLOAD_WITHOUT_MESSAGE";
/** The uploads directory of a session dir. */
export function uploadsDir(sessionDir: string): string {
  return join(sessionDir, "uploads");
}
/** The list of uploads already sent, left by forks. */
const SENT_FILE = ".sent";

/** A file name reduced to letters, digits, `._- ` (empty → `unnamed`), without the extension. */
export function sanitizeStem(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const ext = extname(base);
  const stem = (ext ? base.slice(0, -ext.length) : base).replace(/[^A-Za-z0-9._ -]/g, "")
    .replace(/^[. ]+/, "").slice(0, 100);
  return stem || "unnamed";
}

/** A file's extension kept only when it is plain (`.` and up to 10 letters or digits). */
export function safeExtension(name: string): string {
  const ext = extname(name.split(/[\\/]/).pop() ?? "");
  return /^\.[A-Za-z0-9]{1,10}$/.test(ext) ? ext.toLowerCase() : "";
}

/** Where an upload named `original` is stored: `<stem>_<6 hex><ext>` (never an existing file). */
export function uploadName(original: string | null): string {
  const hex = crypto.randomUUID().replace(/-/g, "").slice(0, 6);
  if (!original) return `${crypto.randomUUID()}`;
  return `${sanitizeStem(original)}_${hex}${safeExtension(original)}`;
}

/** Save `data` into the session's uploads; resolves with the stored path and name. */
export async function saveUpload(
  sessionDir: string,
  original: string | null,
  data: Uint8Array,
): Promise<{ path: string; filename: string; size: number }> {
  const dir = uploadsDir(sessionDir);
  await Deno.mkdir(dir, { recursive: true });
  for (let attempt = 0;; attempt++) {
    const filename = uploadName(original);
    const path = join(dir, filename);
    try {
      const f = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
      try {
        let off = 0;
        while (off < data.length) off += await f.write(data.subarray(off));
      } finally {
        f.close();
      }
      return { path, filename, size: data.length };
    } catch (err) {
      if (err instanceof Deno.errors.AlreadyExists && attempt < 5) continue;
      throw err;
    }
  }
}

const TEXT_EXTENSIONS = new Set([
  ".txt",
  ".md",
  ".json",
  ".yaml",
  ".yml",
  ".toml",
  ".csv",
  ".tsv",
  ".xml",
  ".html",
  ".css",
  ".js",
  ".ts",
  ".tsx",
  ".jsx",
  ".py",
  ".rs",
  ".go",
  ".java",
  ".c",
  ".h",
  ".cpp",
  ".hpp",
  ".sh",
  ".rb",
  ".php",
  ".sql",
  ".log",
  ".ini",
  ".cfg",
  ".conf",
  ".kt",
  ".swift",
  ".lua",
]);
const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};
const VIDEO_TYPES: Record<string, string> = {
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".mov": "video/quicktime",
};

/** The MIME type guessed from a file name (`application/octet-stream` when unknown). */
export function guessContentType(name: string): string {
  const ext = extname(name).toLowerCase();
  if (IMAGE_TYPES[ext]) return IMAGE_TYPES[ext];
  if (VIDEO_TYPES[ext]) return VIDEO_TYPES[ext];
  if (ext === ".json") return "application/json";
  if (ext === ".html") return "text/html";
  if (ext === ".pdf") return "application/pdf";
  if (TEXT_EXTENSIONS.has(ext)) return "text/plain";
  return "application/octet-stream";
}

/** The uploads of a session not yet sent (oldest first), skipping those in `sent`. */
export async function pendingUploads(sessionDir: string, sent: Set<string>): Promise<string[]> {
  const dir = uploadsDir(sessionDir);
  const names: { name: string; mtime: number }[] = [];
  let forked: string[] = [];
  try {
    forked = JSON.parse(await Deno.readTextFile(join(dir, SENT_FILE)));
  } catch {
    // no list
  }
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || e.name === SENT_FILE || sent.has(e.name) || forked.includes(e.name)) {
        continue;
      }
      const st = await Deno.lstat(join(dir, e.name));
      names.push({ name: e.name, mtime: st.mtime?.getTime() ?? 0 });
    }
  } catch {
    return [];
  }
  names.sort((a, b) => a.mtime - b.mtime || a.name.localeCompare(b.name));
  return names.map((n) => n.name);
}

/** What the default model can take in. */
export interface UploadCapabilities {
  /** `image_in`. */
  image: boolean;
  /** `video_in`. */
  video: boolean;
}

/** Largest text file inlined into a prompt. */
const MAX_INLINE_TEXT = 1024 * 1024;
/** Largest image inlined into a prompt (bytes; larger ones are only listed). */
const MAX_INLINE_IMAGE_BYTES = 20 * 1024 * 1024;
/** Longest side of an image inlined into a prompt (pixels). */
const MAX_IMAGE_SIDE = 4096;

/**
 * Whether an uploaded image goes into the prompt as is: a readable header, the longest side at
 * most 4096 px and at most 20 MB (images are not re-encoded here; others are only listed).
 */
async function inlineableImage(path: string): Promise<boolean> {
  const st = await Deno.stat(path);
  if (st.size > MAX_INLINE_IMAGE_BYTES) return false;
  const f = await Deno.open(path);
  try {
    const head = new Uint8Array(64 * 1024);
    const n = (await f.read(head)) ?? 0;
    const size = imageSize(head.subarray(0, n));
    return size !== null && Math.max(size.width, size.height) <= MAX_IMAGE_SIDE;
  } finally {
    f.close();
  }
}

/**
 * The prompt with the uploads `names` folded in: a `<uploaded_files>` list, then each image
 * (when the model takes images), video tag or text document, then the user's text
 * (`KIMI_FILE_UPLOAD_WITHOUT_MESSAGE` = files only). Always list-form.
 */
export async function foldUploads(
  sessionDir: string,
  names: readonly string[],
  input: UserInput,
  caps: UploadCapabilities,
): Promise<ContentPart[]> {
  const dir = uploadsDir(sessionDir);
  const parts: ContentPart[] = [];
  const paths = names.map((n) => join(dir, n));
  parts.push({
    type: "text",
    text: `<uploaded_files>\n${
      paths.map((p, i) => `${i + 1}. ${p}`).join("\n")
    }\n</uploaded_files>`,
  });
  for (const path of paths) {
    const type = guessContentType(path);
    const ext = extname(path).toLowerCase();
    if (IMAGE_TYPES[ext] && caps.image && await inlineableImage(path)) {
      const data = await Deno.readFile(path);
      parts.push({ type: "text", text: `<image path="${path}" content_type="${type}">` });
      parts.push({
        type: "image_url",
        image_url: { url: `data:${type};base64,${Buffer.from(data).toString("base64")}`, id: null },
      });
      parts.push({ type: "text", text: "</image>" });
    } else if (VIDEO_TYPES[ext] && caps.video) {
      parts.push({ type: "text", text: `<video path="${path}" content_type="${type}"></video>` });
    } else if (type.startsWith("text/") || type === "application/json") {
      const st = await Deno.stat(path);
      if (st.size > MAX_INLINE_TEXT) continue;
      const text = await Deno.readTextFile(path);
      parts.push({
        type: "text",
        text: `<document path="${path}" content_type="${type}">${text}</document>`,
      });
    }
  }
  if (typeof input === "string") {
    if (input !== FILES_ONLY_MESSAGE) parts.push({ type: "text", text: input });
  } else {
    for (const p of input) {
      if (p.type === "text" && p.text === FILES_ONLY_MESSAGE) continue;
      parts.push(p);
    }
  }
  return parts;
}
