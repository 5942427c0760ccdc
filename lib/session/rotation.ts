/**
 * Rotation of a live JSON-lines file (e.g. `context.jsonl` → `context_<n>.jsonl`).
 *
 * @module
 */
import { basename, dirname, extname, join } from "node:path";

/**
 * Reserve the next free rotation name for `path`: for `dir/context.jsonl`, scans the
 * siblings `context_<n>.jsonl`, takes the largest `n` plus one (starting at 1) and creates that
 * file exclusively (`O_CREAT|O_EXCL`, mode 0600) so concurrent rotations never share a name.
 * Returns the reserved (empty) file's path; the caller then renames the live file onto it.
 */
export async function nextAvailableRotation(path: string): Promise<string> {
  const dir = dirname(path);
  const ext = extname(path);
  const stem = basename(path, ext);
  const pattern = new RegExp(`^${escapeRegExp(stem)}_(\\d+)${escapeRegExp(ext)}$`);
  let max = 0;
  try {
    for await (const entry of Deno.readDir(dir)) {
      const m = pattern.exec(entry.name);
      if (m) max = Math.max(max, Number(m[1]));
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    await Deno.mkdir(dir, { recursive: true });
  }
  for (let n = max + 1;; n++) {
    const candidate = join(dir, `${stem}_${n}${ext}`);
    try {
      const file = await Deno.open(candidate, { write: true, createNew: true, mode: 0o600 });
      file.close();
      return candidate;
    } catch (err) {
      if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
    }
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
