/**
 * `deno run --no-prompt --allow-read --allow-env --allow-run scripts/launch.ts [--dry-run]
 * <profile> [kimi args...]`: start `main.ts` under a permission profile.
 *
 * - `review`: read anywhere, write only the share dir (sessions, logs), connect only to the model
 *   host, run only the bundled `rg`.
 * - `workspace`: read anywhere, write the work dir, the additional dirs, the share dir and
 *   `/tmp`, run programs, use the network.
 * - `full`: every permission (`-A`).
 *
 * The launcher computes the flags for this machine and this run (share dir, model host from the
 * config, `rg` path, work dir), then runs `deno run --no-prompt <flags> main.ts ...` with the
 * terminal inherited and exits with its code. `--dry-run` prints the command instead.
 *
 * @module
 */
import { resolve } from "node:path";
import { readProcessEnv, shareDir } from "../lib/config/share_dir.ts";
import { modelHostFromConfig } from "../lib/sandbox/model_host.ts";
import { findRipgrep } from "../lib/search/ripgrep.ts";

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
  /** Absolute path of the bundled `rg`, when present. */
  rgPath: string | null;
  /** Plan files directory (`~/.kimi/plans`, always under HOME), when HOME is known. */
  plansDir?: string | null;
}

/** The Deno permission flags of a profile. */
export function profileFlags(profile: Profile, ctx: ProfileContext): string[] {
  switch (profile) {
    case "review": {
      const flags = ["--allow-read", "--allow-env", `--allow-write=${ctx.shareDir}`];
      if (ctx.modelHost) flags.push(`--allow-net=${ctx.modelHost}`);
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

/** The full `deno` argument list for a profile run. */
export function launchArgs(profile: Profile, ctx: ProfileContext, kimiArgs: string[]): string[] {
  const mainTs = new URL("../main.ts", import.meta.url).pathname;
  return ["run", "--no-prompt", ...profileFlags(profile, ctx), mainTs, ...kimiArgs];
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
  const ctx: ProfileContext = {
    shareDir: share,
    workDir: resolve(cwd, scanned.workDir ?? "."),
    addDirs: scanned.addDirs.map((d) => resolve(cwd, d)),
    modelHost: await modelHostFromConfig({
      shareDir: share,
      configFile: scanned.configFile && resolve(cwd, scanned.configFile),
      modelAlias: scanned.model,
      getEnv: readProcessEnv,
    }),
    rgPath: await findRipgrep(),
    plansDir: readProcessEnv("HOME") ? `${readProcessEnv("HOME")}/.kimi/plans` : null,
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
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
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
