/**
 * `${KIMI_AGENTS_MD}`: the project's `AGENTS.md` files merged from the project root down to the
 * work dir.
 *
 * The project root is the nearest ancestor of the work dir (itself included) that contains
 * `.git`, else the work dir. For each directory from the root down to the work dir,
 * `.kimi/AGENTS.md` is taken (when it is a file), then `AGENTS.md`, or `agents.md` when there is
 * no `AGENTS.md`. Each non-empty file (trimmed) becomes `<!-- From: <path> -->\n<content>`; the
 * parts are joined by a blank line. The result is capped at {@link AGENTS_MD_MAX_BYTES} UTF-8
 * bytes, annotations and separators included, with the budget handed out leaf-first: deeper,
 * more specific files are kept whole and shallower ones are truncated or dropped.
 *
 * @module
 */
import { isPresent, pathStatus } from "../fs/exists.ts";
import { dirname, join, resolve } from "node:path";
import { log } from "../log.ts";
import { isSecretFile } from "../tooling/sensitive.ts";
import type { ControlPath } from "../tooling/control_paths.ts";

/** Byte budget of the merged text. */
export const AGENTS_MD_MAX_BYTES = 32 * 1024;

/**
 * The nearest ancestor of `workDir` (itself included) containing `.git` (a directory, or a file
 * for worktrees and submodules); `workDir` when there is none.
 */
export async function findProjectRoot(workDir: string): Promise<string> {
  const start = resolve(workDir);
  const dirs = [start];
  for (let d = dirname(start); d !== dirs[dirs.length - 1]; d = dirname(d)) dirs.push(d);
  // Every ancestor is checked at once; the nearest one with `.git` wins, as walking up would.
  const found = await Promise.all(
    dirs.map(async (d) => isPresent(await pathStatus(join(d, ".git")))),
  );
  const i = found.indexOf(true);
  return i >= 0 ? dirs[i] : start;
}

/** Directories from `root` down to `leaf`, both included (just `leaf` if it is not below). */
function dirsRootToLeaf(leaf: string, root: string): string[] {
  const dirs: string[] = [];
  let current = leaf;
  while (true) {
    dirs.push(current);
    if (current === root) break;
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return dirs.reverse();
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes, never splitting a character. */
function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  let cut = maxBytes;
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut--;
  return decoder.decode(bytes.subarray(0, cut));
}

async function readTrimmed(path: string, controls: readonly ControlPath[]): Promise<string> {
  // A planted AGENTS.md that leads to a secret (a symlink to ~/.ssh/id_rsa, kimi's config)
  // is never inlined into the system prompt.
  if (isSecretFile(path, controls)) {
    log("WARNING", "agents_md", `Skipping ${path}: it leads to a file that holds secrets`);
    return "";
  }
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch {
    return "";
  }
}

/**
 * The merged AGENTS.md text for `workDir` (see the module doc); `""` when there is none. A file
 * that leads to a secret (a sensitive name, `/proc`, one of the session's secret `controls`)
 * is skipped.
 */
export async function loadAgentsMd(
  workDir: string,
  controls: readonly ControlPath[] = [],
): Promise<string> {
  const leaf = resolve(workDir);
  const root = await findProjectRoot(leaf);
  const discovered: { path: string; content: string }[] = [];
  for (const dir of dirsRootToLeaf(leaf, root)) {
    const candidates: string[] = [];
    const kimi = join(dir, ".kimi", "AGENTS.md");
    if ((await pathStatus(kimi)) === "file") candidates.push(kimi);
    for (const name of ["AGENTS.md", "agents.md"]) {
      const p = join(dir, name);
      if ((await pathStatus(p)) === "file") {
        candidates.push(p);
        break;
      }
    }
    for (const path of candidates) {
      const content = await readTrimmed(path, controls);
      if (content) discovered.push({ path, content });
    }
  }
  if (discovered.length === 0) return "";

  // Leaf-first budget: the annotation and the separator before each part count too.
  let remaining = AGENTS_MD_MAX_BYTES;
  const kept: string[] = new Array(discovered.length).fill("");
  for (let i = discovered.length - 1; i >= 0; i--) {
    const { path, content } = discovered[i];
    const separatorCost = i < discovered.length - 1 ? 2 : 0;
    remaining -= byteLength(`<!-- From: ${path} -->\n`) + separatorCost;
    if (remaining <= 0) {
      remaining = 0;
      continue;
    }
    const fitted = byteLength(content) > remaining
      ? truncateUtf8(content, remaining).trim()
      : content;
    remaining -= byteLength(fitted);
    kept[i] = fitted;
  }
  return discovered
    .map(({ path }, i) => kept[i] ? `<!-- From: ${path} -->\n${kept[i]}` : "")
    .filter((part) => part !== "")
    .join("\n\n");
}
