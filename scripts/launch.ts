/**
 * `deno run --no-prompt --allow-read --allow-env --allow-run scripts/launch.ts [--dry-run]
 * <profile> [kimi args...]`: start `main.ts` under a permission profile.
 *
 * - `review`: read anywhere, write only the share dir (sessions, logs), connect only to the model
 *   host (and, for `kimi web`, listen on its bind address), run only the bundled `rg`.
 * - `workspace`: read anywhere, write the work dir, the additional dirs, the share dir and
 *   `/tmp`, run programs, use the network.
 * - `full`: every permission (`-A`).
 *
 * The launcher computes the flags for this machine and this run (share dir, model host from the
 * config, `rg` path, work dir), then runs `deno run --no-prompt <config> <flags> main.ts ...`
 * with the terminal inherited and exits with its code. `--dry-run` prints the command instead.
 * It works from a checkout, from the raw source served over http, and from the bundle
 * (`dist/kimi/scripts/launch.js`), starting the `kimi` beside it (see {@link kimiProgram}).
 *
 * @module
 */
import { resolve } from "node:path";
import { readProcessEnv, shareDir } from "../lib/config/share_dir.ts";
import { modelHostFromConfig, oauthHostFromConfig } from "../lib/sandbox/model_host.ts";
import { findRipgrep } from "../lib/search/ripgrep.ts";
import { DENO_V8_FLAGS_ARG } from "../lib/runtime_flags.ts";
import { prepareDependencies } from "../lib/dependency_cache.ts";

/** The permission profiles. */
export const PROFILES = ["review", "workspace", "full"] as const;

/** A permission profile name. */
export type Profile = typeof PROFILES[number];

/** What the flags of a profile depend on. */
export interface ProfileContext {
  /** Absolute share dir. */
  shareDir: string;
  /** Absolute work dir of the run (`--work-dir`, else the current directory). */
  workDir: string;
  /** Additional workspace dirs (`--add-dir`). */
  addDirs: readonly string[];
  /** `host[:port]` of the model API, when the config names one. */
  modelHost: string | null;
  /** `host[:port]` of the OAuth host, when the model's provider uses a login. */
  authHost?: string | null;
  /** Absolute path of the bundled `rg`, when present. */
  rgPath: string | null;
  /** Plan files directory (`~/.kimi/plans`, always under HOME), when HOME is known. */
  plansDir?: string | null;
  /** `kimi web`: the address its server listens on (review lets it listen there only). */
  listenHost?: string | null;
}

/** The Deno permission flags of a profile. */
export function profileFlags(profile: Profile, ctx: ProfileContext): string[] {
  switch (profile) {
    case "review": {
      const flags = ["--allow-read", "--allow-env", `--allow-write=${ctx.shareDir}`];
      const hosts = [ctx.modelHost, ctx.authHost, ctx.listenHost]
        .filter((h): h is string => !!h);
      if (hosts.length) flags.push(`--allow-net=${hosts.join(",")}`);
      if (ctx.rgPath) flags.push(`--allow-run=${ctx.rgPath}`);
      return flags;
    }
    case "workspace": {
      const writable = [
        ...new Set([
          ctx.workDir,
          ...ctx.addDirs,
          ctx.shareDir,
          ...(ctx.plansDir ? [ctx.plansDir] : []),
          "/tmp",
        ]),
      ];
      return [
        "--allow-read",
        "--allow-env",
        `--allow-write=${writable.join(",")}`,
        "--allow-run",
        "--allow-net",
      ];
    }
    case "full":
      return ["-A"];
  }
}

/** The kimi options the flags depend on, read from its command line. */
export interface KimiArgsInfo {
  /** `-w/--work-dir`. */
  workDir?: string;
  /** `--add-dir` (repeatable). */
  addDirs: string[];
  /** `--config-file`. */
  configFile?: string;
  /** `-m/--model`. */
  model?: string;
  /** `kimi web`: the bind address (`-h/--host`, `0.0.0.0` for `-n`, else `127.0.0.1`). */
  webHost?: string;
}

/** Pick the options that matter for the flags out of kimi's arguments. */
export function scanKimiArgs(args: readonly string[]): KimiArgsInfo {
  const info: KimiArgsInfo = { addDirs: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") break;
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = name !== arg ? arg.slice(eq + 1) : undefined;
    const value = (): string | undefined => inline ?? args[++i];
    if (info.webHost !== undefined) {
      // options of `kimi web`
      if (name === "-h" || name === "--host") {
        const v = value();
        if (v) info.webHost = v.includes(":") ? `[${v}]` : v;
      } else if ((name === "-n" || name === "--network") && info.webHost === "127.0.0.1") {
        info.webHost = "0.0.0.0";
      }
      continue;
    }
    if (arg === "web") {
      info.webHost = "127.0.0.1";
      continue;
    }
    switch (name) {
      case "-w":
      case "--work-dir":
        info.workDir = value();
        break;
      case "--add-dir": {
        const v = value();
        if (v) info.addDirs.push(v);
        break;
      }
      case "--config-file":
        info.configFile = value();
        break;
      case "-m":
      case "--model":
        info.model = value();
        break;
    }
  }
  return info;
}

/**
 * The flag form of deno.json's `"unstable": ["lazy-dynamic-imports"]` (a module named by a literal
 * `import()` loads when the call runs), for runs of the source that have no config to carry it.
 */
export const LAZY_DYNAMIC_IMPORTS_FLAG = "--unstable-lazy-dynamic-imports";

/** Where the launched `kimi` comes from, and the flags `deno run` needs to load it. */
export interface KimiProgram {
  /** URL of the entry: `main.ts` beside this launcher's directory, or `main.js` in a bundle. */
  main: string;
  /** Config flags: `--config`/`--import-map` for the source, `--no-config` for the bundle. */
  configFlags: string[];
  /** `--allow-import` for the host serving a remote program (its modules load lazily). */
  importFlags: string[];
}

/**
 * The program this launcher starts, from the launcher's own URL: the source checkout (or the
 * raw source served over http) runs `main.ts` with the repository's `deno.json` as config or
 * import map (an import map carries no settings, so with {@link LAZY_DYNAMIC_IMPORTS_FLAG}), so it
 * works from any directory; the bundle (`dist/kimi/scripts/launch.js`) runs the bundle's `main.js`
 * with no config at all.
 */
export function kimiProgram(launcherUrl: string = import.meta.url): KimiProgram {
  const bundled = launcherUrl.endsWith(".js");
  const main = new URL(bundled ? "../main.js" : "../main.ts", launcherUrl);
  const remote = main.protocol !== "file:";
  const importMap = [`--import-map=${new URL("../deno.json", launcherUrl).href}`];
  const config = [`--config=${decodeURIComponent(new URL("../deno.json", launcherUrl).pathname)}`];
  const configFlags = bundled
    ? ["--no-config"]
    : remote
    ? [...importMap, LAZY_DYNAMIC_IMPORTS_FLAG]
    : config;
  const importFlags = remote ? [`--allow-import=${main.host}`] : [];
  return {
    main: remote ? main.href : decodeURIComponent(main.pathname),
    configFlags,
    importFlags,
  };
}

/** The full `deno` argument list for a profile run. */
export function launchArgs(
  profile: Profile,
  ctx: ProfileContext,
  kimiArgs: string[],
  program: KimiProgram = kimiProgram(),
): string[] {
  const flags = profileFlags(profile, ctx);
  return [
    "run",
    "--no-prompt",
    DENO_V8_FLAGS_ARG,
    ...program.configFlags,
    ...flags,
    ...(flags.includes("-A") ? [] : program.importFlags),
    program.main,
    ...kimiArgs,
  ];
}

function usage(): never {
  console.error(
    "Usage: scripts/launch.ts [--dry-run] <review|workspace|full> [kimi args...]\n" +
      'See "Permission profiles" in README.md.',
  );
  Deno.exit(2);
}

async function main(argv: string[]): Promise<number> {
  // `--dry-run` goes before or right after the profile (`deno task review --dry-run` puts it
  // after); later arguments belong to kimi, which has no such flag
  const at = argv.slice(0, 2).indexOf("--dry-run");
  const dryRun = at >= 0;
  const [profile, ...kimiArgs] = dryRun ? argv.filter((_, i) => i !== at) : argv;
  if (!PROFILES.includes(profile as Profile)) usage();
  let share: string;
  try {
    share = shareDir(readProcessEnv);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
  const scanned = scanKimiArgs(kimiArgs);
  // `deno task` runs in the project dir; INIT_CWD is where the user typed the command.
  const cwd = readProcessEnv("INIT_CWD") || Deno.cwd();
  const hostOpts = {
    shareDir: share,
    configFile: scanned.configFile && resolve(cwd, scanned.configFile),
    modelAlias: scanned.model,
    getEnv: readProcessEnv,
  };
  const ctx: ProfileContext = {
    shareDir: share,
    workDir: resolve(cwd, scanned.workDir ?? "."),
    addDirs: scanned.addDirs.map((d) => resolve(cwd, d)),
    modelHost: await modelHostFromConfig(hostOpts),
    authHost: await oauthHostFromConfig(hostOpts),
    rgPath: await findRipgrep(),
    plansDir: readProcessEnv("HOME") ? `${readProcessEnv("HOME")}/.kimi/plans` : null,
    listenHost: scanned.webHost ?? null,
  };
  const args = launchArgs(profile as Profile, ctx, kimiArgs);
  if (dryRun) {
    console.log(["deno", ...args].join(" "));
    return 0;
  }
  if (profile === "review" && !ctx.modelHost) {
    console.error(
      "launch: no model host found in the config; the review profile runs without network " +
        "access.",
    );
  }
  // A first run from a checkout fetches kimi's npm packages here, quietly, behind one line:
  // the profile may not let kimi run Deno itself, and Deno's download progress would otherwise
  // draw over kimi's screen.
  const checkout = new URL("..", import.meta.url);
  if (checkout.protocol === "file:") {
    await prepareDependencies({
      projectDir: decodeURIComponent(checkout.pathname).replace(/\/$/, ""),
      say: (line) => console.error(line),
      getEnv: readProcessEnv,
    });
  }
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    // kimi names the profile when a tool it leaves out is called
    env: { KIMI_PERMISSION_PROFILE: profile },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  // Ctrl-C reaches the child through the terminal; the launcher just waits for it.
  const onTerm = () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
  };
  const onInt = () => {};
  if (Deno.build.os !== "windows") {
    Deno.addSignalListener("SIGTERM", onTerm);
    Deno.addSignalListener("SIGINT", onInt);
  }
  const status = await child.status;
  if (Deno.build.os !== "windows") {
    Deno.removeSignalListener("SIGTERM", onTerm);
    Deno.removeSignalListener("SIGINT", onInt);
  }
  return status.code;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
