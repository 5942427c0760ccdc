/**
 * Prompt history persisted per work dir: `<share>/user-history/<md5(work dir)>.jsonl`, one
 * `{"content": "..."}` record per line, oldest first. Shell-mode (Ctrl-X) commands carry
 * `"mode": "shell"` and are recalled only in shell mode, agent inputs only in agent mode.
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
  #shell: string[] = [];

  /** Create a store over a file (call {@link load} before use). */
  constructor(file: string) {
    this.#file = file;
  }

  /** Agent-mode entries, oldest first. */
  get entries(): readonly string[] {
    return this.#entries;
  }

  /** The entries of one mode (shell-mode commands or agent inputs), oldest first. */
  list(shellMode: boolean): readonly string[] {
    return shellMode ? this.#shell : this.#entries;
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
    const shell: string[] = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const rec = JSON.parse(line);
        if (typeof rec?.content !== "string") continue;
        (rec.mode === "shell" ? shell : entries).push(rec.content);
      } catch {
        // skip a corrupt line
      }
    }
    this.#entries = entries;
    this.#shell = shell;
  }

  /** Append an entry (blank input and an immediate repeat are not recorded). */
  async add(content: string, shellMode = false): Promise<void> {
    const list = shellMode ? this.#shell : this.#entries;
    if (!content.trim() || list.at(-1) === content) return;
    list.push(content);
    const rec = shellMode ? { content, mode: "shell" } : { content };
    try {
      await Deno.mkdir(this.#file.slice(0, this.#file.lastIndexOf("/")), { recursive: true });
      await Deno.writeTextFile(this.#file, JSON.stringify(rec) + "\n", { append: true });
    } catch {
      // history is a convenience: a read-only share dir must not break the prompt
    }
  }
}
