/**
 * Kimi takes videos by reference: a `video_url` part whose URL is inline data is uploaded to
 * the Moonshot Files API (`POST /files`, purpose `video`) and sent as `ms://<file id>`, as the
 * reference does. Uploads are remembered by content, so a video in the history is uploaded once
 * per provider, not on every step. The upload goes through the `openai` SDK's Files API, loaded
 * only when a video is uploaded (see `OpenAIHttpClient.sdk`).
 *
 * @module
 */
import type OpenAI from "openai";
import type { OpenAIHttpClient } from "./openai_http.ts";
import { ChatProviderError } from "../errors.ts";
import type { ContentPart, NormalizedMessage } from "../message.ts";

const EXTENSIONS: Record<string, string> = {
  "video/mp4": "mp4",
  "video/quicktime": "mov",
  "video/webm": "webm",
  "video/x-matroska": "mkv",
  "video/x-msvideo": "avi",
  "video/mpeg": "mpeg",
};

/** Decode a base64 `data:` URL; null when `url` is not one. */
export function decodeDataUrl(url: string): { mime: string; bytes: Uint8Array } | null {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  if (!m) return null;
  const bin = atob(m[2]);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return { mime: m[1], bytes };
}

async function digest(text: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Uploads of one provider's inline videos. */
export class KimiVideoUploads {
  readonly #client: OpenAIHttpClient;
  readonly #uploaded = new Map<string, string>();

  /** Upload through this client (its base URL, key and headers). */
  constructor(client: OpenAIHttpClient) {
    this.#client = client;
  }

  /** The history with every inline video replaced by its uploaded `ms://` reference. */
  async resolve(
    history: readonly NormalizedMessage[],
    signal?: AbortSignal,
  ): Promise<NormalizedMessage[]> {
    const out: NormalizedMessage[] = [];
    for (const m of history) {
      if (!m.content.some((p) => p.type === "video_url" && p.video_url.url.startsWith("data:"))) {
        out.push(m);
        continue;
      }
      const content: ContentPart[] = [];
      for (const p of m.content) {
        if (p.type === "video_url" && p.video_url.url.startsWith("data:")) {
          const url = await this.#upload(p.video_url.url, signal);
          content.push({ type: "video_url", video_url: { url, id: p.video_url.id } });
        } else content.push(p);
      }
      out.push({ ...m, content });
    }
    return out;
  }

  async #upload(dataUrl: string, signal?: AbortSignal): Promise<string> {
    const key = await digest(dataUrl);
    const known = this.#uploaded.get(key);
    if (known) return known;
    const data = decodeDataUrl(dataUrl);
    if (!data || !data.mime.startsWith("video/")) {
      throw new ChatProviderError(
        `A video part must be a base64 data: URL of a video/* type to upload it to Kimi.`,
      );
    }
    const name = `video.${EXTENSIONS[data.mime] ?? "bin"}`;
    const file = new File([data.bytes as BlobPart], name, { type: data.mime });
    const sdk = await this.#client.sdk();
    const created = await sdk.files.create(
      { file, purpose: "video" as OpenAI.FilePurpose },
      { signal },
    );
    const url = `ms://${created.id}`;
    this.#uploaded.set(key, url);
    return url;
  }
}
