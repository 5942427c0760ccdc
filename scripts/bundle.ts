/**
 * `deno task bundle`: writes `dist/kimi/`, a self-contained JavaScript build of kimi that
 * `deno run` runs from a file or an `http(s)://` URL with no import map, no `deno.json` and no
 * npm resolution: every npm dependency is bundled in, and the modules kimi imports lazily are
 * code-split entry points loaded only by the runs that need them.
 *
 * - `dist/kimi/main.js`: the `kimi` command (`deno run -A <url>/main.js ...`).
 * - `dist/kimi/scripts/launch.js`: the permission-profile launcher, which starts `main.js`
 *   beside it under the profile's flags.
 *
 * How: the source is staged in a temp dir, where every `lazyImport(spec, import.meta.url)`
 * gets the base `kimi-src:/<its source path>` (which `lib/lazy_import.ts` maps to the bundled
 * file) and every lazily imported package gets an entry re-exporting its namespace; then
 * `deno bundle --code-splitting` bundles `main.ts`, `scripts/launch.ts`, every module in
 * `scripts/lazy_modules.ts` and those package entries.
 *
 * Usage: `deno run -A scripts/bundle.ts [--out=DIR] [--minify]`
 *
 * @module
 */
import {
  BUNDLE_SOURCE_PROTOCOL,
  bundledPackageFile,
  bundledPackageFilesModule,
} from "../lib/lazy_import.ts";
import { LAZY_MODULES, LAZY_PACKAGES, PACKAGE_FILES, PROGRAM_ENTRIES } from "./lazy_modules.ts";
import { lazyListProblemsOf, REPO_ROOT_URL, scanRepository, scanSource } from "./lazy_scan.ts";
import { deferBuiltinImports, patchCreateRequire } from "../lib/prebundle/transforms.ts";

export { deferBuiltinImports, patchCreateRequire };

/** Options of {@link bundle}. */
export interface BundleOptions {
  /** Output directory (default `dist/kimi` in the repository). */
  outDir?: string;
  /** Minify the output. */
  minify?: boolean;
  /** Print `deno bundle`'s output. */
  verbose?: boolean;
}

/** What {@link bundle} wrote. */
export interface BundleResult {
  /** The output directory. */
  outDir: string;
  /** Output files, relative to `outDir`. */
  files: string[];
  /** Total size in bytes. */
  bytes: number;
}

const REPO_ROOT = decodeURIComponent(REPO_ROOT_URL.pathname).replace(/\/$/, "");

/** The directories and files copied into the staging dir. */
const STAGED = ["main.ts", "deno.json", "deno.lock", "lib", "tools", "scripts"];

/** Problems with the lazy-module list for the program's current source (see {@link lazyListProblemsOf}). */
export async function lazyListProblems(): Promise<string[]> {
  return lazyListProblemsOf(await scanRepository(), LAZY_MODULES, LAZY_PACKAGES);
}

/** Every entry point of the bundle, repository-relative (packages as their generated entries). */
export function bundleEntryPoints(): string[] {
  return [
    ...PROGRAM_ENTRIES,
    ...LAZY_MODULES,
    ...LAZY_PACKAGES.map((name) => bundledPackageFile(name).replace(/\.js$/, ".ts")),
  ];
}

/** `src` with the `import.meta.url` base of each lazy call replaced by `kimi-src:/<file>`. */
export function rewriteLazyBases(file: string, src: string): string {
  const offsets = scanSource(file, src)
    .map((c) => c.baseOffset)
    .filter((o): o is number => o !== null)
    .sort((a, b) => b - a);
  let out = src;
  for (const o of offsets) {
    out = `${out.slice(0, o)}${JSON.stringify(`${BUNDLE_SOURCE_PROTOCOL}/${file}`)}${
      out.slice(o + "import.meta.url".length)
    }`;
  }
  return out;
}

async function copyTree(from: string, to: string, rel: string): Promise<void> {
  const info = await Deno.stat(`${from}/${rel}`);
  if (info.isFile) {
    let text = await Deno.readTextFile(`${from}/${rel}`);
    if (rel.endsWith(".ts")) text = rewriteLazyBases(rel, text);
    await Deno.mkdir(`${to}/${rel}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${to}/${rel}`, text);
    return;
  }
  for await (const e of Deno.readDir(`${from}/${rel}`)) {
    if (e.isDirectory || /\.(ts|json)$/.test(e.name)) await copyTree(from, to, `${rel}/${e.name}`);
  }
}

/**
 * The bundler names each npm module by its path in the build machine's Deno cache (in comments
 * and in CommonJS wrapper keys); `npm:<package>/<version>/<file>` says the same without it.
 */
export function stripCachePaths(text: string): string {
  return text.replace(/(?:\.\.\/)+[^\s"'`]*?\/npm\/[^/\s"'`]+\//g, "npm:");
}

const SCRIPT_URL_THROW = 'throw new Error("Unable to determine script URL");';

/**
 * Emscripten code (tree-sitter's runtime) asks for its own script's path at load time, which a
 * bundled ES module has none of; it then gets a placeholder `file:` URL (its wasm comes from
 * `lazyPackageFile`, so nothing is read from there).
 */
export function patchScriptUrl(text: string): string {
  return text.replaceAll(SCRIPT_URL_THROW, 'return "file:///kimi-bundle/lazy_packages/";');
}

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/**
 * Write `lazy_packages/<name>.files.js` for each package of `PACKAGE_FILES`, from the package
 * directory the bundler read it from (named in its output's path comments, relative to `stage`).
 */
async function writePackageFiles(outDir: string, stage: string): Promise<void> {
  for (const [name, files] of Object.entries(PACKAGE_FILES)) {
    const entry = await Deno.readTextFile(`${outDir}/${bundledPackageFile(name)}`);
    const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const m = new RegExp(`// ((?:\\.\\./)*\\S*?/npm/[^/\\s]+/${escaped}/[^/\\s]+/)`).exec(entry);
    if (!m) throw new Error(`cannot find where ${name} was bundled from`);
    const dir = new URL(m[1], `file://${stage}/`).pathname;
    const lines = ["// Generated by scripts/bundle.ts.", "export const files = {"];
    for (const file of files) {
      const bytes = await Deno.readFile(`${dir}${file}`);
      lines.push(`  ${JSON.stringify(file.slice(file.lastIndexOf("/") + 1))}: "${base64(bytes)}",`);
    }
    lines.push("};", "");
    await Deno.writeTextFile(`${outDir}/${bundledPackageFilesModule(name)}`, lines.join("\n"));
  }
}

async function listFiles(dir: string, rel = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${dir}/${rel}`)) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...await listFiles(dir, r));
    else out.push(r);
  }
  return out.sort();
}

/** Bundle kimi into `outDir`. Throws with `deno bundle`'s output when it fails. */
export async function bundle(opts: BundleOptions = {}): Promise<BundleResult> {
  const problems = await lazyListProblems();
  if (problems.length) {
    throw new Error(`the lazy-module list is out of date:\n${problems.join("\n")}`);
  }
  const outDir = opts.outDir ?? `${REPO_ROOT}/dist/kimi`;
  const stage = await Deno.makeTempDir({ prefix: "kimi-bundle-" });
  try {
    for (const entry of STAGED) await copyTree(REPO_ROOT, stage, entry);
    for (const name of LAZY_PACKAGES) {
      await Deno.mkdir(`${stage}/lazy_packages`, { recursive: true });
      await Deno.writeTextFile(
        `${stage}/${bundledPackageFile(name).replace(/\.js$/, ".ts")}`,
        `// Generated by scripts/bundle.ts.\nimport * as ns from ${
          JSON.stringify(name)
        };\nexport { ns };\n`,
      );
    }
    await Deno.remove(outDir, { recursive: true }).catch(() => {});
    const args = [
      "bundle",
      "--quiet",
      "--platform=deno",
      "--code-splitting",
      `--outdir=${outDir}`,
      `--config=${stage}/deno.json`,
      ...(opts.minify ? ["--minify", "--keep-names"] : []),
      ...bundleEntryPoints().map((e) => `${stage}/${e}`),
    ];
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: stage,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const dec = new TextDecoder();
    if (opts.verbose) {
      await Deno.stdout.write(out.stdout);
      await Deno.stderr.write(out.stderr);
    }
    if (!out.success) {
      throw new Error(`deno bundle failed (exit ${out.code}):\n${dec.decode(out.stderr).trim()}`);
    }
    await writePackageFiles(outDir, stage);
    const files = await listFiles(outDir);
    let bytes = 0;
    for (const f of files) {
      const original = await Deno.readTextFile(`${outDir}/${f}`);
      const text = stripCachePaths(
        patchScriptUrl(deferBuiltinImports(patchCreateRequire(original))),
      );
      if (text !== original) await Deno.writeTextFile(`${outDir}/${f}`, text);
      bytes += new TextEncoder().encode(text).length;
      const bare = /(?:from\s*|import\s*\(\s*)["']((?:npm|jsr):[^"']+)["']/.exec(text);
      if (bare) throw new Error(`the bundle still imports ${bare[1]} (in ${f})`);
    }
    const stale = files.find((f) =>
      f.endsWith(".js") && /__deno_internal_createRequire\(import\.meta\.url\)/.test(
        Deno.readTextFileSync(`${outDir}/${f}`),
      )
    );
    if (stale) throw new Error(`deno bundle's require shim changed; patch it (in ${stale})`);
    for (const required of ["main.js", "scripts/launch.js"]) {
      if (!files.includes(required)) throw new Error(`the bundle has no ${required}`);
    }
    return { outDir, files, bytes };
  } finally {
    await Deno.remove(stage, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const outArg = Deno.args.find((a) => a.startsWith("--out="));
  try {
    const r = await bundle({
      outDir: outArg?.slice("--out=".length),
      minify: Deno.args.includes("--minify"),
      verbose: Deno.args.includes("--verbose"),
    });
    console.log(
      `bundle: ${r.files.length} files, ${(r.bytes / 1024 / 1024).toFixed(1)} MB in ${r.outDir} ` +
        `(run: deno run -A ${r.outDir}/main.js)`,
    );
  } catch (err) {
    console.error(`bundle: ${err instanceof Error ? err.message : String(err)}`);
    Deno.exit(1);
  }
}
