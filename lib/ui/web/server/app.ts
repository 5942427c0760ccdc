/**
 * The HTTP application of `kimi web` (Hono): the access checks of every request (LAN-only,
 * Host, Origin, token, the ban after repeated wrong tokens), the REST routes of reference §A3
 * validated with zod, the per-session WebSocket of §A4, `/openapi.json` generated from the
 * route schemas, and the page through its one hook (`../page_assets.ts`).
 *
 * @module
 */
import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type * as z from "zod";
import { log } from "../../../log.ts";
import type { Session } from "../../../session/session.ts";
import { expandHome } from "../../../tooling/workspace.ts";
import { openPinned, pinFile, stillResolvesTo } from "../../../fs/real_path.ts";
import { resolve } from "node:path";
import { loadMetadata } from "../../../session/metadata.ts";
import { originAllowed } from "./access_guard.ts";
import { checkAccess } from "./request_access.ts";
import {
  ConfigChangeError,
  globalConfig,
  patchConfig,
  readConfigText,
  writeConfigText,
} from "./config_api.ts";
import { ForkError } from "./fork_turn.ts";
import { gitDiffStats } from "./git_diff.ts";
import { generateTitle } from "./session_title.ts";
import { HttpError, validate, ValidationError } from "./http_errors.ts";
import { openApiDocument, type RouteDoc } from "./openapi.ts";
import {
  ConfigTomlBodySchema,
  ConfigTomlSaveSchema,
  ConfigTomlSchema,
  CreateSessionBodySchema,
  type FileEntry,
  FileEntrySchema,
  ForkBodySchema,
  GenerateTitleBodySchema,
  GenerateTitleResponseSchema,
  GitDiffStatsSchema,
  GlobalConfigSchema,
  HealthSchema,
  ListSessionsQuerySchema,
  OpenInBodySchema,
  SessionIdSchema,
  SessionSchema,
  UpdateConfigBodySchema,
  UpdateConfigResponseSchema,
  UpdateSessionBodySchema,
  UploadResponseSchema,
} from "./schemas.ts";
import { SessionBusyError } from "./session_registry.ts";
import { guessContentType, MAX_UPLOAD_BYTES, saveUpload, uploadsDir } from "./uploads.ts";
import type { WebContext } from "./web_context.ts";
import { listingShows, resolveRoutePath, type RoutePathOptions } from "./work_files.ts";
import { attachStream } from "./stream_route.ts";
import { openIn } from "./open_in.ts";
import { mountVisRoutes } from "../../vis/vis_routes.ts";
import { mountTaskRoutes } from "./task_routes.ts";
import { mountExportRoute } from "./export_route.ts";
import { mountSearchRoute } from "./session_search.ts";
import * as zod from "zod";

/** Largest JSON body accepted. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** The bindings each request carries (the peer address from `Deno.serve`). */
export interface WebBindings {
  /** The socket peer (absent in in-process requests). */
  remoteAddr?: Deno.NetAddr;
}

type Env = { Bindings: WebBindings };
type Ctx = Context<Env>;

/** The page hook: assets by URL path. */
export type PageAssetsLoader = () => Promise<
  ReadonlyMap<string, { body: Uint8Array; contentType: string; immutable: boolean }>
>;

/** The peer address of a request ("" when unknown). */
export function peerAddress(c: Ctx): string {
  return c.env?.remoteAddr?.hostname ?? "";
}

function detail(c: Ctx, status: number, text: string): Response {
  return c.json({ detail: text }, status as 400);
}

const PUBLIC_PATHS = new Set(["/healthz", "/openapi.json"]);

function guard(ctx: WebContext): MiddlewareHandler<Env> {
  return async (c, next) => {
    const path = c.req.path;
    const isApi = path.startsWith("/api/");
    const isStream = isApi && /\/stream$/.test(path) &&
      c.req.header("upgrade")?.toLowerCase() === "websocket";
    // the socket route closes with its own codes (4401/4403/4004)
    if (isStream) return await next();
    const skipToken = c.req.method === "OPTIONS" || PUBLIC_PATHS.has(path) || !isApi;
    const refusal = checkAccess(ctx, c.req.raw, peerAddress(c), {
      tokenInQuery: c.req.method === "GET",
      skipToken,
    });
    if (refusal) return detail(c, refusal.status, refusal.detail);
    await next();
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
  };
}

async function jsonBody<T extends z.ZodType>(c: Ctx, schema: T): Promise<z.output<T>> {
  const text = await c.req.text();
  let data: unknown = undefined;
  if (text.trim()) {
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new ValidationError([{
        loc: ["body"],
        msg: `JSON decode error: ${(err as Error).message}`,
        type: "json_invalid",
      }]);
    }
  }
  return validate(schema, data ?? {}, "body");
}

/** The `Content-Disposition` value of a served file. */
export function contentDisposition(kind: "inline" | "attachment", name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * Build the application of a server; `page` loads the page's assets, served with `pageCsp`
 * as their Content-Security-Policy.
 */
export function createWebApp(
  ctx: WebContext,
  page: PageAssetsLoader,
  pageCsp?: string,
): Hono<Env> {
  const app = new Hono<Env>();
  const docs: RouteDoc[] = [];
  const doc = (d: RouteDoc) => docs.push(d);
  const sec = ctx.security;
  const pathOpts = (): RoutePathOptions => ({
    controls: ctx.controls,
    scope: ctx.scope,
    restricted: sec.restricted,
    maxDepth: sec.maxPublicDepth,
    home: ctx.home,
  });
  const jsonLimit = bodyLimit({
    maxSize: MAX_JSON_BODY_BYTES,
    onError: (c) =>
      detail(c as Ctx, 413, `Request body too large (max ${MAX_JSON_BODY_BYTES} bytes)`),
  });
  const loopbackOrigin = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;

  app.onError((err, c) => {
    if (err instanceof HttpError) return detail(c, err.status, err.message);
    if (err instanceof ValidationError) return c.json({ detail: err.items }, 422);
    if (err instanceof SessionBusyError) return detail(c, 400, err.message);
    log("ERROR", "web", `${c.req.method} ${c.req.path} failed: ${(err as Error)?.stack ?? err}`);
    return detail(c, 500, `Internal error: ${(err as Error)?.message ?? String(err)}`);
  });
  app.notFound((c) => {
    const read = c.req.method === "GET" || c.req.method === "HEAD";
    return read ? detail(c, 404, "Not Found") : detail(c, 405, "Method Not Allowed");
  });
  app.use(
    "*",
    cors({
      origin: (origin) =>
        sec.allowedOrigins.length > 0
          ? (originAllowed(origin, sec.allowedOrigins) ? origin : null)
          : (loopbackOrigin.test(origin) ? origin : null),
      credentials: true,
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    }),
  );
  app.use("*", guard(ctx));
  app.use("/api/*", async (c, next) => {
    // uploads have their own, larger limit
    if (c.req.method !== "GET" && !/\/api\/sessions\/[^/]+\/files$/.test(c.req.path)) {
      return await jsonLimit(c, next);
    }
    await next();
  });

  // ---- health, API document ----------------------------------------------------------------
  doc({ method: "get", path: "/healthz", summary: "Liveness", response: HealthSchema });
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/openapi.json", (c) => c.json(openApiDocument(docs)));

  // ---- sessions ----------------------------------------------------------------------------
  const sessionId = (c: Ctx): string => validate(SessionIdSchema, c.req.param("id"), "path");
  const findSession = async (c: Ctx): Promise<Session> => {
    const s = await ctx.registry.find(sessionId(c));
    if (!s) throw new HttpError(404, "Session not found");
    return s;
  };

  doc({
    method: "get",
    path: "/api/sessions/",
    summary: "List sessions, newest first",
    query: ListSessionsQuerySchema,
    response: zod.array(SessionSchema),
    errors: [422],
  });
  app.get("/api/sessions/", async (c) => {
    const q = validate(ListSessionsQuerySchema, c.req.query(), "query");
    let limit = q.limit ?? 100;
    if (limit <= 0) limit = 100;
    if (limit > 500) limit = 500;
    const archived = q.archived === "true" || q.archived === "1";
    return c.json(
      await ctx.registry.list({ limit, offset: q.offset ?? 0, q: q.q || undefined, archived }),
    );
  });

  doc({
    method: "post",
    path: "/api/sessions/",
    summary: "Create a session (work_dir defaults to the home dir)",
    body: CreateSessionBodySchema,
    response: SessionSchema,
    errors: [400, 403, 404, 413, 422],
  });
  app.post("/api/sessions/", async (c) => {
    const body = await jsonBody(c, CreateSessionBodySchema);
    const raw = body.work_dir ?? ctx.home ?? ctx.startupDir;
    const dir = resolve(ctx.startupDir, expandHome(raw));
    let st: Deno.FileInfo | null = null;
    try {
      st = await Deno.stat(dir);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) {
        throw new HttpError(403, `Permission denied: cannot access ${dir}`);
      }
    }
    if (!st) {
      if (!body.create_dir) throw new HttpError(404, `Directory does not exist: ${dir}`);
      try {
        await Deno.mkdir(dir, { recursive: true });
      } catch (err) {
        if (err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable) {
          throw new HttpError(403, `Permission denied: cannot create directory ${dir}`);
        }
        throw new HttpError(400, `Failed to create directory: ${(err as Error).message}`);
      }
    } else if (!st.isDirectory) {
      throw new HttpError(400, `Path is not a directory: ${dir}`);
    }
    const s = await ctx.registry.create(dir);
    return c.json(await ctx.registry.info(s));
  });

  doc({
    method: "get",
    path: "/api/sessions/{id}",
    summary: "One session (null when unknown)",
    response: SessionSchema.nullable(),
    errors: [422],
  });
  app.get("/api/sessions/:id", async (c) => {
    const s = await ctx.registry.find(sessionId(c));
    return c.json(s ? await ctx.registry.info(s) : null);
  });

  doc({
    method: "patch",
    path: "/api/sessions/{id}",
    summary: "Rename, (un)archive or (un)pin a session",
    body: UpdateSessionBodySchema,
    response: SessionSchema,
    errors: [400, 404, 413, 422],
  });
  app.patch("/api/sessions/:id", async (c) => {
    const s = await findSession(c);
    const body = await jsonBody(c, UpdateSessionBodySchema);
    await ctx.registry.update(s, body);
    return c.json(await ctx.registry.info(s));
  });

  doc({
    method: "delete",
    path: "/api/sessions/{id}",
    summary: "Stop and delete a session",
    errors: [400, 404, 422],
  });
  app.delete("/api/sessions/:id", async (c) => {
    const s = await findSession(c);
    await ctx.registry.delete(s);
    return c.json(null);
  });

  doc({
    method: "post",
    path: "/api/sessions/{id}/fork",
    summary: "Fork a session after a turn",
    body: ForkBodySchema,
    response: SessionSchema,
    errors: [400, 404, 413, 422],
  });
  app.post("/api/sessions/:id/fork", async (c) => {
    const s = await findSession(c);
    const body = await jsonBody(c, ForkBodySchema);
    try {
      const fork = await ctx.registry.fork(s, body.turn_index);
      return c.json(await ctx.registry.info(fork));
    } catch (err) {
      if (err instanceof ForkError) throw new HttpError(400, err.message);
      throw err;
    }
  });

  doc({
    method: "post",
    path: "/api/sessions/{id}/generate-title",
    summary: "Title a session from its first exchange",
    body: GenerateTitleBodySchema,
    response: GenerateTitleResponseSchema,
    errors: [404, 413, 422],
  });
  app.post("/api/sessions/:id/generate-title", async (c) => {
    const s = await findSession(c);
    const body = await jsonBody(c, GenerateTitleBodySchema);
    const title = await generateTitle({
      session: s,
      llm: await ctx.titleModel(s),
      userMessage: body.user_message,
      assistantResponse: body.assistant_response,
    });
    return c.json({ title });
  });

  doc({
    method: "post",
    path: "/api/sessions/{id}/files",
    summary: "Upload a file (multipart field `file`); it goes with the next prompt",
    multipart: true,
    response: UploadResponseSchema,
    errors: [400, 404, 413, 422],
  });
  app.post(
    "/api/sessions/:id/files",
    bodyLimit({
      maxSize: MAX_UPLOAD_BYTES + 64 * 1024,
      onError: (c) => detail(c as Ctx, 413, "File too large (max 100MB)"),
    }),
    async (c) => {
      const s = await findSession(c);
      ctx.registry.assertEditable(s);
      let form: Record<string, string | File | (string | File)[]>;
      try {
        form = await c.req.parseBody();
      } catch (err) {
        throw new HttpError(400, `Expected a multipart/form-data body: ${(err as Error).message}`);
      }
      const file = form.file;
      if (!(file instanceof File)) {
        throw new ValidationError([{
          loc: ["body", "file"],
          msg: "Field required",
          type: "missing",
        }]);
      }
      if (file.size > MAX_UPLOAD_BYTES) throw new HttpError(413, "File too large (max 100MB)");
      const dir = uploadsDir(s.dir);
      const decision = ctx.scope.check("write", dir);
      if (!decision.allowed) throw new HttpError(403, decision.message);
      let saved;
      try {
        saved = await saveUpload(
          s.dir,
          file.name || null,
          new Uint8Array(await file.arrayBuffer()),
        );
      } catch (err) {
        if (err instanceof Deno.errors.NotCapable || err instanceof Deno.errors.PermissionDenied) {
          throw new HttpError(403, `Cannot write the upload to ${dir}: ${(err as Error).message}`);
        }
        throw err;
      }
      return c.json(saved);
    },
  );

  doc({
    method: "get",
    path: "/api/sessions/{id}/uploads/{path}",
    summary: "An uploaded file",
    binary: true,
    errors: [400, 403, 404, 422],
  });
  app.get("/api/sessions/:id/uploads/:path{.+}", async (c) => {
    const s = await findSession(c);
    const dir = uploadsDir(s.dir);
    try {
      await Deno.stat(dir);
    } catch {
      throw new HttpError(404, "Uploads directory not found");
    }
    const r = resolveRoutePath(dir, c.req.param("path"), { ...pathOpts(), restricted: false });
    if (!r.ok) throw new HttpError(r.status, r.detail);
    return await serveFile(c, r.path, "inline", () => {
      throw new HttpError(404, "File not found");
    });
  });

  doc({
    method: "get",
    path: "/api/sessions/{id}/files/{path}",
    summary: "List a directory of the work dir, or download a file",
    response: zod.array(FileEntrySchema),
    errors: [400, 403, 404, 422],
  });
  const filesRoute = async (c: Ctx) => {
    const s = await findSession(c);
    const r = resolveRoutePath(s.workDir, c.req.param("path") ?? "", pathOpts());
    if (!r.ok) throw new HttpError(r.status, r.detail);
    let st: Deno.FileInfo;
    try {
      st = await Deno.stat(r.path);
    } catch {
      throw new HttpError(404, `Path not found: ${r.rel || "."}`);
    }
    if (st.isDirectory) {
      const entries: FileEntry[] = [];
      for await (const e of Deno.readDir(r.path)) {
        if (!listingShows(r.path, e.name, pathOpts())) continue;
        let info: Deno.FileInfo;
        try {
          info = await Deno.stat(`${r.path}/${e.name}`);
        } catch {
          continue; // dangling or unreadable
        }
        entries.push(
          info.isDirectory
            ? { name: e.name, type: "directory" }
            : { name: e.name, type: "file", size: info.size },
        );
      }
      entries.sort((a, b) =>
        a.type !== b.type ? (a.type === "directory" ? -1 : 1) : a.name.localeCompare(b.name)
      );
      return c.json(entries);
    }
    return await serveFile(c, r.path, "attachment", () => {
      throw new HttpError(404, `Path not found: ${r.rel}`);
    });
  };
  app.get("/api/sessions/:id/files/", filesRoute);
  app.get("/api/sessions/:id/files/:path{.+}", filesRoute);

  doc({
    method: "get",
    path: "/api/sessions/{id}/git-diff",
    summary: "Changes of the work dir against HEAD",
    response: GitDiffStatsSchema,
    errors: [404, 422],
  });
  app.get("/api/sessions/:id/git-diff", async (c) => {
    const s = await findSession(c);
    return c.json(await gitDiffStats(s.workDir));
  });

  app.get("/api/sessions/:id/stream", (c) => attachStream(ctx, c, peerAddress(c)));

  // ---- background tasks, ZIP export, cross-session search ---------------------------------
  mountTaskRoutes(app, { ctx, doc, findSession });
  mountExportRoute(app, { doc, findSession });
  mountSearchRoute(app, { ctx, doc });

  // ---- work dirs ---------------------------------------------------------------------------
  doc({
    method: "get",
    path: "/api/work-dirs/",
    summary: "Recent work dirs (up to 20)",
    response: zod.array(zod.string()),
  });
  app.get("/api/work-dirs/", async (c) => {
    const meta = await loadMetadata(ctx.shareDir);
    const out: string[] = [];
    for (const wd of [...meta.work_dirs].reverse()) {
      if (out.length >= 20) break;
      const p = wd.path;
      if (wd.kaos !== "local" || p.includes("/tmp") || p.includes("/var/folders")) continue;
      if (p.includes("/.cache/")) continue;
      try {
        if ((await Deno.stat(p)).isDirectory) out.push(p);
      } catch {
        // gone
      }
    }
    return c.json(out);
  });
  doc({
    method: "get",
    path: "/api/work-dirs/startup",
    summary: "The directory kimi web was started in",
    response: zod.string(),
  });
  app.get("/api/work-dirs/startup", (c) => c.json(ctx.startupDir));

  // ---- config ------------------------------------------------------------------------------
  const sensitive = (c: Ctx) => {
    if (sec.restricted) {
      throw new HttpError(403, "Sensitive config APIs are disabled in this mode.");
    }
    void c;
  };
  doc({
    method: "get",
    path: "/api/config/",
    summary: "Models and defaults",
    response: GlobalConfigSchema,
  });
  app.get("/api/config/", (c) => c.json(globalConfig(ctx.config.current())));

  doc({
    method: "patch",
    path: "/api/config/",
    summary: "Change the default model or thinking; restarts idle running sessions",
    body: UpdateConfigBodySchema,
    response: UpdateConfigResponseSchema,
    errors: [400, 403, 413, 422],
  });
  app.patch("/api/config/", async (c) => {
    sensitive(c);
    const body = await jsonBody(c, UpdateConfigBodySchema);
    // The running sessions take no prompt between the change and their restart: a prompt sent
    // meanwhile would start a turn on the old settings, and make the session busy, so skipped.
    const hosts = body.restart_running_sessions
      ? ctx.registry.hosts().filter((h) => h.isRunning)
      : [];
    const releases = await Promise.all(hosts.map((h) => h.hold()));
    let config;
    let restarted: string[] | null = null;
    let skipped: string[] | null = null;
    try {
      try {
        config = await patchConfig(ctx.shareDir, ctx.config.path, body);
      } catch (err) {
        if (err instanceof ConfigChangeError) throw new HttpError(400, err.message);
        throw err;
      }
      ctx.config.set(config);
      if (body.restart_running_sessions) {
        restarted = [];
        skipped = [];
        for (const h of hosts) {
          if (!h.isRunning) continue;
          if (h.busy && !body.force_restart_busy_sessions) {
            skipped.push(h.session.id);
            continue;
          }
          try {
            await h.restart("config_update");
            restarted.push(h.session.id);
          } catch (err) {
            log("WARNING", "web", `restart of ${h.session.id} failed: ${(err as Error).message}`);
          }
        }
      }
    } finally {
      for (const release of releases) release();
    }
    return c.json({
      config: globalConfig(config),
      restarted_session_ids: restarted,
      skipped_busy_session_ids: skipped,
    });
  });

  const configFile = (): string => {
    if (ctx.config.path === null) {
      throw new HttpError(400, "The configuration came from --config text; there is no file.");
    }
    return ctx.config.path;
  };
  doc({
    method: "get",
    path: "/api/config/toml",
    summary: "The config file's text (secret values replaced by markers)",
    response: ConfigTomlSchema,
    errors: [400, 403],
  });
  app.get("/api/config/toml", async (c) => {
    sensitive(c);
    return c.json(await readConfigText(ctx.shareDir, configFile()));
  });
  doc({
    method: "put",
    path: "/api/config/toml",
    summary: "Validate and save the config file's text (markers are put back)",
    body: ConfigTomlBodySchema,
    response: ConfigTomlSaveSchema,
    errors: [400, 403, 413, 422],
  });
  app.put("/api/config/toml", async (c) => {
    sensitive(c);
    const body = await jsonBody(c, ConfigTomlBodySchema);
    return c.json(await writeConfigText(ctx.shareDir, configFile(), body.content));
  });

  // ---- open-in (not mounted when sensitive APIs are restricted) ----------------------------
  if (!sec.restricted) {
    doc({
      method: "post",
      path: "/api/open-in",
      summary: "Open a path in a desktop app (macOS, Windows)",
      body: OpenInBodySchema,
      errors: [400, 413, 422, 500],
    });
    app.post("/api/open-in", async (c) => {
      const body = await jsonBody(c, OpenInBodySchema);
      const r = await openIn(body.app, body.path);
      if (!r.ok) throw new HttpError(r.status, r.detail);
      return c.json({ ok: true });
    });
  }

  // ---- kimi vis's read-only routes (the page shows them at /vis) -----------------------------
  mountVisRoutes(app, { shareDir: ctx.shareDir, readOnly: sec.restricted });

  // ---- the page ----------------------------------------------------------------------------
  // Deno.serve compresses text responses (gzip or brotli, as the client accepts)
  app.get("*", async (c) => {
    if (c.req.path.startsWith("/api/")) return detail(c, 404, "Not Found");
    const assets = await page();
    let asset = assets.get(c.req.path === "/" ? "/index.html" : c.req.path);
    // client-side routes (`/sessions/<id>`) get the page
    if (!asset && !/\.[A-Za-z0-9]+$/.test(c.req.path)) asset = assets.get("/index.html");
    if (!asset) return detail(c, 404, "Not Found");
    const headers: Record<string, string> = {
      "content-type": asset.contentType,
      "cache-control": asset.immutable
        ? "public, max-age=31536000, immutable"
        : "no-cache, no-store, must-revalidate",
    };
    if (pageCsp) headers["content-security-policy"] = pageCsp;
    return new Response(asset.body as BodyInit, { headers });
  });
  return app;
}

async function serveFile(
  c: Ctx,
  path: string,
  kind: "inline" | "attachment",
  missing: () => never,
): Promise<Response> {
  const pin = await pinFile(path);
  if (!pin) missing();
  let file: Deno.FsFile;
  try {
    file = await openPinned(path, pin);
  } catch {
    return missing();
  }
  const st = await file.stat();
  if (!st.isFile) {
    file.close();
    return missing();
  }
  // The checked path must still lead, without a symlink, to the file opened: a component
  // swapped for a symlink between the check and the open cannot smuggle another file out.
  const now = await pinFile(path);
  if (!stillResolvesTo(path) || !now || now.dev !== st.dev || now.ino !== st.ino) {
    file.close();
    throw new HttpError(409, "The file changed while it was being opened; try again.");
  }
  const name = path.slice(path.lastIndexOf("/") + 1);
  return c.body(file.readable, 200, {
    "content-type": guessContentType(name),
    "content-length": String(st.size),
    "content-disposition": contentDisposition(kind, name),
  });
}
