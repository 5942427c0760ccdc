/**
 * Pixel dimensions of common image formats (PNG, GIF, JPEG, BMP, WebP) read from their headers.
 *
 * @module
 */

/** Width and height in pixels. */
export interface ImageSize {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
}

function u16be(d: Uint8Array, i: number): number {
  return (d[i] << 8) | d[i + 1];
}
function u16le(d: Uint8Array, i: number): number {
  return d[i] | (d[i + 1] << 8);
}
function u24le(d: Uint8Array, i: number): number {
  return d[i] | (d[i + 1] << 8) | (d[i + 2] << 16);
}
function u32be(d: Uint8Array, i: number): number {
  return ((d[i] << 24) >>> 0) + ((d[i + 1] << 16) | (d[i + 2] << 8) | d[i + 3]);
}
function i32le(d: Uint8Array, i: number): number {
  return d[i] | (d[i + 1] << 8) | (d[i + 2] << 16) | (d[i + 3] << 24);
}
function tag(d: Uint8Array, i: number, s: string): boolean {
  for (let k = 0; k < s.length; k++) if (d[i + k] !== s.charCodeAt(k)) return false;
  return true;
}

function jpegSize(d: Uint8Array): ImageSize | null {
  let i = 2;
  while (i + 9 < d.length) {
    if (d[i] !== 0xff) {
      i++;
      continue;
    }
    const marker = d[i + 1];
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    const len = u16be(d, i + 2);
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
      marker !== 0xcc;
    if (isSof) return { height: u16be(d, i + 5), width: u16be(d, i + 7) };
    i += 2 + len;
  }
  return null;
}

/** The pixel size of an image, or `null` for formats or data this does not understand. */
export function imageSize(d: Uint8Array): ImageSize | null {
  if (d.length >= 24 && tag(d, 0, "\x89PNG\r\n\x1a\n") && tag(d, 12, "IHDR")) {
    return { width: u32be(d, 16), height: u32be(d, 20) };
  }
  if (d.length >= 10 && (tag(d, 0, "GIF87a") || tag(d, 0, "GIF89a"))) {
    return { width: u16le(d, 6), height: u16le(d, 8) };
  }
  if (d.length >= 4 && d[0] === 0xff && d[1] === 0xd8) return jpegSize(d);
  if (d.length >= 26 && tag(d, 0, "BM")) {
    return { width: Math.abs(i32le(d, 18)), height: Math.abs(i32le(d, 22)) };
  }
  if (d.length >= 30 && tag(d, 0, "RIFF") && tag(d, 8, "WEBP")) {
    if (tag(d, 12, "VP8X")) return { width: u24le(d, 24) + 1, height: u24le(d, 27) + 1 };
    if (tag(d, 12, "VP8 ")) return { width: u16le(d, 26) & 0x3fff, height: u16le(d, 28) & 0x3fff };
    if (tag(d, 12, "VP8L")) {
      const b = d.subarray(21, 25);
      return {
        width: 1 + (((b[1] & 0x3f) << 8) | b[0]),
        height: 1 + (((b[3] & 0xf) << 10) | (b[2] << 2) | ((b[1] & 0xc0) >> 6)),
      };
    }
  }
  return null;
}
