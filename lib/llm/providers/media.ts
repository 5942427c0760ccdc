/**
 * Helpers for media parts shared by providers whose APIs take images inline.
 *
 * @module
 */

/** A decoded `data:` URL. */
export interface DataUrl {
  /** MIME type, e.g. `image/png`. */
  mimeType: string;
  /** Base64 payload. */
  base64: string;
}

/** Split a base64 `data:` URL; null for other URLs. */
export function parseDataUrl(url: string): DataUrl | null {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return m ? { mimeType: m[1], base64: m[2] } : null;
}

/** Parse tool-call arguments (a JSON object text) for APIs that want an object. */
export function parseToolArguments(args: string | null): Record<string, unknown> {
  if (!args) return {};
  try {
    const v = JSON.parse(args);
    return v && typeof v === "object" && !Array.isArray(v) ? v : { value: v };
  } catch {
    // the model produced invalid JSON; replay it verbatim so the model sees its own mistake
    return { _raw_arguments: args };
  }
}
