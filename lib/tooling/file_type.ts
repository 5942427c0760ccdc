/**
 * File type detection for the file tools: text, image, video or binary, from the extension and
 * the first {@link MEDIA_SNIFF_BYTES} bytes (magic numbers, NUL bytes).
 *
 * @module
 */
import { extname } from "node:path";
import { type FilePin, openPinned } from "../fs/real_path.ts";

/** How many leading bytes are sniffed. */
export const MEDIA_SNIFF_BYTES = 512;

/** What a file holds, as far as the tools care. */
export type FileKind = "text" | "image" | "video" | "binary";

/** A detected file type. */
export interface FileType {
  /** The kind of content. */
  kind: FileKind;
  /** MIME type ("" for binary). */
  mimeType: string;
}

const IMAGE_BY_EXT: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".jpe": "image/jpeg",
  ".gif": "image/gif",
  ".bmp": "image/bmp",
  ".tif": "image/tiff",
  ".tiff": "image/tiff",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".heic": "image/heic",
  ".heif": "image/heif",
  ".avif": "image/avif",
  ".svgz": "image/svg+xml",
  ".ief": "image/ief",
  ".ras": "image/x-cmu-raster",
  ".pbm": "image/x-portable-bitmap",
  ".pgm": "image/x-portable-graymap",
  ".pnm": "image/x-portable-anymap",
  ".ppm": "image/x-portable-pixmap",
  ".rgb": "image/x-rgb",
  ".xbm": "image/x-xbitmap",
  ".xpm": "image/x-xpixmap",
  ".xwd": "image/x-xwindowdump",
};

const VIDEO_BY_EXT: Record<string, string> = {
  ".mp4": "video/mp4",
  ".mkv": "video/x-matroska",
  ".avi": "video/x-msvideo",
  ".mov": "video/quicktime",
  ".qt": "video/quicktime",
  ".wmv": "video/x-ms-wmv",
  ".webm": "video/webm",
  ".m4v": "video/x-m4v",
  ".flv": "video/x-flv",
  ".3gp": "video/3gpp",
  ".3g2": "video/3gpp2",
  ".mpeg": "video/mpeg",
  ".mpg": "video/mpeg",
  ".mpe": "video/mpeg",
  ".m1v": "video/mpeg",
  ".movie": "video/x-sgi-movie",
};

/** Extensions that are text although a MIME table would call them media. */
const TEXT_BY_EXT: Record<string, string> = { ".svg": "image/svg+xml" };

/** Extensions of formats that are not plain text (documents, archives, audio, fonts, ...). */
const NON_TEXT_EXTS = new Set([
  ".icns",
  ".psd",
  ".ai",
  ".eps",
  ".pdf",
  ".doc",
  ".docx",
  ".dot",
  ".dotx",
  ".rtf",
  ".odt",
  ".xls",
  ".xlsx",
  ".xlsm",
  ".xlt",
  ".xltx",
  ".xltm",
  ".ods",
  ".ppt",
  ".pptx",
  ".pptm",
  ".pps",
  ".ppsx",
  ".odp",
  ".pages",
  ".numbers",
  ".key",
  ".zip",
  ".rar",
  ".7z",
  ".tar",
  ".gz",
  ".tgz",
  ".bz2",
  ".xz",
  ".zst",
  ".lz",
  ".lz4",
  ".br",
  ".cab",
  ".ar",
  ".deb",
  ".rpm",
  ".mp3",
  ".wav",
  ".flac",
  ".ogg",
  ".oga",
  ".opus",
  ".aac",
  ".m4a",
  ".wma",
  ".ttf",
  ".otf",
  ".woff",
  ".woff2",
  ".exe",
  ".dll",
  ".so",
  ".dylib",
  ".bin",
  ".apk",
  ".ipa",
  ".jar",
  ".class",
  ".pyc",
  ".pyo",
  ".wasm",
  ".dmg",
  ".iso",
  ".img",
  ".sqlite",
  ".sqlite3",
  ".db",
  ".db3",
]); // deno-fmt-ignore

const FTYP_IMAGE: Record<string, string> = {
  avif: "image/avif",
  avis: "image/avif",
  heic: "image/heic",
  heif: "image/heif",
  heix: "image/heif",
  hevc: "image/heic",
  mif1: "image/heif",
  msf1: "image/heif",
};

const FTYP_VIDEO: Record<string, string> = {
  isom: "video/mp4",
  iso2: "video/mp4",
  iso5: "video/mp4",
  mp41: "video/mp4",
  mp42: "video/mp4",
  avc1: "video/mp4",
  mp4v: "video/mp4",
  m4v: "video/x-m4v",
  qt: "video/quicktime",
  "3gp4": "video/3gpp",
  "3gp5": "video/3gpp",
  "3gp6": "video/3gpp",
  "3gp7": "video/3gpp",
  "3g2": "video/3gpp2",
};

const ASF_HEADER = [
  0x30,
  0x26,
  0xb2,
  0x75,
  0x8e,
  0x66,
  0xcf,
  0x11,
  0xa6,
  0xd9,
  0x00,
  0xaa,
  0x00,
  0x62,
  0xce,
  0x6c,
];

function startsWith(data: Uint8Array, prefix: readonly number[] | string): boolean {
  const bytes = typeof prefix === "string" ? [...prefix].map((c) => c.charCodeAt(0)) : prefix;
  if (data.length < bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (data[i] !== bytes[i]) return false;
  return true;
}

function ascii(data: Uint8Array, from: number, to: number): string {
  return String.fromCharCode(...data.subarray(from, to));
}

/** Identify an image or video from its leading bytes, or `null` when no signature matches. */
export function sniffMedia(data: Uint8Array): FileType | null {
  const h = data.subarray(0, MEDIA_SNIFF_BYTES);
  const image = (mimeType: string): FileType => ({ kind: "image", mimeType });
  const video = (mimeType: string): FileType => ({ kind: "video", mimeType });
  if (startsWith(h, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return image("image/png");
  if (startsWith(h, [0xff, 0xd8, 0xff])) return image("image/jpeg");
  if (startsWith(h, "GIF87a") || startsWith(h, "GIF89a")) return image("image/gif");
  if (startsWith(h, "BM")) return image("image/bmp");
  if (startsWith(h, [0x49, 0x49, 0x2a, 0x00]) || startsWith(h, [0x4d, 0x4d, 0x00, 0x2a])) {
    return image("image/tiff");
  }
  if (startsWith(h, [0x00, 0x00, 0x01, 0x00])) return image("image/x-icon");
  if (startsWith(h, "RIFF") && h.length >= 12) {
    const chunk = ascii(h, 8, 12);
    if (chunk === "WEBP") return image("image/webp");
    if (chunk === "AVI ") return video("video/x-msvideo");
  }
  if (startsWith(h, "FLV")) return video("video/x-flv");
  if (startsWith(h, ASF_HEADER)) return video("video/x-ms-wmv");
  if (startsWith(h, [0x1a, 0x45, 0xdf, 0xa3])) {
    const lowered = ascii(h, 0, h.length).toLowerCase();
    if (lowered.includes("webm")) return video("video/webm");
    if (lowered.includes("matroska")) return video("video/x-matroska");
  }
  if (h.length >= 12 && ascii(h, 4, 8) === "ftyp") {
    const brand = ascii(h, 8, 12).toLowerCase().trim();
    if (brand in FTYP_IMAGE) return image(FTYP_IMAGE[brand]);
    if (brand in FTYP_VIDEO) return video(FTYP_VIDEO[brand]);
  }
  return null;
}

/**
 * Detect the type of a file from its name and (optionally) its first bytes. A media extension
 * wins; otherwise a media signature, then NUL bytes (binary), then known non-text extensions.
 * A signature contradicting the extension's media kind yields binary.
 */
export function detectFileType(path: string, header?: Uint8Array): FileType {
  const ext = extname(path).toLowerCase();
  let hint: FileType | null = null;
  if (ext in TEXT_BY_EXT) hint = { kind: "text", mimeType: TEXT_BY_EXT[ext] };
  else if (ext in IMAGE_BY_EXT) hint = { kind: "image", mimeType: IMAGE_BY_EXT[ext] };
  else if (ext in VIDEO_BY_EXT) hint = { kind: "video", mimeType: VIDEO_BY_EXT[ext] };
  if (hint && hint.kind !== "text") return hint;
  if (header) {
    const sniffed = sniffMedia(header);
    if (sniffed) {
      if (hint && sniffed.kind !== hint.kind) return { kind: "binary", mimeType: "" };
      return sniffed;
    }
    if (header.subarray(0, MEDIA_SNIFF_BYTES).includes(0)) return { kind: "binary", mimeType: "" };
  }
  if (hint) return hint;
  if (NON_TEXT_EXTS.has(ext)) return { kind: "binary", mimeType: "" };
  return { kind: "text", mimeType: "text/plain" };
}

/**
 * Read up to {@link MEDIA_SNIFF_BYTES} leading bytes of a file (with a pin: of that file only,
 * see {@link openPinned}).
 */
export async function readHeader(path: string, pin?: FilePin | null): Promise<Uint8Array> {
  using file = await openPinned(path, pin);
  const buf = new Uint8Array(MEDIA_SNIFF_BYTES);
  let filled = 0;
  while (filled < buf.length) {
    const n = await file.read(buf.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return buf.subarray(0, filled);
}
