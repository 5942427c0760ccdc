/**
 * Where a plugin is installed from (reference §A6), checked in this order: a zip URL, a git
 * URL (cloned with the real `git` binary, with the `.git/<sub>`, `tree/<branch>/<sub>` and
 * GitLab `/-/tree/` forms), a local `.zip` file, a local directory. Archives are unpacked with
 * every member checked to stay inside the temp dir and with caps on sizes (zip bombs).
 *
 * @module
 */
import { basename, join, resolve } from "node:path";
import { Unzip, UnzipInflate } from "fflate";
import { insideDir, PluginError } from "./manifest.ts";

/** Largest zip (download or file) accepted. */
export const MAX_ZIP_BYTES = 100 * 1024 * 1024;
/** Largest total unpacked size accepted. */
export const MAX_UNPACKED_BYTES = 512 * 1024 * 1024;
/** Most members a zip may hold. */
export const MAX_ZIP_ENTRIES = 20_000;
/** Download timeout of a zip URL. */
export const DOWNLOAD_TIMEOUT_MS = 60_000;

/** A git clone target parsed from a URL. */
export interface GitSource {
  /** What `git clone` gets. */
  cloneUrl: string;
  /** Directory inside the repository holding the plugin ("" for the root). */
  subpath: string;
  /** Branch from a `tree/<branch>/` URL, or null. */
  branch: string | null;
}

/** Whether `target` is a zip URL (http(s) and a path ending in `.zip`). */
export function isZipUrl(target: string): boolean {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") &&
    url.pathname.toLowerCase().endsWith(".zip");
}

/**
 * Whether `target` is a git URL: `https://`, `http://`, `git@` (the reference's forms) or
 * `git://`, `ssh://`, `file://`, and one of: contains `.git/`, ends with `.git`, names
 * `github.com/` or `gitlab.com/`, or has a `/tree/` path (self-hosted forges).
 */
export function isGitUrl(target: string): boolean {
  if (!/^(https?:\/\/|git@|git:\/\/|ssh:\/\/|file:\/\/)/.test(target)) return false;
  return target.includes(".git/") || target.endsWith(".git") ||
    target.includes("github.com/") || target.includes("gitlab.com/") ||
    /^[a-z]+:\/\/[^/]+\/[^/]+\/[^/]+\/(-\/)?tree\//.test(target);
}

/** Split a git URL into the clone URL, subpath and branch (reference §A6 item 2). */
export function parseGitUrl(target: string): GitSource {
  const trim = (s: string) => s.replace(/^\/+|\/+$/g, "");
  const dotGit = target.indexOf(".git/");
  if (dotGit >= 0) {
    return {
      cloneUrl: target.slice(0, dotGit + 4),
      subpath: trim(target.slice(dotGit + 5)),
      branch: null,
    };
  }
  if (target.endsWith(".git")) return { cloneUrl: target, subpath: "", branch: null };
  const m = /^([a-z]+:\/\/)([^/]*)(\/.*)?$/.exec(target);
  if (!m) return { cloneUrl: target, subpath: "", branch: null };
  const segs = (m[3] ?? "").split("/").filter(Boolean);
  if (segs.length < 2) return { cloneUrl: target, subpath: "", branch: null };
  let rest = segs.slice(2);
  if (rest[0] === "-") rest = rest.slice(1);
  let branch: string | null = null;
  if (rest[0] === "tree" && rest.length >= 2) {
    branch = rest[1];
    rest = rest.slice(2);
  }
  return { cloneUrl: `${m[1]}${m[2]}/${segs[0]}/${segs[1]}`, subpath: rest.join("/"), branch };
}

/** A resolved source: the directory holding the plugin, and the temp dir to remove after. */
export interface ResolvedSource {
  /** Directory holding `plugin.json` (or `kimi.plugin.json`). */
  dir: string;
  /** Temp dir created for it (null for a local directory). */
  tempDir: string | null;
}

/** Options of {@link resolveSource}. */
export interface ResolveSourceOptions {
  /** Progress lines (`Downloading <url>...`, `Cloning <url>...`, `Extracting <name>...`). */
  progress: (line: string) => void;
  /** Base for relative paths. */
  cwd: string;
  /** HOME for `~` expansion. */
  home: string | null;
  /** Whether a directory holds a manifest (either format). */
  hasManifest: (dir: string) => Promise<boolean>;
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}

/**
 * Resolve `target` to a directory holding a plugin. The caller removes `tempDir` when done.
 *
 * @throws {PluginError} with the reference's message (without the `Error: ` prefix).
 */
export async function resolveSource(
  target: string,
  opts: ResolveSourceOptions,
): Promise<ResolvedSource> {
  if (isZipUrl(target)) {
    const tempDir = await Deno.makeTempDir({ prefix: "kimi-plugin-" });
    try {
      opts.progress(`Downloading ${target}...`);
      const data = await download(target);
      return { dir: await extractZip(data, tempDir, opts.hasManifest), tempDir };
    } catch (err) {
      await Deno.remove(tempDir, { recursive: true }).catch(() => {});
      throw err;
    }
  }
  if (isGitUrl(target)) {
    const tempDir = await Deno.makeTempDir({ prefix: "kimi-plugin-" });
    try {
      return { dir: await cloneGit(parseGitUrl(target), tempDir, opts), tempDir };
    } catch (err) {
      await Deno.remove(tempDir, { recursive: true }).catch(() => {});
      throw err;
    }
  }
  let path = target;
  if (opts.home && (path === "~" || path.startsWith("~/"))) path = opts.home + path.slice(1);
  path = resolve(opts.cwd, path);
  let st: Deno.FileInfo | null = null;
  try {
    st = await Deno.stat(path);
  } catch {
    st = null;
  }
  if (st?.isFile && path.endsWith(".zip")) {
    if (st.size > MAX_ZIP_BYTES) throw tooBig(st.size);
    const tempDir = await Deno.makeTempDir({ prefix: "kimi-plugin-" });
    try {
      opts.progress(`Extracting ${basename(path)}...`);
      const data = await Deno.readFile(path);
      return { dir: await extractZip(data, tempDir, opts.hasManifest), tempDir };
    } catch (err) {
      await Deno.remove(tempDir, { recursive: true }).catch(() => {});
      throw err;
    }
  }
  if (st?.isDirectory) return { dir: path, tempDir: null };
  throw new PluginError(`${target} is not a directory, zip file, zip URL, or git URL`);
}

function tooBig(size: number): PluginError {
  return new PluginError(
    `zip is too large: ${size} bytes (at most ${MAX_ZIP_BYTES} bytes are accepted)`,
  );
}

async function download(url: string): Promise<Uint8Array> {
  const signal = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(url, { redirect: "follow", signal });
  } catch (err) {
    throw new PluginError(`download failed: ${(err as Error).message}`);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new PluginError(`download failed: HTTP ${res.status} ${res.statusText} for ${url}`);
  }
  const declared = Number(res.headers.get("content-length") ?? "NaN");
  if (declared > MAX_ZIP_BYTES) {
    await res.body?.cancel().catch(() => {});
    throw tooBig(declared);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body ?? new ReadableStream<Uint8Array>()) {
      total += chunk.length;
      if (total > MAX_ZIP_BYTES) {
        await res.body?.cancel().catch(() => {});
        throw tooBig(total);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof PluginError) throw err;
    throw new PluginError(`download failed: ${(err as Error).message}`);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Unpack a zip into `tempDir` and find the plugin: the extraction root, or the first (sorted)
 * direct child directory holding a manifest.
 */
export async function extractZip(
  data: Uint8Array,
  tempDir: string,
  hasManifest: (dir: string) => Promise<boolean>,
): Promise<string> {
  const root = join(tempDir, "zip");
  await Deno.mkdir(root);
  const files = unpack(data, root);
  for (const { name, path, chunks } of files) {
    if (name.endsWith("/")) {
      await Deno.mkdir(path, { recursive: true });
      continue;
    }
    await Deno.mkdir(join(path, ".."), { recursive: true });
    const file = await Deno.open(path, { write: true, createNew: true }).catch((err) => {
      throw new PluginError(`invalid zip archive: ${name}: ${(err as Error).message}`);
    });
    try {
      for (const c of chunks) await file.write(c);
    } finally {
      file.close();
    }
  }
  if (await hasManifest(root)) return root;
  const children: string[] = [];
  for await (const e of Deno.readDir(root)) if (e.isDirectory) children.push(e.name);
  children.sort();
  for (const c of children) if (await hasManifest(join(root, c))) return join(root, c);
  throw new PluginError("No plugin.json found in zip");
}

async function cloneGit(
  src: GitSource,
  tempDir: string,
  opts: ResolveSourceOptions,
): Promise<string> {
  opts.progress(`Cloning ${src.cloneUrl}...`);
  const repo = join(tempDir, "repo");
  const args = ["clone", "--depth", "1", ...(src.branch ? ["--branch", src.branch] : [])];
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("git", {
      args: [...args, "--", src.cloneUrl, repo],
      // never wait for a password prompt on a repository that does not exist
      env: { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "true", SSH_ASKPASS: "true" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (err) {
    throw new PluginError(
      `git clone failed: cannot run git (${(err as Error).message}); install git and allow ` +
        "this run to start it (--allow-run=git)",
    );
  }
  if (!out.success) {
    throw new PluginError(`git clone failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  if (src.subpath) {
    const dir = insideDir(repo, src.subpath);
    const real = dir ? await Deno.realPath(dir).catch(() => null) : null;
    const realRepo = await Deno.realPath(repo);
    if (dir === null || (real !== null && insideDir(realRepo, real) === null)) {
      throw new PluginError(`subpath escapes repository: ${src.subpath}`);
    }
    if (!(await isDir(dir))) {
      throw new PluginError(`subpath '${src.subpath}' not found in repository`);
    }
    if (!(await opts.hasManifest(dir))) throw new PluginError(`no plugin.json in '${src.subpath}'`);
    return dir;
  }
  if (await opts.hasManifest(repo)) return repo;
  const found: string[] = [];
  for await (const e of Deno.readDir(repo)) {
    if (e.isDirectory && !e.name.startsWith(".") && await opts.hasManifest(join(repo, e.name))) {
      found.push(e.name);
    }
  }
  found.sort();
  if (found.length > 0) {
    throw new PluginError(
      "No plugin.json at repository root. Available plugins:\n" +
        found.map((f) => `  - ${f}`).join("\n") +
        "\nUse: kimi plugin install <url>/<plugin-name>",
    );
  }
  throw new PluginError("No plugin.json found in repository");
}

/** One unpacked member. */
interface Member {
  name: string;
  path: string;
  chunks: Uint8Array[];
}

/**
 * Inflate every member in memory, counting the bytes actually produced (a member's declared
 * size can lie), so a zip bomb is stopped at {@link MAX_UNPACKED_BYTES}.
 */
function unpack(data: Uint8Array, root: string): Member[] {
  const members: Member[] = [];
  let total = 0;
  let failure: PluginError | null = null;
  const fail = (e: PluginError) => (failure ??= e);
  const uz = new Unzip((file) => {
    if (failure) return;
    if (members.length >= MAX_ZIP_ENTRIES) {
      fail(new PluginError(`zip has more than ${MAX_ZIP_ENTRIES} members`));
      return;
    }
    const path = insideDir(root, file.name);
    if (path === null || file.name.startsWith("/") || file.name.includes("\\")) {
      fail(new PluginError(`zip contains unsafe path: ${file.name}`));
      return;
    }
    const member: Member = { name: file.name, path, chunks: [] };
    members.push(member);
    file.ondata = (err, chunk) => {
      if (failure) return;
      if (err) {
        fail(new PluginError(`invalid zip archive: ${err.message}`));
        file.terminate();
        return;
      }
      total += chunk.length;
      if (total > MAX_UNPACKED_BYTES) {
        fail(
          new PluginError(
            `zip unpacks to more than ${MAX_UNPACKED_BYTES} bytes (refused as a zip bomb)`,
          ),
        );
        file.terminate();
        return;
      }
      if (chunk.length > 0) member.chunks.push(chunk);
    };
    try {
      file.start();
    } catch (err) {
      fail(new PluginError(`invalid zip archive: ${(err as Error).message}`));
    }
  });
  uz.register(UnzipInflate);
  try {
    // fed in slices so a bomb is noticed before all of it is inflated
    const step = 64 * 1024;
    for (let at = 0; at < data.length && !failure; at += step) {
      uz.push(data.subarray(at, at + step), at + step >= data.length);
    }
  } catch (err) {
    fail(new PluginError(`invalid zip archive: ${(err as Error).message}`));
  }
  if (failure) throw failure;
  if (members.length === 0 && !isZipData(data)) {
    throw new PluginError("invalid zip archive: File is not a zip file");
  }
  return members;
}

/** Whether the data starts like a zip (local header or empty archive's end record). */
function isZipData(data: Uint8Array): boolean {
  return data.length >= 4 && data[0] === 0x50 && data[1] === 0x4b &&
    (data[2] === 3 || data[2] === 5) && (data[3] === 4 || data[3] === 6);
}
