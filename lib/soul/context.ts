/**
 * The conversation context and its file, `context.jsonl` (reference §6.4).
 *
 * Every record is appended with a single write as it happens, so a kill at any moment leaves
 * every earlier record intact; restore skips a torn or malformed line instead of failing.
 *
 * @module
 */
import {
  MessageSchema,
  messageToJSON,
  type NormalizedMessage,
  normalizeMessage,
  quickParseMessage,
} from "../llm/message.ts";
import { pyJsonPieces } from "../wire/py_json.ts";
import { type JsonPiece, jsonStringifyPieces } from "../session/json_pieces.ts";
import { estimateMessageTokens } from "../llm/token_estimate.ts";
import {
  appendJsonRecords,
  appendRecords,
  ChunkLineDecoder,
  endsWithNewline,
  fileChunks,
} from "../session/jsonl.ts";

/** Rotation of the live file to `context_<n>.jsonl`, reserving the name atomically. */
async function rotate(path: string): Promise<string> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  const base = path.slice(path.lastIndexOf("/") + 1).replace(/\.jsonl$/, "");
  let max = 0;
  for await (const e of Deno.readDir(dir)) {
    const m = e.name.match(new RegExp(`^${base}_(\\d+)\\.jsonl$`));
    if (m) max = Math.max(max, Number(m[1]));
  }
  for (let n = max + 1;; n++) {
    const target = `${dir}/${base}_${n}.jsonl`;
    try {
      const f = await Deno.open(target, { createNew: true, write: true, mode: 0o600 });
      f.close();
    } catch (err) {
      if (err instanceof Deno.errors.AlreadyExists) continue;
      throw err;
    }
    await Deno.rename(path, target);
    return target;
  }
}

/** Conversation history plus checkpoints and token accounting, persisted to a file. */
export class Context {
  /** Path of `context.jsonl`. */
  readonly file: string;
  #history: NormalizedMessage[] = [];
  #tokenCount = 0;
  #pendingTokens = 0;
  #nCheckpoints = 0;
  #systemPrompt: string | null = null;

  private constructor(file: string) {
    this.file = file;
  }

  /** Load a context file (missing file → empty context). Malformed lines are skipped. */
  static async restore(file: string): Promise<Context> {
    const ctx = new Context(file);
    let f: Deno.FsFile;
    try {
      f = await Deno.open(file);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return ctx;
      throw err;
    }
    // Stream the file line by line: a 200 MB context never exists as one string, and a line of
    // 50 MB (a pasted log) is gathered as it streams, without rescanning it per chunk.
    const lines = new ChunkLineDecoder();
    let lastByte = -1;
    try {
      for await (const chunk of fileChunks(f)) {
        if (chunk.length > 0) lastByte = chunk[chunk.length - 1];
        for (const line of lines.push(chunk)) ctx.#replayLine(line);
      }
      for (const line of lines.end()) ctx.#replayLine(line);
    } finally {
      try {
        f.close();
      } catch {
        // closed by the stream's end
      }
    }
    // The file is opened again only when what was read did not end with a newline.
    if (lastByte >= 0 && lastByte !== 0x0a && !(await endsWithNewline(file))) {
      // A kill mid-write left a torn last line: end it so the next record starts on its own
      // line (readers skip the torn one).
      await appendRecords(file, "\n", { mode: 0o600 });
    }
    return ctx;
  }

  #replay(text: string, stopAtCheckpoint?: number): string[] {
    const kept: string[] = [];
    for (const line of text.split("\n")) {
      const r = this.#replayLine(line, stopAtCheckpoint);
      if (r === "stop") break;
      if (r === "kept") kept.push(line);
    }
    return kept;
  }

  /** Apply one record; `stop` at the given checkpoint, `skip` for blank or invalid lines. */
  #replayLine(line: string, stopAtCheckpoint?: number): "kept" | "skip" | "stop" {
    if (!line.trim()) return "skip";
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line);
    } catch {
      return "skip";
    }
    if (!rec || typeof rec !== "object") return "skip";
    const role = rec.role;
    if (role === "_checkpoint" && stopAtCheckpoint !== undefined && rec.id === stopAtCheckpoint) {
      return "stop";
    }
    if (role === "_system_prompt") {
      if (typeof rec.content === "string") this.#systemPrompt = rec.content;
    } else if (role === "_checkpoint") {
      if (typeof rec.id === "number") this.#nCheckpoints = rec.id + 1;
    } else if (role === "_usage") {
      if (typeof rec.token_count === "number") {
        this.#tokenCount = rec.token_count;
        this.#pendingTokens = 0;
      }
    } else {
      // The schema only for a record the quick structural parse does not vouch for.
      let parsed = quickParseMessage(rec);
      if (parsed === undefined) {
        const checked = MessageSchema.safeParse(rec);
        if (!checked.success) return "skip";
        parsed = checked.data;
      }
      const msg = normalizeMessage(parsed);
      this.#history.push(msg);
      this.#pendingTokens += estimateMessageTokens(msg);
    }
    return "kept";
  }

  /** Messages, oldest first. */
  get history(): readonly NormalizedMessage[] {
    return this.#history;
  }

  /** Last reported token count. */
  get tokenCount(): number {
    return this.#tokenCount;
  }

  /** Token count plus an estimate for messages appended since the last report. */
  get tokenCountWithPending(): number {
    return this.#tokenCount + this.#pendingTokens;
  }

  /** Number of checkpoints (last id + 1). */
  get nCheckpoints(): number {
    return this.#nCheckpoints;
  }

  /** The stored (frozen) system prompt, if any. */
  get systemPrompt(): string | null {
    return this.#systemPrompt;
  }

  /**
   * Append records to the file. A failed write (disk full) leaves the file at its last complete
   * record and throws `SessionWriteError`; callers update memory only after it succeeded, so
   * memory and file never disagree.
   */
  async #append(records: JsonPiece[][]): Promise<void> {
    if (records.length === 0) return;
    await appendJsonRecords(this.file, records, { mode: 0o600 });
  }

  /** Write the system prompt record (first line of a new context). */
  async writeSystemPrompt(prompt: string): Promise<void> {
    await this.#append([pyJsonPieces({ role: "_system_prompt", content: prompt })]);
    this.#systemPrompt = prompt;
  }

  /** Add a checkpoint; returns its id. With `withUserMarker`, also a `CHECKPOINT n` message. */
  async checkpoint(withUserMarker = false): Promise<number> {
    const id = this.#nCheckpoints;
    const lines = [pyJsonPieces({ role: "_checkpoint", id })];
    let marker: NormalizedMessage | null = null;
    if (withUserMarker) {
      marker = {
        role: "user",
        content: [{ type: "text", text: `<system>CHECKPOINT ${id}</system>` }],
      };
      lines.push(jsonStringifyPieces(messageToJSON(marker)));
    }
    await this.#append(lines);
    this.#nCheckpoints = id + 1;
    if (marker) this.#history.push(marker);
    return id;
  }

  /** Append messages. */
  async append(...messages: NormalizedMessage[]): Promise<void> {
    await this.#append(messages.map((m) => jsonStringifyPieces(messageToJSON(m))));
    for (const m of messages) {
      this.#history.push(m);
      this.#pendingTokens += estimateMessageTokens(m);
    }
  }

  /** Record the provider-reported token count. */
  async updateTokenCount(count: number): Promise<void> {
    await this.#append([pyJsonPieces({ role: "_usage", token_count: count })]);
    this.#tokenCount = count;
    this.#pendingTokens = 0;
  }

  /**
   * Revert to just before checkpoint `id`: the live file is rotated and the kept prefix
   * re-written. Throws when no such checkpoint exists.
   */
  async revertTo(id: number): Promise<void> {
    if (id < 0 || id >= this.#nCheckpoints) {
      throw new RangeError(`There is no checkpoint with the given ID: ${id}`);
    }
    const rotated = await rotate(this.file);
    const text = await Deno.readTextFile(rotated);
    this.#reset();
    const kept = this.#replay(text, id);
    await Deno.writeTextFile(this.file, kept.map((l) => l + "\n").join(""), { mode: 0o600 });
  }

  /** Clear everything: the live file is rotated and a fresh empty one started. */
  async clear(): Promise<void> {
    try {
      await rotate(this.file);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    await Deno.writeTextFile(this.file, "", { mode: 0o600 });
    this.#reset();
  }

  #reset(): void {
    this.#history = [];
    this.#tokenCount = 0;
    this.#pendingTokens = 0;
    this.#nCheckpoints = 0;
    this.#systemPrompt = null;
  }
}
