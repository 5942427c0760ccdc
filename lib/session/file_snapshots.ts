/**
 * File undo storage: snapshots of the files the agent changes (WriteFile, StrReplaceFile),
 * kept under `<sessionDir>/snapshots/` and keyed by the context checkpoint of the change.
 *
 * - `objects/<sha256>`: file contents as they were before a change, content-addressed (the
 *   same content is stored once), or `objects/<sha256>.gz`, the same gzip-compressed when that
 *   is smaller (contents up to 8 MiB; the hash is always of the content itself).
 * - `index.jsonl`: append-only log. A change record
 *   `{"checkpoint", "path", "before", "after", "at"}` names the content hash before and after
 *   the change (`null`: the file did not exist); a rewind record `{"rewind", "restored", "at"}`
 *   says the conversation went back to before checkpoint `rewind`, with the files restored
 *   (their records are dropped) or kept (their records now count as earlier history).
 *
 * Storage has a size cap: blobs no record needs any more are deleted, then the blobs whose
 * last use is oldest are evicted until the cap holds. A change whose blob was evicted can no
 * longer be undone and is reported as `unavailable`.
 *
 * @module
 */
import { dirname } from "node:path";
import * as z from "zod";
import { atomicWriteBytes } from "../fs/atomic_write.ts";
import { stillResolvesTo } from "../fs/real_path.ts";
import { appendRecords } from "./jsonl.ts";

/** Default size cap of the stored blobs: 256 MiB. */
export const DEFAULT_SNAPSHOT_CAP_BYTES = 256 * 1024 * 1024;

/** Blobs up to this size are stored gzip-compressed when that is smaller. */
const COMPRESS_MAX_BYTES = 8 * 1024 * 1024;

/** A change record of `index.jsonl`. */
export const ChangeRecordSchema = z.object({
  checkpoint: z.number().int(),
  path: z.string(),
  before: z.string().nullable(),
  after: z.string().nullable(),
  at: z.number(),
});
/** A change record of `index.jsonl`. */
export type ChangeRecord = z.infer<typeof ChangeRecordSchema>;

/** A rewind record of `index.jsonl`. */
export const RewindRecordSchema = z.object({
  rewind: z.number().int(),
  restored: z.boolean(),
  at: z.number(),
});
/** A rewind record of `index.jsonl`. */
export type RewindRecord = z.infer<typeof RewindRecordSchema>;

/** A file that was left alone by a restore because it changed since the agent's last write. */
export interface RestoreConflict {
  /** Absolute path. */
  path: string;
  /** Why, as a sentence predicate (e.g. "was changed outside the agent since"). */
  reason: string;
}

/** The outcome of {@linkcode FileSnapshots.restoreSince}. */
export interface RestoreReport {
  /** Files put back as they were (deleted when they did not exist), in order of first change. */
  restored: string[];
  /** Files left as they are because something else changed them since. */
  conflicts: RestoreConflict[];
  /** Files whose earlier content is no longer stored (evicted by the size cap). */
  unavailable: string[];
}

/** Options of {@linkcode FileSnapshots}. */
export interface FileSnapshotsOptions {
  /** Size cap of the stored blobs in bytes (default {@linkcode DEFAULT_SNAPSHOT_CAP_BYTES}). */
  maxBytes?: number;
  /** Clock (tests). */
  now?: () => number;
}

interface Entry extends ChangeRecord {
  /** Position in the log (larger = newer). */
  seq: number;
}

/** Snapshots of changed files for one session. */
export class FileSnapshots {
  /** The snapshot directory (`<sessionDir>/snapshots`). */
  readonly dir: string;
  readonly #maxBytes: number;
  readonly #now: () => number;
  #loaded = false;
  #entries: Entry[] = [];
  #seq = 0;
  /** Stored blobs: hash → bytes on disk. */
  #sizes = new Map<string, number>();
  /** The blobs stored compressed (`<hash>.gz`). */
  #gz = new Set<string>();
  /** Bytes of the stored blobs (the sum of {@link #sizes}). */
  #total = 0;
  /**
   * The blobs the change records need, each with the position of the newest record needing it,
   * least recently used first (a use moves a blob to the end): the eviction order, kept as
   * changes come so a change costs the same at the 10,000th as at the first.
   */
  #lastUse = new Map<string, number>();
  /** Whether {@link #lastUse} was built and unneeded blobs swept since the log was loaded. */
  #swept = false;
  #pending = new Map<string, { checkpoint: number; before: string | null }>();
  #queue: Promise<unknown> = Promise.resolve();

  /** Snapshots under `<sessionDir>/snapshots/` (created on first change). */
  constructor(sessionDir: string, opts: FileSnapshotsOptions = {}) {
    this.dir = `${sessionDir}/snapshots`;
    this.#maxBytes = opts.maxBytes ?? DEFAULT_SNAPSHOT_CAP_BYTES;
    this.#now = opts.now ?? (() => Date.now() / 1000);
  }

  get #objects(): string {
    return `${this.dir}/objects`;
  }

  get #index(): string {
    return `${this.dir}/index.jsonl`;
  }

  /** Run `fn` after every earlier operation (tool calls of one step run concurrently). */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Snapshot `path` before a change at `checkpoint`: its current content is stored (nothing
   * when it does not exist). Call {@linkcode recordAfter} once the change is done.
   */
  recordBefore(path: string, checkpoint: number): Promise<void> {
    return this.#serial(async () => {
      await this.#load();
      const data = await readOrNull(path);
      const before = data === null ? null : await this.#store(data);
      const replaced = this.#pending.get(path);
      this.#pending.set(path, { checkpoint, before });
      if (replaced) await this.#release(replaced.before);
    });
  }

  /**
   * Record the result of the change announced by {@linkcode recordBefore} (its hash, to
   * notice later changes by something else). A change that left the file as it was is not
   * recorded.
   */
  recordAfter(path: string, checkpoint: number): Promise<void> {
    return this.#serial(async () => {
      await this.#load();
      const pending = this.#pending.get(path);
      if (!pending) return;
      this.#pending.delete(path);
      const data = await readOrNull(path);
      const after = data === null ? null : await sha256(data);
      if (after === pending.before) {
        await this.#release(pending.before);
        return;
      }
      const record: ChangeRecord = {
        checkpoint: Math.min(pending.checkpoint, checkpoint),
        path,
        before: pending.before,
        after,
        at: this.#now(),
      };
      await this.#append(record);
      const entry = { ...record, seq: this.#seq++ };
      this.#entries.push(entry);
      if (!this.#swept) {
        await this.#collect();
      } else {
        this.#use(entry);
        await this.#evictAboveCap();
      }
    });
  }

  /** Paths changed at or after `checkpoint` (in order of first change). */
  changedSince(checkpoint: number): Promise<string[]> {
    return this.#serial(async () => {
      await this.#load();
      return [
        ...new Set(this.#entries.filter((e) => e.checkpoint >= checkpoint).map((e) => e.path)),
      ];
    });
  }

  /**
   * Put every file changed at or after `checkpoint` back as it was before its first such
   * change (deleting files that did not exist). A file whose current content is not what the
   * agent last wrote is left alone and reported; so is one whose snapshot was evicted. The
   * records at or after `checkpoint` are then dropped (the conversation went back before it).
   */
  restoreSince(checkpoint: number): Promise<RestoreReport> {
    return this.#serial(async () => {
      await this.#load();
      const report: RestoreReport = { restored: [], conflicts: [], unavailable: [] };
      const first = new Map<string, Entry>();
      const last = new Map<string, Entry>();
      for (const e of this.#entries) {
        if (e.checkpoint >= checkpoint && !first.has(e.path)) first.set(e.path, e);
        last.set(e.path, e);
      }
      for (const [path, entry] of first) {
        // A directory on the way swapped for a symlink would redirect the restore (a write or
        // a delete) elsewhere: such a path is a conflict, never followed.
        if (!stillResolvesTo(path)) {
          report.conflicts.push({ path, reason: "now leads elsewhere (through a symlink)" });
          continue;
        }
        const expected = last.get(path)!.after;
        const data = await readOrNull(path);
        const current = data === null ? null : await sha256(data);
        if (current !== expected) {
          report.conflicts.push({
            path,
            reason: current === null
              ? "was deleted outside the agent since"
              : "was changed outside the agent since",
          });
          continue;
        }
        if (entry.before === current) {
          report.restored.push(path);
          continue;
        }
        if (entry.before === null) {
          await Deno.remove(path).catch((err) => {
            if (!(err instanceof Deno.errors.NotFound)) throw err;
          });
          report.restored.push(path);
          continue;
        }
        const blob = await this.#read(entry.before);
        if (blob === null || await sha256(blob) !== entry.before) {
          report.unavailable.push(path);
          continue;
        }
        await Deno.mkdir(dirname(path), { recursive: true });
        await atomicWriteBytes(path, blob);
        report.restored.push(path);
      }
      await this.#rewind(checkpoint, true);
      await this.#collect();
      return report;
    });
  }

  /**
   * The conversation went back to before `checkpoint` but the files stay as they are (a D-Mail
   * without `restore_files`, compaction, `/clear`): changes recorded at or after it now count
   * as made before it, so a later undo of an earlier turn still covers them.
   */
  keepSince(checkpoint: number): Promise<void> {
    return this.#serial(async () => {
      await this.#load();
      if (!this.#entries.some((e) => e.checkpoint >= checkpoint)) return;
      await this.#rewind(checkpoint, false);
    });
  }

  async #rewind(checkpoint: number, restored: boolean): Promise<void> {
    if (!this.#entries.some((e) => e.checkpoint >= checkpoint)) return;
    const record: RewindRecord = { rewind: checkpoint, restored, at: this.#now() };
    await this.#append(record);
    this.#applyRewind(record);
  }

  #applyRewind(record: RewindRecord): void {
    if (record.restored) {
      this.#entries = this.#entries.filter((e) => e.checkpoint < record.rewind);
    } else {
      for (const e of this.#entries) {
        if (e.checkpoint >= record.rewind) e.checkpoint = record.rewind - 1;
      }
    }
  }

  async #append(record: ChangeRecord | RewindRecord): Promise<void> {
    await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
    // A failed write (full disk) is cut back to the last complete record.
    await appendRecords(this.#index, JSON.stringify(record) + "\n", { mode: 0o600 });
  }

  /** The file of a stored blob. */
  #blobPath(hash: string): string {
    return `${this.#objects}/${hash}${this.#gz.has(hash) ? ".gz" : ""}`;
  }

  /** Store a blob (once per content, compressed when that is smaller); returns its hash. */
  async #store(data: Uint8Array): Promise<string> {
    const hash = await sha256(data);
    if (this.#sizes.has(hash)) {
      try {
        await Deno.stat(this.#blobPath(hash));
        return hash;
      } catch {
        // removed behind our back: store it again
      }
    }
    // A big file is stored as it is: compressing it in memory would hold it twice more.
    const packed = data.length <= COMPRESS_MAX_BYTES ? await gzip(data) : null;
    const compress = packed !== null && packed.length < data.length;
    const stored = compress ? packed : data;
    await Deno.mkdir(this.#objects, { recursive: true, mode: 0o700 });
    await atomicWriteBytes(`${this.#objects}/${hash}${compress ? ".gz" : ""}`, stored, {
      mode: 0o600,
    });
    this.#total += stored.length - (this.#sizes.get(hash) ?? 0);
    this.#sizes.set(hash, stored.length);
    if (compress) this.#gz.add(hash);
    else this.#gz.delete(hash);
    return hash;
  }

  /** The content of a stored blob (null when it is missing or does not decompress). */
  async #read(hash: string): Promise<Uint8Array | null> {
    const compressed = this.#gz.has(hash);
    const data = await readOrNull(this.#blobPath(hash));
    if (data === null || !compressed) return data;
    try {
      return await gunzip(data);
    } catch {
      return null; // damaged: reported unavailable
    }
  }

  /** Mark the blob of `entry` as the most recently used. */
  #use(entry: Entry): void {
    if (entry.before === null || !this.#sizes.has(entry.before)) return;
    this.#lastUse.delete(entry.before);
    this.#lastUse.set(entry.before, entry.seq);
  }

  /** The blobs changes in progress need (kept until every other blob is evicted). */
  #pendingBlobs(): Set<string> {
    const out = new Set<string>();
    for (const p of this.#pending.values()) if (p.before !== null) out.add(p.before);
    return out;
  }

  /** Delete `hash` when neither a change record nor a change in progress needs it. */
  async #release(hash: string | null): Promise<void> {
    if (hash === null || !this.#swept || this.#lastUse.has(hash)) return;
    if (this.#pendingBlobs().has(hash)) return;
    await this.#evict(hash);
  }

  /**
   * Rebuild the blobs' order of use from the records, delete blobs nothing needs, then evict the
   * least recently used ones above the cap. Linear in the records: run once after loading and
   * after a rewind; a change in between only updates the order ({@link #use}).
   */
  async #collect(): Promise<void> {
    this.#lastUse = new Map();
    for (const e of this.#entries) this.#use(e);
    const pending = this.#pendingBlobs();
    for (const hash of [...this.#sizes.keys()]) {
      if (!this.#lastUse.has(hash) && !pending.has(hash)) await this.#evict(hash);
    }
    this.#swept = true;
    await this.#evictAboveCap();
  }

  /**
   * Evict blobs, least recently used first and those of changes in progress last, until the
   * stored bytes fit the cap (an evicted blob leaves {@link #lastUse}, so each is passed once).
   */
  async #evictAboveCap(): Promise<void> {
    if (this.#total <= this.#maxBytes) return;
    const pending = this.#pendingBlobs();
    for (const hash of this.#lastUse.keys()) {
      if (this.#total <= this.#maxBytes) return;
      if (!pending.has(hash)) await this.#evict(hash);
    }
    for (const hash of pending) {
      if (this.#total <= this.#maxBytes) return;
      await this.#evict(hash);
    }
  }

  async #evict(hash: string): Promise<void> {
    const size = this.#sizes.get(hash);
    if (size !== undefined) this.#total -= size;
    this.#sizes.delete(hash);
    this.#gz.delete(hash);
    this.#lastUse.delete(hash);
    for (const name of [hash, `${hash}.gz`]) {
      await Deno.remove(`${this.#objects}/${name}`).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    }
  }

  async #load(): Promise<void> {
    if (this.#loaded) return;
    let text = "";
    try {
      text = await Deno.readTextFile(this.#index);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        continue; // a torn last line
      }
      const change = ChangeRecordSchema.safeParse(raw);
      if (change.success) {
        this.#entries.push({ ...change.data, seq: this.#seq++ });
        continue;
      }
      const rewind = RewindRecordSchema.safeParse(raw);
      if (rewind.success) this.#applyRewind(rewind.data);
    }
    try {
      for await (const e of Deno.readDir(this.#objects)) {
        const name = e.name.match(/^([0-9a-f]{64})(\.gz)?$/);
        if (!e.isFile || !name) continue;
        const [, hash, gz] = name;
        const info = await Deno.stat(`${this.#objects}/${e.name}`);
        // (Both forms of one blob: only after a crash between writes; the plain one is read.)
        if (this.#sizes.has(hash) && gz) continue;
        this.#total += info.size - (this.#sizes.get(hash) ?? 0);
        this.#sizes.set(hash, info.size);
        if (gz) this.#gz.add(hash);
        else this.#gz.delete(hash);
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    this.#loaded = true;
  }
}

async function readOrNull(path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/** Bytes through a (de)compression stream (its errors, e.g. damaged input, reject). */
async function transform(
  data: Uint8Array,
  stream: CompressionStream | DecompressionStream,
): Promise<Uint8Array> {
  const writer = stream.writable.getWriter();
  // Written while the output is read; a failure surfaces through the read.
  writer.write(data as Uint8Array<ArrayBuffer>).catch(() => {});
  writer.close().catch(() => {});
  return new Uint8Array(await new Response(stream.readable).arrayBuffer());
}

function gzip(data: Uint8Array): Promise<Uint8Array> {
  return transform(data, new CompressionStream("gzip"));
}

function gunzip(data: Uint8Array): Promise<Uint8Array> {
  return transform(data, new DecompressionStream("gzip"));
}

async function sha256(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
