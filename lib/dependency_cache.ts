/**
 * The first run from a checkout: Deno fetches npm packages the moment a module needs them and
 * draws its `Download …` progress lines and an "Ignored build scripts" box on the terminal —
 * over the shell's screen when a module loads late (the first approval, the first markdown).
 * Before anything else loads, the entry point (and the permission-profile launcher) checks
 * whether every npm package of `deno.json` is in Deno's cache; when one is missing it says so
 * in one line of its own and runs `deno install --quiet` in the checkout, whose output it keeps
 * to itself. Afterwards nothing Deno prints lands inside the UI.
 *
 * Plain TypeScript without dependencies: it runs before any package is cached.
 *
 * @module
 */

/** The line a first start shows while it fetches the dependencies. */
export const FIRST_RUN_LINE = "preparing kimi, first run …";

/** An npm package pinned in `deno.json`. */
export interface PinnedPackage {
  /** Package name (`@scope/name`). */
  name: string;
  /** Exact version. */
  version: string;
}

/** The `npm:` packages of a `deno.json` "imports" map (`npm:x@1.2.3`, `npm:/@a/b@1.0.0/`). */
export function pinnedNpmPackages(denoJson: unknown): PinnedPackage[] {
  const imports = (denoJson as { imports?: unknown } | null)?.imports;
  if (!imports || typeof imports !== "object") return [];
  const out: PinnedPackage[] = [];
  for (const target of Object.values(imports as Record<string, unknown>)) {
    if (typeof target !== "string") continue;
    const m = /^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)\/?$/.exec(target);
    if (m) out.push({ name: m[1], version: m[2] });
  }
  return out;
}

/** Deno's cache directory: `DENO_DIR`, else the platform's default. */
export function denoCacheDir(
  getEnv: (name: string) => string | undefined,
  os: typeof Deno.build.os,
): string | null {
  const dir = getEnv("DENO_DIR");
  if (dir) return dir;
  if (os === "windows") {
    const local = getEnv("LOCALAPPDATA");
    return local ? `${local}\\deno` : null;
  }
  const home = getEnv("HOME");
  if (os === "darwin") return home ? `${home}/Library/Caches/deno` : null;
  const xdg = getEnv("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/deno`;
  return home ? `${home}/.cache/deno` : null;
}

/**
 * The packages of `packages` not in the npm cache under `denoDir`. The cache keeps one
 * directory per registry, `npm/<host>/<registry URL path>/<name>/<version>`; every host
 * directory is looked in, under the path of `registryUrl` (`NPM_CONFIG_REGISTRY`, default
 * npmjs.org whose path is `/`).
 *
 * Synchronous: it runs on every start from a checkout, before anything else, and some forty
 * `stat` calls cost less than as many round trips to Deno's file-system thread pool.
 */
export function missingPackages(
  denoDir: string,
  packages: readonly PinnedPackage[],
  registryUrl?: string,
): PinnedPackage[] {
  let path = "";
  try {
    path = new URL(registryUrl || "https://registry.npmjs.org/").pathname
      .split("/").filter(Boolean).map((s) => `/${decodeURIComponent(s)}`).join("");
  } catch {
    // not a URL: npmjs.org's layout
  }
  const registries: string[] = [];
  try {
    for (const e of Deno.readDirSync(`${denoDir}/npm`)) {
      if (e.isDirectory) registries.push(`${denoDir}/npm/${e.name}${path}`);
    }
  } catch {
    return [...packages];
  }
  const out: PinnedPackage[] = [];
  for (const p of packages) {
    let found = false;
    for (const r of registries) {
      try {
        if (Deno.statSync(`${r}/${p.name}/${p.version}`).isDirectory) {
          found = true;
          break;
        }
      } catch {
        // not under this registry
      }
    }
    if (!found) out.push(p);
  }
  return out;
}

/** Options of {@link prepareDependencies}. */
export interface PrepareOptions {
  /** The checkout (the directory of `main.ts` and `deno.json`). */
  projectDir: string;
  /** Shows a line to the user (stderr). */
  say: (line: string) => void;
  /** Environment (default: the process's, a denied read counting as unset). */
  getEnv?: (name: string) => string | undefined;
}

/** What {@link prepareDependencies} did. */
export type PrepareOutcome =
  /** Every package was cached already (or there is nothing to cache). */
  | "ready"
  /** Packages were missing and `deno install` fetched them. */
  | "prepared"
  /** Packages are missing but this run may not run Deno or read its cache. */
  | "skipped"
  /** `deno install` failed (reported in one line); Deno fetches on demand. */
  | "failed";

/**
 * When npm packages of the checkout's `deno.json` are missing from Deno's cache, show
 * {@link FIRST_RUN_LINE} and fetch them all with `deno install --quiet` (its output kept).
 * Never throws.
 */
export async function prepareDependencies(opts: PrepareOptions): Promise<PrepareOutcome> {
  const getEnv = opts.getEnv ?? processEnv;
  try {
    let denoJson: unknown;
    try {
      // Read synchronously: in a bundle or a compiled binary the file is absent, and the
      // answer should not wait for the file-system thread pool to start.
      denoJson = JSON.parse(Deno.readTextFileSync(`${opts.projectDir}/deno.json`));
    } catch {
      return "ready"; // not a checkout (a bundle or a compiled binary): nothing to fetch
    }
    const packages = pinnedNpmPackages(denoJson);
    if (packages.length === 0) return "ready";
    const cache = denoCacheDir(getEnv, Deno.build.os);
    if (cache === null || !granted({ name: "read", path: cache })) return "skipped";
    const missing = missingPackages(cache, packages, getEnv("NPM_CONFIG_REGISTRY"));
    if (missing.length === 0) return "ready";
    if (!granted({ name: "run", command: Deno.execPath() })) return "skipped";
    opts.say(FIRST_RUN_LINE);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["install", "--quiet"],
      cwd: opts.projectDir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (out.success) return "prepared";
    const why = new TextDecoder().decode(out.stderr).replace(ANSI_SGR, "").trim()
      .split("\n").filter(Boolean).at(-1) ?? `exit code ${out.code}`;
    opts.say(
      `kimi could not fetch its dependencies (${why}); Deno fetches each one when it is ` +
        "first needed.",
    );
    return "failed";
  } catch (err) {
    opts.say(`kimi could not check its dependencies (${(err as Error).message}).`);
    return "failed";
  }
}

/** Colour codes in Deno's error output. */
const ANSI_SGR = new RegExp("\u001b\\[[0-9;]*m", "g");

function granted(desc: Deno.PermissionDescriptor): boolean {
  try {
    return Deno.permissions.querySync(desc).state === "granted";
  } catch {
    return false;
  }
}

function processEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
