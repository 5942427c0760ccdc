/**
 * `deno task build`: standalone `kimi` executables with `deno compile`, for Linux x64/arm64,
 * macOS x64/arm64 and Windows x64, written to `dist/bin/` with a `SHA256SUMS` file beside them.
 *
 * - The modules and npm packages kimi loads with a literal dynamic `import("…")` are in the
 *   binary: `deno compile` follows those imports, but not under deno.json's
 *   `"unstable": ["lazy-dynamic-imports"]` (it then leaves them out of the binary), so the
 *   build compiles with a copy of deno.json without that setting ({@link compileConfig}). The
 *   binary loads an embedded module when it is imported anyway.
 * - Agents, prompts, skills and tool descriptions are embedded in the program itself
 *   (`lib/assets/embedded.gen.ts`), and so are the built-in tools' parameter JSON Schemas
 *   (`tools/param_schemas.gen.ts`); the build refuses either when stale.
 * - The binary is the `full` profile (`-A`): Deno bakes permission flags into a compiled
 *   binary, and the `review`/`workspace` flags depend on the machine (share dir, model host,
 *   work dir). README.md ("Install") says how to get those profiles from a download.
 *
 * `deno compile` downloads the Deno runtime it embeds (`denort`) from dl.deno.land. Where that is
 * not possible, set `DENORT_BIN` to a denort of this Deno version for the target; with
 * `DENORT_BIN` set, only one target is built (`--target=`, default this machine's).
 *
 * Usage: `deno run -A scripts/build.ts [--target=TRIPLE]... [--out=DIR] [--dry-run]`
 *
 * @module
 */
import { VERSION } from "../lib/version.ts";
import { DENO_V8_FLAGS_ARG } from "../lib/runtime_flags.ts";
import { renderEmbedded } from "./embed_assets.ts";
import { PARAM_SCHEMAS_FILE, updateParamSchemas } from "./param_schemas.ts";

/** The release targets. */
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** A `deno compile` target triple. */
export type Target = typeof TARGETS[number];

const REPO_ROOT = decodeURIComponent(new URL("../", import.meta.url).pathname).replace(/\/$/, "");

/** Where the build writes {@link compileConfig} in the output directory (removed after). */
export const COMPILE_CONFIG = ".deno.compile.json";

/** The unstable setting that makes `deno compile` leave dynamically imported modules out. */
const LAZY_DYNAMIC_IMPORTS = "lazy-dynamic-imports";

/**
 * The text of the config `deno compile` gets: deno.json (`denoJson`, its text) without
 * {@link LAZY_DYNAMIC_IMPORTS}, and with the repository's lock file named, as the copy lives
 * elsewhere.
 */
export function compileConfig(denoJson: string, root: string = REPO_ROOT): string {
  const config = JSON.parse(denoJson);
  const unstable = (config.unstable ?? []).filter((u: string) => u !== LAZY_DYNAMIC_IMPORTS);
  if (unstable.length) config.unstable = unstable;
  else delete config.unstable;
  config.lock = { path: `${root}/deno.lock` };
  delete config.tasks;
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** File name of the binary for a target, e.g. `kimi-x86_64-unknown-linux-gnu` (`.exe` on Windows). */
export function binaryName(target: Target): string {
  return `kimi-${target}${target.includes("windows") ? ".exe" : ""}`;
}

/** The `deno compile` arguments for one target. */
export function compileArgs(
  target: Target,
  outDir: string,
  opts: { root?: string; config: string },
): string[] {
  const root = opts.root ?? REPO_ROOT;
  return [
    "compile",
    "--no-check",
    "--no-prompt",
    "-A",
    DENO_V8_FLAGS_ARG,
    `--config=${opts.config}`,
    `--target=${target}`,
    `--output=${outDir}/${binaryName(target)}`,
    `${root}/main.ts`,
  ];
}

/** The host's target triple, when it is a release target. */
export function hostTarget(): Target | null {
  const t = Deno.build.target;
  return (TARGETS as readonly string[]).includes(t) ? t as Target : null;
}

/** The one line to print when `deno compile` cannot get its runtime, or `null` for other errors. */
export function runtimeProblem(stderr: string, target: Target): string | null {
  const denort = Deno.env.get("DENORT_BIN");
  if (/Could not find denort/i.test(stderr)) {
    return `build: DENORT_BIN=${denort} does not exist; set DENORT_BIN to the denort binary of ` +
      `Deno ${Deno.version.deno} for ${target}.`;
  }
  if (/dl\.deno\.land|denort|Setting up base binary/i.test(stderr)) {
    return `build: deno compile cannot download its runtime (denort ${Deno.version.deno} for ` +
      `${target}) from dl.deno.land here; set DENORT_BIN=/path/to/denort (unzipped from ` +
      `denort-${target}.zip of Deno ${Deno.version.deno}) to build that target offline.`;
  }
  return null;
}

async function sha256Hex(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Options of {@link build}. */
export interface BuildOptions {
  /** Targets to build (default: all; with `DENORT_BIN`, the host's). */
  targets?: Target[];
  /** Output directory (default `dist/bin`). */
  outDir?: string;
  /** Print the commands instead of running them. */
  dryRun?: boolean;
}

/** Build the binaries; resolves with the exit code (messages already printed). */
export async function build(opts: BuildOptions = {}): Promise<number> {
  const embedded = await Deno.readTextFile(`${REPO_ROOT}/lib/assets/embedded.gen.ts`);
  if (embedded !== await renderEmbedded()) {
    console.error("build: lib/assets/embedded.gen.ts is stale: run `deno task embed`.");
    return 1;
  }
  if (!await updateParamSchemas({ check: true })) {
    console.error(`build: ${PARAM_SCHEMAS_FILE} is stale: run \`deno task embed\`.`);
    return 1;
  }
  const outDir = opts.outDir ?? `${REPO_ROOT}/dist/bin`;
  const denort = Deno.env.get("DENORT_BIN");
  if (denort === "") Deno.env.delete("DENORT_BIN");
  let targets = opts.targets ?? [...TARGETS];
  if (denort && !opts.targets) {
    const host = hostTarget();
    if (!host) {
      console.error(`build: DENORT_BIN is set but ${Deno.build.target} is not a release target.`);
      return 1;
    }
    targets = [host];
  }
  if (denort && targets.length > 1) {
    console.error("build: DENORT_BIN names one runtime: build one --target at a time with it.");
    return 1;
  }
  const config = `${outDir}/${COMPILE_CONFIG}`;
  if (opts.dryRun) {
    for (const t of targets) console.log(["deno", ...compileArgs(t, outDir, { config })].join(" "));
    return 0;
  }
  await Deno.mkdir(outDir, { recursive: true });
  await Deno.writeTextFile(
    config,
    compileConfig(await Deno.readTextFile(`${REPO_ROOT}/deno.json`)),
  );
  try {
    return await compileTargets(targets, outDir, config);
  } finally {
    await Deno.remove(config).catch(() => {});
  }
}

async function compileTargets(targets: Target[], outDir: string, config: string): Promise<number> {
  const sums: string[] = [];
  for (const target of targets) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: compileArgs(target, outDir, { config }),
      cwd: REPO_ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    if (!out.success) {
      console.error(
        runtimeProblem(stderr, target) ??
          `build: deno compile failed for ${target}:\n${stderr.trim()}`,
      );
      return 1;
    }
    const name = binaryName(target);
    sums.push(`${await sha256Hex(`${outDir}/${name}`)}  ${name}`);
    console.log(`build: ${outDir}/${name}`);
  }
  await Deno.writeTextFile(`${outDir}/SHA256SUMS`, `${sums.join("\n")}\n`);
  console.log(`build: kimi ${VERSION}, ${targets.length} target(s), sums in ${outDir}/SHA256SUMS`);
  return 0;
}

if (import.meta.main) {
  const targets = Deno.args.filter((a) => a.startsWith("--target=")).map((a) => a.slice(9));
  const unknown = targets.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (unknown.length) {
    console.error(`build: unknown target ${unknown.join(", ")} (one of ${TARGETS.join(", ")})`);
    Deno.exit(2);
  }
  const outArg = Deno.args.find((a) => a.startsWith("--out="));
  Deno.exit(
    await build({
      targets: targets.length ? targets as Target[] : undefined,
      outDir: outArg?.slice("--out=".length),
      dryRun: Deno.args.includes("--dry-run"),
    }),
  );
}
