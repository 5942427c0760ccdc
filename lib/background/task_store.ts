/**
 * On-disk layout of background tasks, as the reference keeps it: `<sessionDir>/tasks/<id>/`
 * with `spec.json`, `runtime.json`, `control.json`, `consumer.json` (each replaced atomically:
 * temp file + rename) and `output.log` (appended).
 *
 * @module
 */
import { join } from "node:path";
import type * as z from "zod";
import { atomicWriteText } from "../fs/atomic_write.ts";
import {
  recordFiles,
  recordFromFiles,
  TASK_ID_PATTERN,
  type TaskConsumer,
  TaskConsumerSchema,
  type TaskControl,
  TaskControlSchema,
  type TaskRecord,
  type TaskRuntime,
  TaskRuntimeSchema,
  TaskSpecSchema,
} from "./task_record.ts";

/** Name of the tasks folder inside a session dir. */
export const TASKS_DIR_NAME = "tasks";

/** File names inside a task folder. */
export const TASK_FILES = {
  spec: "spec.json",
  runtime: "runtime.json",
  control: "control.json",
  consumer: "consumer.json",
  output: "output.log",
} as const;

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

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";

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

  /** Path of one of a task's files. */
  filePath(id: string, file: keyof typeof TASK_FILES): string {
    return join(this.taskDir(id), TASK_FILES[file]);
  }

  /** Path of a task's output file. */
  outputPath(id: string): string {
    return this.filePath(id, "output");
  }

  /** Create the task folder: every file, with an empty output and consumer state. */
  async create(record: TaskRecord): Promise<void> {
    await Deno.mkdir(this.taskDir(record.id), { recursive: true });
    const files = recordFiles(record);
    await atomicWriteText(this.filePath(record.id, "spec"), json(files.spec));
    await atomicWriteText(this.filePath(record.id, "runtime"), json(files.runtime));
    await atomicWriteText(this.filePath(record.id, "control"), json(files.control));
    await this.writeConsumer(record.id, TaskConsumerSchema.parse({}));
    await Deno.writeFile(this.outputPath(record.id), new Uint8Array(), { append: true });
  }

  /** Write a record's runtime state (`runtime.json`). */
  async writeRuntime(record: TaskRecord): Promise<void> {
    await atomicWriteText(this.filePath(record.id, "runtime"), json(recordFiles(record).runtime));
  }

  /** Write a record's stop request (`control.json`). */
  async writeControl(record: TaskRecord): Promise<void> {
    await atomicWriteText(this.filePath(record.id, "control"), json(recordFiles(record).control));
  }

  /** Write what a reader has seen of the output (`consumer.json`). */
  async writeConsumer(id: string, consumer: TaskConsumer): Promise<void> {
    await atomicWriteText(this.filePath(id, "consumer"), json(TaskConsumerSchema.parse(consumer)));
  }

  /** A task's stop request; defaults when the file is missing or unreadable. */
  async readControl(id: string): Promise<TaskControl> {
    return await this.#readPart(id, "control", TaskControlSchema) ?? TaskControlSchema.parse({});
  }

  /** A task's runtime state; `null` when missing or unreadable. */
  readRuntime(id: string): Promise<TaskRuntime | null> {
    return this.#readPart(id, "runtime", TaskRuntimeSchema);
  }

  /** A task's consumer state; defaults when missing or unreadable. */
  async readConsumer(id: string): Promise<TaskConsumer> {
    return await this.#readPart(id, "consumer", TaskConsumerSchema) ??
      TaskConsumerSchema.parse({});
  }

  async #readPart<S extends z.ZodType>(
    id: string,
    file: keyof typeof TASK_FILES,
    schema: S,
  ): Promise<z.infer<S> | null> {
    if (!TASK_ID_PATTERN.test(id)) return null;
    try {
      const parsed = schema.safeParse(JSON.parse(await Deno.readTextFile(this.filePath(id, file))));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  /**
   * A task's record, or `null` when it has no readable `spec.json` (a missing or corrupt
   * runtime or control file reads as defaults, as the reference does).
   */
  async read(id: string): Promise<TaskRecord | null> {
    const spec = await this.#readPart(id, "spec", TaskSpecSchema);
    if (!spec) return null;
    const runtime = await this.readRuntime(id) ??
      TaskRuntimeSchema.parse({ updated_at: spec.created_at });
    return recordFromFiles({ spec, runtime, control: await this.readControl(id) });
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
