/**
 * Prompt history persisted per work dir: `<share>/user-history/<md5(work dir)>.jsonl`, one
 * `{"content": "..."}` record per line, oldest first.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Path of the history file of a work dir. */
export function historyFile(shareDir: string, workDir: string): string {
  const digest = createHash("md5").update(workDir).digest("hex");
  return `${shareDir}/user-history/${digest}.jsonl`;
}

/** The history of one work dir. */
export class HistoryStore {
  readonly #file: string;
  #entries: string[] = [];

  /** Create a store over a file (call {@link load} before use). */
  constructor(file: string) {
    this.#file = file;
  }

  /** Entries, oldest first. */
  get entries(): readonly string[] {
    return this.#entries;
  }

  /** Read the file; unreadable lines are skipped, a missing file is an empty history. */
  async load(): Promise<void> {
    let text = "";
    try {
      text = await Deno.readTextFile(this.#file);
    } catch {
      return;
    }
    const entries: string[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const rec = JSON.parse(line);
        if (typeof rec?.content === "string") entries.push(rec.content);
      } catch {
        // skip a corrupt line
      }
    }
    this.#entries = entries;
  }

  /** Append an entry (blank input and an immediate repeat are not recorded). */
  async add(content: string): Promise<void> {
    if (!content.trim() || this.#entries.at(-1) === content) return;
    this.#entries.push(content);
    try {
      await Deno.mkdir(this.#file.slice(0, this.#file.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(this.#file, JSON.stringify({ content }) + "\n", { append: true });
    } catch {
      // history is a convenience: a read-only share dir must not break the prompt
    }
  }
}
