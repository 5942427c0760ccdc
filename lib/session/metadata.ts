/**
 * `<share>/kimi.json`: the known work dirs and the last session of each, plus the work-dir key
 * that names a work dir's sessions directory.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { md5Hex } from "./md5.ts";
import * as z from "zod";
import { atomicWriteText } from "../fs/atomic_write.ts";

/** One `work_dirs[]` entry. */
export const WorkDirMetaSchema = z.object({
  path: z.string(),
  kaos: z.string().default("local"),
  last_session_id: z.string().nullable().default(null),
});
/** Metadata of one work dir. */
export type WorkDirMeta = z.infer<typeof WorkDirMetaSchema>;

/** The `kimi.json` document. Keys other than `work_dirs` are kept as they are. */
export const MetadataSchema = z.looseObject({
  work_dirs: z.array(z.unknown()).default([]).transform((entries) =>
    entries.flatMap((e) => {
      const parsed = WorkDirMetaSchema.safeParse(e);
      return parsed.success ? [parsed.data] : []; // drop unreadable entries, keep the rest
    })
  ),
});
/** The `kimi.json` document. */
export type Metadata = z.infer<typeof MetadataSchema>;

/** Path of `kimi.json` in a share dir. */
export function metadataPath(shareDir: string): string {
  return join(shareDir, "kimi.json");
}

/**
 * The canonical form of a work dir path: absolute and normalized (symlinks are not resolved).
 */
export function canonicalWorkDir(workDir: string): string {
  return resolve(workDir);
}

/**
 * The directory name of a work dir's sessions: md5 hex of the canonical path, prefixed with
 * `<kaos>_` for non-local backends.
 */
export function workDirKey(workDir: string, kaos = "local"): string {
  const digest = md5Hex(canonicalWorkDir(workDir));
  return kaos === "local" ? digest : `${kaos}_${digest}`;
}

/** `<share>/sessions/<work-dir-key>`. */
export function sessionsDirFor(shareDir: string, workDir: string, kaos = "local"): string {
  return join(shareDir, "sessions", workDirKey(workDir, kaos));
}

/**
 * Read `kimi.json`. A missing, unreadable or corrupt file yields empty metadata rather than an
 * error (it only caches convenience data).
 */
export async function loadMetadata(shareDir: string): Promise<Metadata> {
  let text: string;
  try {
    text = await Deno.readTextFile(metadataPath(shareDir));
  } catch {
    return emptyMetadata();
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return emptyMetadata();
  }
  const parsed = MetadataSchema.safeParse(data);
  return parsed.success ? parsed.data : emptyMetadata();
}

/** Write `kimi.json` atomically (JSON, 2-space indent). */
export async function saveMetadata(shareDir: string, metadata: Metadata): Promise<void> {
  await Deno.mkdir(shareDir, { recursive: true });
  await atomicWriteText(metadataPath(shareDir), JSON.stringify(metadata, null, 2));
}

/** The entry of a work dir (exact canonical path and kaos name), if any. */
export function findWorkDir(
  metadata: Metadata,
  workDir: string,
  kaos = "local",
): WorkDirMeta | undefined {
  const path = canonicalWorkDir(workDir);
  return metadata.work_dirs.find((w) => w.path === path && w.kaos === kaos);
}

/** The entry of a work dir, added (with no last session) when missing. */
export function ensureWorkDir(metadata: Metadata, workDir: string, kaos = "local"): WorkDirMeta {
  const found = findWorkDir(metadata, workDir, kaos);
  if (found) return found;
  const entry: WorkDirMeta = { path: canonicalWorkDir(workDir), kaos, last_session_id: null };
  metadata.work_dirs.push(entry);
  return entry;
}

/**
 * Read `kimi.json`, let `update` change it, and write it back atomically.
 *
 * @returns the updated metadata.
 */
export async function updateMetadata(
  shareDir: string,
  update: (metadata: Metadata) => void,
): Promise<Metadata> {
  const metadata = await loadMetadata(shareDir);
  update(metadata);
  await saveMetadata(shareDir, metadata);
  return metadata;
}

/** Record (or clear, with `null`) the last session of a work dir. */
export async function setLastSessionId(
  shareDir: string,
  workDir: string,
  sessionId: string | null,
): Promise<void> {
  await updateMetadata(shareDir, (m) => {
    ensureWorkDir(m, workDir).last_session_id = sessionId;
  });
}

function emptyMetadata(): Metadata {
  return { work_dirs: [] };
}
