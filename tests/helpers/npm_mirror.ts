/**
 * A read-only npm registry for tests, served from the packages already in a Deno cache: a child
 * with an empty `DENO_DIR` and `NPM_CONFIG_REGISTRY` pointing here installs npm packages without
 * any network beyond 127.0.0.1.
 *
 * Packuments list only the versions present in the cache (so resolution picks those); each
 * tarball is packed (ustar + gzip) from the cached package directory, and the packument carries
 * that tarball's own sha512 integrity.
 *
 * @module
 */

/** The npm part of a Deno cache: `<DENO_DIR>/npm/registry.npmjs.org`. */
export function npmCacheDir(denoDir: string): string {
  return `${denoDir}/npm/registry.npmjs.org`;
}

const enc = new TextEncoder();

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

function tarHeader(path: string, size: number, mode: number): Uint8Array {
  const h = new Uint8Array(512);
  let name = path;
  let prefix = "";
  if (enc.encode(name).length > 100) {
    // ustar: split at a slash into prefix (<= 155 bytes) and name (<= 100 bytes).
    for (let i = path.indexOf("/"); i > 0 && i <= 155; i = path.indexOf("/", i + 1)) {
      if (enc.encode(path.slice(i + 1)).length <= 100) {
        prefix = path.slice(0, i);
        name = path.slice(i + 1);
        break;
      }
    }
  }
  const put = (s: string, off: number) => h.set(enc.encode(s), off);
  put(name, 0);
  put(octal(mode & 0o777, 8), 100);
  put(octal(0, 8), 108);
  put(octal(0, 8), 116);
  put(octal(size, 12), 124);
  put(octal(0, 12), 136);
  put("        ", 148);
  put("0", 156);
  put("ustar\0", 257);
  put("00", 263);
  put(prefix, 345);
  let sum = 0;
  for (const b of h) sum += b;
  put(octal(sum, 7) + " ", 148);
  return h;
}

async function listFiles(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  const entries = [];
  for await (const e of Deno.readDir(rel ? `${dir}/${rel}` : dir)) entries.push(e);
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...await listFiles(dir, r));
    else if (e.isFile && !e.name.startsWith(".deno")) out.push(r);
  }
  return out;
}

/** A gzipped npm tarball (`package/...`) of a directory. */
export async function packDirectory(dir: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for (const rel of await listFiles(dir)) {
    const data = await Deno.readFile(`${dir}/${rel}`);
    const mode = (await Deno.stat(`${dir}/${rel}`)).mode ?? 0o644;
    parts.push(tarHeader(`package/${rel}`, data.length, mode));
    parts.push(data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024));
  const stream = new Blob(parts as BlobPart[]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function sha512Integrity(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-512", data as BufferSource));
  let bin = "";
  for (const b of digest) bin += String.fromCharCode(b);
  return `sha512-${btoa(bin)}`;
}

/** Registry metadata built from the cached version directories of a package (null: none). */
async function packumentFromVersions(dir: string): Promise<Record<string, any> | null> {
  const versions: Record<string, unknown> = {};
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isDirectory || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(e.name)) continue;
      try {
        versions[e.name] = JSON.parse(await Deno.readTextFile(`${dir}/${e.name}/package.json`));
      } catch {
        // not a complete package
      }
    }
  } catch {
    return null;
  }
  return Object.keys(versions).length > 0 ? { versions } : null;
}

/** A running mirror. */
export interface NpmMirror {
  /** Handle a request whose path is below the mirror's prefix (e.g. `/commander`). */
  handle(path: string): Promise<Response>;
}

/** A mirror of the npm packages in `cacheDir`, reachable at `baseUrl` (ends with `/`). */
export function npmMirror(cacheDir: string, baseUrl: string): NpmMirror {
  const tarballs = new Map<string, Promise<Uint8Array>>();
  const tarball = (name: string, version: string) => {
    const key = `${name}@${version}`;
    let t = tarballs.get(key);
    if (!t) {
      t = packDirectory(`${cacheDir}/${name}/${version}`);
      tarballs.set(key, t);
    }
    return t;
  };
  const packument = async (name: string): Promise<Response> => {
    let doc: Record<string, any> | null;
    try {
      doc = JSON.parse(await Deno.readTextFile(`${cacheDir}/${name}/registry.json`));
    } catch {
      // A cache filled through a lock file holds the packages without their registry metadata:
      // the versions' own package.json files say what a registry would.
      doc = await packumentFromVersions(`${cacheDir}/${name}`);
    }
    if (doc === null) {
      return new Response(JSON.stringify({ error: "Not found" }), { status: 404 });
    }
    const versions: Record<string, any> = {};
    for (const [v, info] of Object.entries(doc.versions ?? {})) {
      try {
        if (!(await Deno.stat(`${cacheDir}/${name}/${v}`)).isDirectory) continue;
      } catch {
        continue;
      }
      const data = await tarball(name, v);
      versions[v] = {
        ...(info as Record<string, unknown>),
        name,
        dist: { tarball: `${baseUrl}${name}/-/${v}.tgz`, integrity: await sha512Integrity(data) },
      };
    }
    if (Object.keys(versions).length === 0) {
      // Known but never installed here (e.g. another platform's optional binary): list it so
      // resolution succeeds; its tarball is never fetched on this machine.
      for (const [v, info] of Object.entries(doc.versions ?? {})) {
        versions[v] = { ...info as object, name };
      }
    }
    const list = Object.keys(versions);
    const latest = doc["dist-tags"]?.latest in versions ? doc["dist-tags"].latest : list.at(-1);
    return Response.json({ name, "dist-tags": latest ? { latest } : {}, versions });
  };
  return {
    async handle(path: string): Promise<Response> {
      const p = decodeURIComponent(path.replace(/^\/+/, ""));
      const m = /^(.+)\/-\/(.+)\.tgz$/.exec(p);
      if (m) {
        try {
          return new Response(await tarball(m[1], m[2]) as BodyInit);
        } catch {
          return new Response("not found", { status: 404 });
        }
      }
      return await packument(p);
    },
  };
}
