/**
 * The request and response bodies of `kimi web`'s REST API (reference §A3), as zod schemas:
 * routes validate with them and `/openapi.json` is generated from them.
 *
 * @module
 */
import * as z from "zod";

/** A session id in a path (a safe directory name; a uuid4 for sessions made here). */
export const SessionIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).max(128)
  .meta({ description: "Session id" });

/** States of a session. */
export const SessionStatusStateSchema = z.enum(["stopped", "idle", "busy", "restarting", "error"]);
/** A session state. */
export type SessionStatusState = z.infer<typeof SessionStatusStateSchema>;

/** A session's runtime status (also sent as `session_status` on the socket). */
export const SessionStatusSchema = z.object({
  session_id: z.string(),
  state: SessionStatusStateSchema,
  seq: z.number().int(),
  worker_id: z.string().nullable(),
  reason: z.string().nullable(),
  detail: z.string().nullable(),
  updated_at: z.string(),
}).meta({ id: "SessionStatus" });
/** A session's runtime status. */
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

/** A session as listed. */
export const SessionSchema = z.object({
  session_id: z.string(),
  title: z.string(),
  last_updated: z.string().meta({ description: "ISO time of the last context change" }),
  is_running: z.boolean(),
  status: SessionStatusSchema.nullable(),
  work_dir: z.string(),
  session_dir: z.string(),
  archived: z.boolean(),
}).meta({ id: "Session" });
/** A session as listed. */
export type SessionInfo = z.infer<typeof SessionSchema>;

/** Query of `GET /api/sessions/`. */
export const ListSessionsQuerySchema = z.object({
  limit: z.coerce.number().int().optional(),
  offset: z.coerce.number().int().min(0).optional(),
  q: z.string().optional(),
  archived: z.enum(["true", "false", "1", "0"]).optional(),
});

/** Body of `POST /api/sessions/`. */
export const CreateSessionBodySchema = z.object({
  work_dir: z.string().min(1).optional(),
  create_dir: z.boolean().default(false),
}).meta({ id: "CreateSessionRequest" });

/** Body of `PATCH /api/sessions/{id}`. */
export const UpdateSessionBodySchema = z.object({
  title: z.string().min(1).max(200).optional(),
  archived: z.boolean().optional(),
}).meta({ id: "UpdateSessionRequest" });

/** Body of `POST /api/sessions/{id}/fork`. */
export const ForkBodySchema = z.object({ turn_index: z.number().int().min(0) })
  .meta({ id: "ForkSessionRequest" });

/** Body of `POST /api/sessions/{id}/generate-title`. */
export const GenerateTitleBodySchema = z.object({
  user_message: z.string().optional(),
  assistant_response: z.string().optional(),
}).meta({ id: "GenerateTitleRequest" });

/** Answer of `generate-title`. */
export const GenerateTitleResponseSchema = z.object({ title: z.string() });

/** Answer of an upload. */
export const UploadResponseSchema = z.object({
  path: z.string(),
  filename: z.string(),
  size: z.number().int(),
}).meta({ id: "UploadResponse" });

/** One entry of a directory listing. */
export const FileEntrySchema = z.union([
  z.object({ name: z.string(), type: z.literal("directory") }),
  z.object({ name: z.string(), type: z.literal("file"), size: z.number().int() }),
]).meta({ id: "FileEntry" });
/** One entry of a directory listing. */
export type FileEntry = z.infer<typeof FileEntrySchema>;

/** One changed file of `git-diff`. */
export const GitFileDiffSchema = z.object({
  path: z.string(),
  additions: z.number().int(),
  deletions: z.number().int(),
  /** The reference's guess from the line counts (only additions → added), kept for its clients. */
  status: z.enum(["added", "deleted", "modified"]),
  /**
   * What git says happened to the file: `untracked` (not in git yet), or, for a tracked path,
   * `added` (new in the index), `modified` (content or mode), `deleted`, `renamed` (git's
   * rename detection paired it with another path) or `typechange` (e.g. a file became a symlink).
   */
  change: z.enum(["untracked", "added", "modified", "deleted", "renamed", "typechange"]),
});
/** Answer of `git-diff`. */
export const GitDiffStatsSchema = z.object({
  is_git_repo: z.boolean(),
  has_changes: z.boolean(),
  total_additions: z.number().int(),
  total_deletions: z.number().int(),
  files: z.array(GitFileDiffSchema),
  error: z.string().nullable(),
}).meta({ id: "GitDiffStats" });
/** Answer of `git-diff`. */
export type GitDiffStats = z.infer<typeof GitDiffStatsSchema>;

/** A configured model, without secrets. */
export const ConfigModelSchema = z.object({
  name: z.string(),
  provider: z.string(),
  provider_type: z.string(),
  model: z.string(),
  max_context_size: z.number().int(),
  capabilities: z.array(z.string()).nullable(),
});
/** Answer of `GET /api/config/`. */
export const GlobalConfigSchema = z.object({
  default_model: z.string(),
  default_thinking: z.boolean(),
  models: z.array(ConfigModelSchema),
}).meta({ id: "GlobalConfig" });
/** Answer of `GET /api/config/`. */
export type GlobalConfig = z.infer<typeof GlobalConfigSchema>;

/** Body of `PATCH /api/config/`. */
export const UpdateConfigBodySchema = z.object({
  default_model: z.string().optional(),
  default_thinking: z.boolean().optional(),
  restart_running_sessions: z.boolean().default(true),
  force_restart_busy_sessions: z.boolean().default(false),
}).meta({ id: "UpdateGlobalConfigRequest" });

/** Answer of `PATCH /api/config/`. */
export const UpdateConfigResponseSchema = z.object({
  config: GlobalConfigSchema,
  restarted_session_ids: z.array(z.string()).nullable(),
  skipped_busy_session_ids: z.array(z.string()).nullable(),
});

/** Answer of `GET /api/config/toml` (secret values replaced by markers). */
export const ConfigTomlSchema = z.object({ content: z.string(), path: z.string() });
/** Body of `PUT /api/config/toml`. */
export const ConfigTomlBodySchema = z.object({ content: z.string() });
/** Answer of `PUT /api/config/toml`. */
export const ConfigTomlSaveSchema = z.object({
  success: z.boolean(),
  error: z.string().optional(),
});

/** Apps of `POST /api/open-in`. */
export const OpenInBodySchema = z.object({
  app: z.enum(["finder", "cursor", "vscode", "iterm", "terminal", "antigravity"]),
  path: z.string().min(1),
}).meta({ id: "OpenInRequest" });

/** An error answer. */
export const ErrorSchema = z.object({ detail: z.string() }).meta({ id: "Error" });
/** A validation error answer (422). */
export const ValidationErrorSchema = z.object({
  detail: z.array(z.object({
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    type: z.string(),
  })),
}).meta({ id: "ValidationError" });

/** `GET /healthz`. */
export const HealthSchema = z.object({ status: z.literal("ok") });
