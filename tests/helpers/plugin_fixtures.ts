/**
 * Plugins for the plugin tests: the repository's example plugin, small tool plugins written
 * on the fly, zips of a directory, and a git repository served by `git daemon` on 127.0.0.1.
 *
 * @module
 */
import { join, relative } from "node:path";
import { zipSync } from "fflate";

/** The example plugin of the repository (README "Writing a plugin"). */
export const EXAMPLE_PLUGIN: string = new URL("../../examples/plugins/greeter", import.meta.url)
  .pathname;

/** One tool of a written plugin. */
export interface FixtureTool {
  /** Tool name. */
  name: string;
  /** Shell script body (run as `sh <script>` in the plugin dir). */
  script: string;
  /** Description (default `Test tool <name>.`). */
  description?: string;
}

/** Write a tool plugin into `dir`; returns `dir`. */
export async function writeToolPlugin(
  dir: string,
  opts: {
    name: string;
    version?: string;
    tools: FixtureTool[];
    manifest?: Record<string, unknown>;
    files?: Record<string, string>;
  },
): Promise<string> {
  await Deno.mkdir(join(dir, "scripts"), { recursive: true });
  for (const t of opts.tools) {
    await Deno.writeTextFile(join(dir, "scripts", `${t.name}.sh`), t.script);
  }
  for (const [name, text] of Object.entries(opts.files ?? {})) {
    await Deno.mkdir(join(dir, name, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, name), text);
  }
  const manifest = {
    name: opts.name,
    version: opts.version ?? "0.1.0",
    description: `Test plugin ${opts.name}.`,
    tools: opts.tools.map((t) => ({
      name: t.name,
      description: t.description ?? `Test tool ${t.name}.`,
      command: ["sh", `scripts/${t.name}.sh`],
      parameters: { type: "object", properties: {} },
    })),
    ...opts.manifest,
  };
  await Deno.writeTextFile(join(dir, "plugin.json"), JSON.stringify(manifest, null, 2));
  return dir;
}

/** Copy a directory tree (test setup). */
export async function copyDir(src: string, dest: string): Promise<void> {
  await Deno.mkdir(dest, { recursive: true });
  for await (const e of Deno.readDir(src)) {
    if (e.isDirectory) await copyDir(join(src, e.name), join(dest, e.name));
    else await Deno.copyFile(join(src, e.name), join(dest, e.name));
  }
}

/** Zip the files below `dir`, their paths prefixed with `prefix` (e.g. `greeter/`). */
export async function zipDir(dir: string, prefix = ""): Promise<Uint8Array> {
  const files: Record<string, Uint8Array> = {};
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const p = join(d, e.name);
      if (e.isDirectory) await walk(p);
      else files[prefix + relative(dir, p)] = await Deno.readFile(p);
    }
  };
  await walk(dir);
  return zipSync(files);
}

/** Run git in `cwd`; throws with its stderr on failure. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: [
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.com",
      "-c",
      "init.defaultBranch=main",
      ...args,
    ],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** A `git daemon` serving a base directory on 127.0.0.1. */
export interface GitDaemon {
  /** `git://127.0.0.1:<port>` */
  url: string;
  /** Stop it. */
  close(): Promise<void>;
}

/** Start `git daemon` exporting every repository under `base`; resolves once it accepts. */
export async function startGitDaemon(base: string): Promise<GitDaemon> {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const child = new Deno.Command("git", {
    args: [
      "daemon",
      "--export-all",
      "--reuseaddr",
      `--base-path=${base}`,
      "--listen=127.0.0.1",
      `--port=${port}`,
      base,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  // wait until it accepts connections
  for (let i = 0; i < 400; i++) {
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      c.close();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  return {
    url: `git://127.0.0.1:${port}`,
    async close() {
      try {
        child.kill("SIGTERM");
      } catch {
        // gone
      }
      await child.status;
    },
  };
}

/** Serve `files` (path → bytes) on 127.0.0.1; 404 otherwise. */
export function serveFiles(
  files: Record<string, Uint8Array>,
): { url: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    const body = files[path];
    return body
      ? new Response(body as Uint8Array<ArrayBuffer>)
      : new Response("not found", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}
