/**
 * `GET /api/sessions/{id}/export`: the session as a ZIP download (Kimi-TS §B5 "`/export` ZIP
 * (≤ 64 MiB)") — the files of the session directory at the archive's top level, lock files and
 * links left out: the same archive as `kimi vis`'s download, so `kimi vis` imports it. Past
 * 64 MiB the answer is a 413 that names `kimi export`, which has no such cap.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { join } from "node:path";
import { LOCK_FILE } from "../../../session/lock.ts";
import type { Session } from "../../../session/session.ts";
import { zipSession } from "../../vis/vis_store.ts";
import { HttpError } from "./http_errors.ts";
import type { RouteDoc } from "./openapi.ts";

/** Largest ZIP the page downloads. */
export const MAX_EXPORT_BYTES = 64 * 1024 * 1024;
/**
 * Largest total size of the session's files that is zipped at all: logs and snapshots compress
 * well, but past this the archive cannot fit under {@link MAX_EXPORT_BYTES} in practice and
 * reading it would only cost memory.
 */
export const MAX_EXPORT_INPUT_BYTES = 4 * MAX_EXPORT_BYTES;

/** What the route needs from the application that mounts it. */
export interface ExportRouteOptions {
  /** Register a route in the API document. */
  doc(d: RouteDoc): void;
  /** The session of the request's `:id` (404 when unknown). */
  findSession(c: Context): Promise<Session>;
}

/** Total size of the regular files under `dir` that an export takes (links and locks skipped). */
export async function exportInputBytes(dir: string): Promise<number> {
  let total = 0;
  for await (const e of Deno.readDir(dir)) {
    if (e.name.startsWith(LOCK_FILE)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory) total += await exportInputBytes(p);
    else if (e.isFile) total += (await Deno.lstat(p)).size;
  }
  return total;
}

function mib(n: number): string {
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

function tooLarge(
  session: Pick<Session, "id" | "workDir">,
  caps: ExportCaps,
  what: string,
): HttpError {
  return new HttpError(
    413,
    `${what}, over the ${mib(caps.maxBytes)} limit of a download from the page. ` +
      `Export it in a terminal instead: kimi export ${session.id} -w '${session.workDir}'`,
  );
}

/** The caps of an export (defaults: {@link MAX_EXPORT_BYTES}, {@link MAX_EXPORT_INPUT_BYTES}). */
export interface ExportCaps {
  /** Largest ZIP. */
  maxBytes: number;
  /** Largest total of the files zipped. */
  maxInputBytes: number;
}

/** The ZIP of a session, or a 413 past the caps. */
export async function exportZip(
  session: Pick<Session, "id" | "dir" | "workDir">,
  caps: ExportCaps = { maxBytes: MAX_EXPORT_BYTES, maxInputBytes: MAX_EXPORT_INPUT_BYTES },
): Promise<Uint8Array> {
  const input = await exportInputBytes(session.dir);
  if (input > caps.maxInputBytes) {
    throw tooLarge(session, caps, `The session's files take ${mib(input)}`);
  }
  const zip = await zipSession(session.dir);
  if (zip.byteLength > caps.maxBytes) {
    throw tooLarge(session, caps, `The session's archive would take ${mib(zip.byteLength)}`);
  }
  return zip;
}

/** Mount the export route on `app`. */
// deno-lint-ignore no-explicit-any
export function mountExportRoute(app: Hono<any>, opts: ExportRouteOptions): void {
  opts.doc({
    method: "get",
    path: "/api/sessions/{id}/export",
    summary: "Download the session as a ZIP (at most 64 MiB; `kimi vis` imports it)",
    binary: true,
    errors: [404, 413, 422],
  });
  app.get("/api/sessions/:id/export", async (c) => {
    const s = await opts.findSession(c);
    const zip = await exportZip(s);
    return new Response(zip as BodyInit, {
      headers: {
        "Content-Type": "application/zip",
        // session ids are safe file names (letters, digits, `._-`)
        "Content-Disposition": `attachment; filename="kimi-session-${s.id}.zip"`,
        "Cache-Control": "no-store",
      },
    });
  });
}
