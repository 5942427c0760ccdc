/**
 * Where plugins live and what kimi knows about them: the plugins root (`<share>/plugins`), one
 * directory per plugin, and `<root>/installed.json` recording, per plugin, the content hash
 * taken at install time, whether it is enabled and its format. A plugin whose files no longer
 * match the recorded hash, or that was never installed through `kimi plugin install`, is not
 * loaded.
 *
 * @module
 */
import { join } from "node:path";
import * as z from "zod";
import { atomicWriteText } from "../fs/atomic_write.ts";
import { PluginError } from "./manifest.ts";

/** Name of the state file under the plugins root. */
export const STATE_FILE = "installed.json";

/** The plugins root of a share dir. */
export function pluginsRoot(shareDir: string): string {
  return join(shareDir, "plugins");
}

/** What is recorded about one installed plugin. */
export const InstalledPluginSchema = z.object({
  /** sha256 over the plugin's files (see {@link contentHash}). */
  hash: z.string(),
  /** Whether its tools/skills/servers are loaded. */
  enabled: z.boolean().default(true),
  /** Manifest format. */
  format: z.enum(["tools", "bundle"]).default("tools"),
  /** Where it was installed from (shown by `info`). */
  source: z.string().default(""),
  /** ISO time of the (last) install. */
  installed_at: z.string().default(""),
});
/** What is recorded about one installed plugin. */
export type InstalledPlugin = z.infer<typeof InstalledPluginSchema>;

/** The state file. */
export const PluginStateSchema = z.object({
  version: z.literal(1),
  plugins: z.record(z.string(), InstalledPluginSchema),
});
/** The state file. */
export type PluginState = z.infer<typeof PluginStateSchema>;

/**
 * Read `<root>/installed.json` (empty state when missing).
 *
 * @throws {PluginError} when it exists but is not valid (it is never silently reset, since
 * that would forget which plugins are trusted).
 */
export async function readPluginState(root: string): Promise<PluginState> {
  const path = join(root, STATE_FILE);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { version: 1, plugins: {} };
    throw new PluginError(`Failed to read ${path}: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new PluginError(
      `Failed to read ${path}: ${(err as Error).message}. Fix or delete it, then reinstall ` +
        "your plugins with `kimi plugin install`.",
    );
  }
  const parsed = PluginStateSchema.safeParse(data);
  if (!parsed.success) {
    throw new PluginError(
      `Invalid ${STATE_FILE} in ${root}: ${parsed.error.issues[0]?.message}. Fix or delete it, ` +
        "then reinstall your plugins with `kimi plugin install`.",
    );
  }
  return parsed.data;
}

/** Write the state file atomically. */
export async function writePluginState(root: string, state: PluginState): Promise<void> {
  await Deno.mkdir(root, { recursive: true });
  await atomicWriteText(join(root, STATE_FILE), JSON.stringify(state, null, 2) + "\n");
}

/** Change the state under the root (read, apply `f`, write). */
export async function updatePluginState(
  root: string,
  f: (state: PluginState) => void,
): Promise<void> {
  const state = await readPluginState(root);
  f(state);
  await writePluginState(root, state);
}

/**
 * A sha256 over every entry below `dir` in sorted order: relative path, kind, and the file's
 * bytes or the link's target. Any added, removed, changed or re-linked file changes it.
 */
export async function contentHash(dir: string): Promise<string> {
  // node:crypto (with the streams it pulls in) loads only when a plugin is hashed: every run
  // reads the plugins' state, few have plugins.
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  const walk = async (rel: string): Promise<void> => {
    const abs = rel ? join(dir, rel) : dir;
    const names: string[] = [];
    for await (const e of Deno.readDir(abs)) names.push(e.name);
    names.sort();
    for (const name of names) {
      const childRel = rel ? `${rel}/${name}` : name;
      const path = join(dir, childRel);
      const st = await Deno.lstat(path);
      if (st.isSymlink) {
        hash.update(`L\0${childRel}\0${await Deno.readLink(path)}\0`);
      } else if (st.isDirectory) {
        hash.update(`D\0${childRel}\0`);
        await walk(childRel);
      } else if (st.isFile) {
        hash.update(`F\0${childRel}\0${st.size}\0${(st.mode ?? 0) & 0o111 ? "x" : "-"}\0`);
        const file = await Deno.open(path);
        for await (const chunk of file.readable) hash.update(chunk);
      } else {
        hash.update(`O\0${childRel}\0`);
      }
    }
  };
  await walk("");
  return hash.digest("hex");
}
