/**
 * On-disk layout of background tasks: `<sessionDir>/tasks/<id>/task.json` (written
 * atomically: temp file + rename) and `<sessionDir>/tasks/<id>/output` (appended).
 *
 * @module
 */
import { join } from "node:path";
import { TASK_ID_PATTERN, type TaskRecord, TaskRecordSchema } from "./task_record.ts";

/** Name of the tasks folder inside a session dir. */
export const TASKS_DIR_NAME = "tasks";

/** A slice of a task's output file. */
export interface OutputTail {
  /** Decoded text (a leading partial UTF-8 sequence is skipped). */
  text: string;
  /** Size of the whole file in bytes (0 when missing). */
  sizeBytes: number;
  /** Bytes read. */
  readBytes: number;
  /** Whether the file exists. */
  exists: boolean;
}

/** Reads and writes task files under one `tasks/` folder. */
export class TaskStore {
  /** Absolute path of the `tasks/` folder. */
  readonly root: string;

  /** A store for the session at `sessionDir`. */
  constructor(sessionDir: string) {
    this.root = join(sessionDir, TASKS_DIR_NAME);
  }

  /** Folder of one task. Throws on an id that is not a task id (no path tricks). */
  taskDir(id: string): string {
    if (!TASK_ID_PATTERN.test(id)) throw new Error(`Invalid task id: ${id}`);
    return join(this.root, id);
  }

  /** Path of a task's output file. */
  outputPath(id: string): string {
    return join(this.taskDir(id), "output");
  }

  /** Path of a task's record. */
  recordPath(id: string): string {
    return join(this.taskDir(id), "task.json");
  }

  /** Create the task folder with an empty output file. */
  async create(record: TaskRecord): Promise<void> {
    await Deno.mkdir(this.taskDir(record.id), { recursive: true });
    await Deno.writeFile(this.outputPath(record.id), new Uint8Array(), { append: true });
    await this.write(record);
  }

  /** Write a record atomically. */
  async write(record: TaskRecord): Promise<void> {
    const path = this.recordPath(record.id);
    const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    try {
      await Deno.writeTextFile(tmp, JSON.stringify(record, null, 2) + "\n");
      await Deno.rename(tmp, path);
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      throw e;
    }
  }

  /** Read a record, or `null` when missing, unreadable or not a task id. */
  async read(id: string): Promise<TaskRecord | null> {
    if (!TASK_ID_PATTERN.test(id)) return null;
    try {
      const data = JSON.parse(await Deno.readTextFile(this.recordPath(id)));
      const parsed = TaskRecordSchema.safeParse(data);
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /** All readable records, newest first. */
  async list(): Promise<TaskRecord[]> {
    const out: TaskRecord[] = [];
    try {
      for await (const entry of Deno.readDir(this.root)) {
        if (!entry.isDirectory) continue;
        const rec = await this.read(entry.name);
        if (rec) out.push(rec);
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    return out.sort((a, b) => b.created_at - a.created_at);
  }

  /** The last `maxBytes` bytes of a task's output. */
  async readTail(id: string, maxBytes: number): Promise<OutputTail> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.outputPath(id), { read: true });
    } catch {
      return { text: "", sizeBytes: 0, readBytes: 0, exists: false };
    }
    try {
      const size = (await file.stat()).size;
      const offset = Math.max(0, size - Math.max(0, maxBytes));
      await file.seek(offset, Deno.SeekMode.Start);
      const buf = new Uint8Array(size - offset);
      let read = 0;
      while (read < buf.length) {
        const n = await file.read(buf.subarray(read));
        if (n === null) break;
        read += n;
      }
      let start = 0;
      if (offset > 0) { while (start < read && start < 4 && (buf[start] & 0xc0) === 0x80) start++; }
      const text = new TextDecoder().decode(buf.subarray(start, read));
      return { text, sizeBytes: size, readBytes: read, exists: true };
    } finally {
      file.close();
    }
  }
}
