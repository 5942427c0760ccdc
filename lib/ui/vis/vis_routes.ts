/**
 * The read-only `/api/vis` routes of `kimi vis` (reference Part C), mounted on a Hono app: on
 * `kimi vis`'s own server, and on `kimi web`'s (which serves the viewer at `/vis`). Access
 * control is the host app's middleware; these routes only read the share dir, except import
 * and deleting an imported session. Errors are `{"detail": "..."}`.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import {
  deleteImported,
  ImportError,
  importSessionZip,
  listSessions,
  listSubagents,
  MAX_IMPORT_BYTES,
  readContext,
  readState,
  readWire,
  resolveSession,
  statistics,
  subagentDir,
  summarize,
  type VisSessionRef,
  zipSession,
} from "./vis_store.ts";

/** Options of {@link mountVisRoutes}. */
export interface VisRoutesOptions {
  /** The share dir whose sessions are shown. */
  shareDir: string;
  /** Whether `/api/open-in` would be offered (reported by `/capabilities`). */
  openInSupported?: boolean;
  /**
   * Refuse the two writing routes (import, delete an imported session) with 403, as
   * `kimi web --restrict-sensitive-apis` does for its sensitive APIs.
   */
  readOnly?: boolean;
}

function detail(c: Context, status: number, message: string): Response {
  return c.json({ detail: message }, status as 400);
}

const STATS_TTL_MS = 60_000;

/** Mount the `/api/vis/*` routes on `app`. */
// deno-lint-ignore no-explicit-any
export function mountVisRoutes(app: Hono<any>, opts: VisRoutesOptions): void {
  const shareDir = opts.shareDir;
  // Statistics are cached per app (not module state): one process may host several apps.
  let statsCache: { at: number; value: Promise<Record<string, unknown>> } | null = null;

  const withSession = (
    handler: (c: Context, ref: VisSessionRef) => Promise<Response>,
  ) =>
  async (c: Context): Promise<Response> => {
    const ref = await resolveSession(shareDir, c.req.param("hash") ?? "", c.req.param("id") ?? "");
    if (!ref) return detail(c, 404, "Session not found");
    return await handler(c, ref);
  };

  app.get("/api/vis/capabilities", (c) => c.json({ open_in_supported: !!opts.openInSupported }));
  app.get("/api/vis/sessions", async (c) => c.json(await listSessions(shareDir)));
  app.get("/api/vis/statistics", async (c) => {
    const now = Date.now();
    if (!statsCache || now - statsCache.at > STATS_TTL_MS) {
      statsCache = { at: now, value: statistics(shareDir) };
    }
    return c.json(await statsCache.value);
  });
  const refuseWrites = (c: Context): Response | null =>
    opts.readOnly
      ? detail(
        c,
        403,
        "Importing and deleting sessions is disabled on this server (restricted mode).",
      )
      : null;
  app.post("/api/vis/sessions/import", async (c) => {
    const refused = refuseWrites(c);
    if (refused) return refused;
    const length = Number(c.req.header("content-length") ?? "0");
    if (length > MAX_IMPORT_BYTES + 1024 * 1024) {
      return detail(c, 413, "File too large (max 200MB)");
    }
    let form: FormData;
    try {
      form = await c.req.raw.formData();
    } catch {
      return detail(c, 400, "Expected a multipart form with a `file` field holding a ZIP.");
    }
    const file = form.get("file");
    if (!(file instanceof File)) {
      return detail(c, 400, "Expected a multipart form with a `file` field holding a ZIP.");
    }
    if (file.size > MAX_IMPORT_BYTES) return detail(c, 413, "File too large (max 200MB)");
    try {
      const id = await importSessionZip(shareDir, new Uint8Array(await file.arrayBuffer()));
      statsCache = null;
      return c.json({ session_id: id, work_dir_hash: "imported" });
    } catch (err) {
      if (err instanceof ImportError) return detail(c, 400, err.message);
      throw err;
    }
  });
  app.get(
    "/api/vis/sessions/:hash/:id/wire",
    withSession(async (c, ref) => c.json(await readWire(ref.dir))),
  );
  app.get(
    "/api/vis/sessions/:hash/:id/context",
    withSession(async (c, ref) => c.json(await readContext(ref.dir))),
  );
  app.get(
    "/api/vis/sessions/:hash/:id/state",
    withSession(async (c, ref) => c.json(await readState(ref.dir))),
  );
  app.get(
    "/api/vis/sessions/:hash/:id/summary",
    withSession(async (c, ref) => c.json(await summarize(ref.dir))),
  );
  app.get(
    "/api/vis/sessions/:hash/:id/subagents",
    withSession(async (c, ref) => c.json(await listSubagents(ref.dir))),
  );
  for (const part of ["wire", "context", "meta"] as const) {
    app.get(
      `/api/vis/sessions/:hash/:id/subagents/:aid/${part}`,
      withSession(async (c, ref) => {
        const dir = await subagentDir(ref.dir, c.req.param("aid") ?? "");
        if (!dir) return detail(c, 404, "Subagent not found");
        if (part === "wire") return c.json(await readWire(dir));
        if (part === "context") return c.json(await readContext(dir));
        try {
          return c.json(JSON.parse(await Deno.readTextFile(`${dir}/meta.json`)));
        } catch {
          return c.json(null);
        }
      }),
    );
  }
  app.get(
    "/api/vis/sessions/:hash/:id/download",
    withSession(async (_c, ref) => {
      const zip = await zipSession(ref.dir);
      return new Response(zip as BodyInit, {
        headers: {
          "Content-Type": "application/zip",
          "Content-Disposition": `attachment; filename="session-${ref.id}.zip"`,
        },
      });
    }),
  );
  app.delete(
    "/api/vis/sessions/:hash/:id",
    withSession(async (c, ref) => {
      const refused = refuseWrites(c);
      if (refused) return refused;
      if (!ref.imported) return detail(c, 403, "Only imported sessions can be deleted.");
      await deleteImported(ref);
      statsCache = null;
      return c.json(null);
    }),
  );
}
