/**
 * Tab completion at the prompt: slash command names at the start of the input and `@path`
 * file mentions anywhere.
 *
 * @module
 */

/** What a completion replaces and the candidates for it. */
export interface Completion {
  /** Start offset of the replaced text in the buffer. */
  start: number;
  /** End offset (the cursor). */
  end: number;
  /** Candidate replacements, sorted. */
  candidates: string[];
}

/** Sources of completion candidates. */
export interface CompletionSource {
  /** Slash command names with aliases (without `/`). */
  commands: () => string[];
  /** Work dir that `@` paths are relative to. */
  workDir: string;
  /** One-line description of a command name (shown in the menu). */
  describe?: (name: string) => string | undefined;
  /** The primary name of a command name or alias (the menu lists each command once). */
  primary?: (name: string) => string | undefined;
}

const SKIP_DIRS = new Set([".git", "node_modules"]);

/** Longest common prefix of strings. */
export function commonPrefix(items: string[]): string {
  if (items.length === 0) return "";
  let p = items[0];
  for (const s of items.slice(1)) {
    while (!s.startsWith(p)) p = p.slice(0, -1);
  }
  return p;
}

/** Find completions for the text before the cursor; null when nothing applies. */
export async function complete(
  buffer: string,
  cursor: number,
  source: CompletionSource,
): Promise<Completion | null> {
  const before = buffer.slice(0, cursor);
  const cmd = before.match(/^\/([A-Za-z0-9_:-]*)$/);
  if (cmd) {
    const prefix = cmd[1];
    const names = [...new Set(source.commands())].filter((n) => n.startsWith(prefix)).sort();
    return { start: 1, end: cursor, candidates: names.map((n) => n) };
  }
  const at = before.match(/(?:^|\s)@([^\s@]*)$/);
  if (at) {
    const partial = at[1];
    const start = cursor - partial.length;
    const slash = partial.lastIndexOf("/");
    const dirPart = slash >= 0 ? partial.slice(0, slash + 1) : "";
    const namePart = partial.slice(slash + 1);
    if (dirPart.startsWith("/") || dirPart.includes("..")) return null;
    const candidates: string[] = [];
    try {
      for await (const e of Deno.readDir(`${source.workDir}/${dirPart}`)) {
        if (SKIP_DIRS.has(e.name)) continue;
        if (!e.name.startsWith(namePart)) continue;
        if (e.name.startsWith(".") && !namePart.startsWith(".")) continue;
        candidates.push(dirPart + e.name + (e.isDirectory ? "/" : ""));
        if (candidates.length >= 200) break;
      }
    } catch {
      return null;
    }
    candidates.sort();
    return { start, end: cursor, candidates };
  }
  return null;
}
