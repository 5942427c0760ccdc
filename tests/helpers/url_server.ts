/**
 * Serves kimi over http on 127.0.0.1 for tests that run it by URL, as a user would from a web
 * host: `/repo/` is the source checkout, `/bundle/` a `deno task bundle` output and `/npm/` an
 * npm registry mirror of the shared Deno cache (so a child with an empty `DENO_DIR` needs no
 * network beyond 127.0.0.1). Every request is recorded.
 *
 * @module
 */
import { denoDir } from "./kimi_process.ts";
import { npmCacheDir, npmMirror } from "./npm_mirror.ts";

/** The repository root (no trailing slash). */
export const REPO_ROOT: string = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

/** A running server. */
export interface KimiUrlServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  origin: string;
  /** URL of the source checkout, with a trailing slash. */
  repoUrl: string;
  /** URL of the bundle directory, with a trailing slash. */
  bundleUrl: string;
  /** URL of the npm mirror, with a trailing slash (for `NPM_CONFIG_REGISTRY`). */
  npmUrl: string;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Stop the server. */
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  ts: "application/typescript",
  js: "application/javascript",
  json: "application/json",
  md: "text/markdown",
};

async function serveFile(root: string, rel: string): Promise<Response> {
  const path = `${root}/${rel}`;
  if (rel.split("/").includes("..")) return new Response("bad path", { status: 400 });
  try {
    const body = await Deno.readFile(path);
    const ext = rel.slice(rel.lastIndexOf(".") + 1);
    return new Response(body, {
      headers: { "content-type": TYPES[ext] ?? "application/octet-stream" },
    });
  } catch {
    return new Response("not found", { status: 404 });
  }
}

/** Start serving `REPO_ROOT` and `bundleDir`. */
export function serveKimi(opts: { bundleDir?: string } = {}): Promise<KimiUrlServer> {
  const requests: string[] = [];
  let mirror: ReturnType<typeof npmMirror> | null = null;
  const { promise, resolve } = Promise.withResolvers<KimiUrlServer>();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: ({ port }) => {
      const origin = `http://127.0.0.1:${port}`;
      mirror = npmMirror(npmCacheDir(denoDir()), `${origin}/npm/`);
      resolve({
        origin,
        repoUrl: `${origin}/repo/`,
        bundleUrl: `${origin}/bundle/`,
        npmUrl: `${origin}/npm/`,
        requests,
        close: () => server.shutdown(),
      });
    },
  }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    requests.push(path);
    if (path.startsWith("/repo/")) return await serveFile(REPO_ROOT, path.slice(6));
    if (path.startsWith("/bundle/") && opts.bundleDir) {
      return await serveFile(opts.bundleDir, path.slice(8));
    }
    if (path.startsWith("/npm/") && mirror) return await mirror.handle(path.slice(4));
    return new Response("not found", { status: 404 });
  });
  return promise;
}
