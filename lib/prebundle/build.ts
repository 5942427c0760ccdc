/**
 * Builds one pre-bundled npm package (see `lib/prebundle/load.ts`): `deno bundle` of a module
 * that re-exports the package's namespace as `ns`, from the package files already in the Deno
 * cache (minified unless its spec says not), with its load-time Node built-in imports made lazy
 * (`transforms.ts`), checked by importing it, then published with an atomic rename. A run that
 * reads the cache meanwhile sees the old state or the whole new file, never a part.
 *
 * kimi starts this module as its own process (`deno run … build.ts <name> <version> <file>
 * <marker>`), detached, so a short run (print mode) can exit while the build finishes; it runs
 * with read and write permission on the cache's `deps/` directory and run permission for
 * `deno` only. The marker (`<file>.building`) is removed on success; on failure it stays, with
 * the reason, so runs do not start a failing build again and again (see `MARKER_TTL_MS`).
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { PREBUNDLES } from "./location.ts";
import { deferBuiltinImports, patchCreateRequire } from "./transforms.ts";

/** What {@link buildPrebundle} needs. */
export interface BuildPrebundleOptions {
  /** Import-map name of the package, e.g. `openai`. */
  name: string;
  /** Exact npm version, e.g. `7.57.0`. */
  version: string;
  /** Where the finished bundle goes. */
  file: string;
  /** The marker file the starting run created; removed on success, kept on failure. */
  marker?: string;
  /** The `deno` executable (default: this process's). */
  deno?: string;
}

/** The result of {@link buildPrebundle}. */
export type BuildPrebundleResult = { ok: true } | { ok: false; reason: string };

/** Build the bundle of one package into `opts.file` (see the module doc). */
export async function buildPrebundle(opts: BuildPrebundleOptions): Promise<BuildPrebundleResult> {
  const dir = dirname(opts.file);
  let tmp: string | null = null;
  const fail = async (reason: string): Promise<BuildPrebundleResult> => {
    if (opts.marker) {
      await Deno.writeTextFile(opts.marker, `failed: ${reason}\n`).catch(() => {});
    }
    return { ok: false, reason };
  };
  try {
    await Deno.mkdir(dir, { recursive: true });
    await removeAbandonedBuilds(dir, basename(opts.file));
    tmp = await Deno.makeTempDir({ dir, prefix: `.${basename(opts.file)}.` });
    const entry = join(tmp, "entry.ts");
    const out = join(tmp, "bundle.js");
    await Deno.writeTextFile(
      entry,
      `import * as ns from ${
        JSON.stringify(`npm:${opts.name}@${opts.version}`)
      };\nexport { ns };\n`,
    );
    const run = await new Deno.Command(opts.deno ?? Deno.execPath(), {
      args: [
        "bundle",
        "--quiet",
        "--no-config",
        "--no-lock",
        "--platform=deno",
        "--format=esm",
        ...(PREBUNDLES[opts.name]?.minify === false ? [] : ["--minify"]),
        "--output",
        out,
        entry,
      ],
      cwd: tmp,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!run.success) {
      const why = new TextDecoder().decode(run.stderr).trim().split("\n").slice(-3).join(" ");
      return await fail(`deno bundle exited with ${run.code}: ${why}`);
    }
    // Node built-ins the package imports at load time but rarely uses load on first use.
    const text = await Deno.readTextFile(out);
    const patched = deferBuiltinImports(patchCreateRequire(text));
    if (patched !== text) await Deno.writeTextFile(out, patched);
    const mod = await import(pathToFileURL(out).href);
    if (typeof mod.ns !== "object" || mod.ns === null || Object.keys(mod.ns).length === 0) {
      return await fail("the bundle does not export the package");
    }
    await Deno.rename(out, opts.file);
    if (opts.marker) await Deno.remove(opts.marker).catch(() => {});
    await removeSupersededBundles(dir, basename(opts.file));
    return { ok: true };
  } catch (err) {
    return await fail(err instanceof Error ? err.message : String(err));
  } finally {
    if (tmp !== null) await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/**
 * Remove the bundles of the same package that `file` supersedes (another package version,
 * Deno version or bundle format), so the cache holds one bundle per package. A run of another
 * Deno version builds its own again.
 */
async function removeSupersededBundles(dir: string, file: string): Promise<void> {
  const pkg = file.slice(0, file.indexOf("@", 1) + 1); // `openai@`, `@scope__name@`
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name !== file && e.name.startsWith(pkg) && e.name.endsWith(".js")) {
      await Deno.remove(join(dir, e.name)).catch(() => {});
    }
  }
}

/** How old a build's temp dir must be to count as abandoned (its build was killed). */
export const ABANDONED_BUILD_MS = 10 * 60_000;

/** Remove the temp dirs of builds of `file` in `dir` that were killed mid-way. */
async function removeAbandonedBuilds(dir: string, file: string): Promise<void> {
  for await (const e of Deno.readDir(dir)) {
    if (!e.isDirectory || !e.name.startsWith(`.${file}.`)) continue;
    const path = join(dir, e.name);
    const mtime = (await Deno.stat(path).catch(() => null))?.mtime?.getTime() ?? Date.now();
    if (Date.now() - mtime > ABANDONED_BUILD_MS) {
      await Deno.remove(path, { recursive: true }).catch(() => {});
    }
  }
}

if (import.meta.main) {
  const [name, version, file, marker] = Deno.args;
  if (!name || !version || !file) {
    console.error("usage: build.ts <package> <version> <bundle file> [marker file]");
    Deno.exit(2);
  }
  const result = await buildPrebundle({ name, version, file, marker });
  if (!result.ok) console.error(`kimi: could not pre-bundle ${name}@${version}: ${result.reason}`);
  Deno.exit(result.ok ? 0 : 1);
}
