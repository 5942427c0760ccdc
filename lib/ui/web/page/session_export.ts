/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="esnext" />
/**
 * Download the open session as a ZIP (`GET /api/sessions/{id}/export`, at most 64 MiB): fetched
 * with the token in the `Authorization` header (never in a URL), then saved through a
 * short-lived object URL. A refusal (too large, unknown session) is thrown with the server's
 * words, which name the fix.
 *
 * @module
 */
import { apiBlob } from "./api.ts";

/** The file name a session's export is saved as. */
export function exportFileName(sessionId: string): string {
  return `kimi-session-${sessionId}.zip`;
}

/** Download the session's ZIP; resolves once the browser has been handed the file. */
export async function downloadSessionZip(sessionId: string): Promise<void> {
  const blob = await apiBlob(`/api/sessions/${encodeURIComponent(sessionId)}/export`);
  const url = URL.createObjectURL(blob);
  try {
    const a = document.createElement("a");
    a.href = url;
    a.download = exportFileName(sessionId);
    a.hidden = true;
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    // the click has started the download; the URL is no longer needed once it is read
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
}
